"""The tasks a session runs its incoming requests in: one per request, tied to the session's life.

Under asyncio (where every plainmcp transport runs) a request task is a plain asyncio task.
Spawning one through an anyio task group costs about 9 us more (a handle, a cancel scope and the
group's bookkeeping per task): a third of all the server's work for a small ``tools/call`` over
stdio. The group's guarantees are kept by one anyio task in the group, the *keeper*, which owns
the plain tasks:

- when the group is cancelled (the session ends or is cancelled), the keeper cancels every task
  still running and the group does not finish until they have;
- an exception escaping a task is raised in the group, exactly as if the task were the group's
  own child (it cancels the rest and reaches whoever awaits the group).

Each task starts in a copy of the context it was started from, as a group's child would. Under
another anyio backend the group spawns the tasks itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup


class RequestTasks:
    """Start coroutines as tasks that live no longer than ``group``.

    Create it inside the group's ``async with`` block, from a task of the group's backend.
    """

    def __init__(self, group: TaskGroup) -> None:
        self._group = group
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop = _running_asyncio_loop()  # None: not asyncio, the group does the work
        self._kept = False
        if self._loop is not None:
            self._kept = True
            group.start_soon(self._keep, name="plainmcp-request-keeper")

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: str) -> None:
        if self._loop is None or not self._kept:
            self._group.start_soon(func, *args, name=name)
            return
        task = self._loop.create_task(func(*args), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (failure := task.exception()) is not None:
            self._group.start_soon(_raise, failure, name="plainmcp-request-failure")

    async def _keep(self) -> None:
        try:
            await anyio.sleep_forever()
        finally:
            self._kept = False  # from here on the group spawns (and refuses once it has ended)
            for task in self._tasks:
                task.cancel()
            with anyio.CancelScope(shield=True):
                while self._tasks:
                    await asyncio.wait(set(self._tasks))


def _running_asyncio_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


async def _raise(failure: BaseException) -> None:
    raise failure
