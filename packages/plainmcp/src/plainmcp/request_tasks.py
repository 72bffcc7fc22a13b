"""The tasks a session runs its incoming requests in: one per request, tied to the session's life.

Under asyncio (where every plainmcp transport runs) a request task is a plain asyncio task.
Spawning one through an anyio task group costs about 9 us more (a handle, a cancel scope and the
group's bookkeeping per task): a third of all the server's work for a small ``tools/call`` over
stdio. The group's guarantees are kept by its owner and by the tasks themselves:

- the owner calls :meth:`RequestTasks.aclose` before the group's block ends, however it ends
  (in a ``finally``): every task still running is cancelled, and ``aclose`` returns once all have
  finished, as the group would wait for its children;
- an exception escaping a task is raised in the group, exactly as if the task were the group's
  own child (it cancels the rest and reaches whoever awaits the group).

Each task starts in a copy of the context it was started from, as a group's child would. Under
another anyio backend, and after ``aclose``, the group spawns the tasks itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

import anyio
from anyio.abc import TaskGroup


class RequestTasks:
    """Start coroutines as tasks that live no longer than ``group``'s block.

    Create it inside the group's ``async with`` block, from a task of the group's backend.
    """

    def __init__(self, group: TaskGroup) -> None:
        self._group = group
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loop = _running_asyncio_loop()  # None: not asyncio, the group does the work

    def start_soon(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any, name: str) -> None:
        if self._loop is None:
            self._group.start_soon(func, *args, name=name)
            return
        task = self._loop.create_task(func(*args), name=name)
        self._tasks.add(task)
        task.add_done_callback(self._finished)

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and (failure := task.exception()) is not None:
            self._group.start_soon(_raise, failure, name="plainmcp-request-failure")

    async def aclose(self) -> None:
        """Cancel the tasks still running and wait until every one has finished (shielded: also
        when the caller is being cancelled). Tasks started afterwards are the group's."""
        self._loop = None
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
