"""The body deadlines of an HTTP app's requests, kept by one sweeper task instead of a timer each.

Most request bodies arrive with their head, so a timer per request (set, then cancelled a few
microseconds later) was pure cost on every call. Here a request whose body is still arriving is
entered in a dict with its deadline, and left as soon as the body is in; one sweeper task, running
while requests keep coming, wakes every :attr:`BodyDeadlines.resolution` seconds and times out the
requests past their deadline. The timeout is the same for every request, so the dict, in the order
requests were entered, is also in the order of their deadlines: the sweeper stops at the first one
still due later.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Protocol

import anyio

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

SWEEPER_NAME = "plainmcp-body-deadline-sweeper"


class Waiting(Protocol):
    """A request waiting for its body."""

    def body_deadline_passed(self) -> None: ...


class BodyDeadlines:
    """Times out requests whose body takes longer than ``timeout`` seconds, give or take
    :attr:`resolution`. Works while :attr:`task_group` is set (the app's lifespan sets it)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        #: How late past its deadline a request may be timed out.
        self.resolution = min(1.0, timeout / 8)
        self.task_group: TaskGroup | None = None
        self._waiting: dict[Waiting, float] = {}
        self._added = False  # since the sweeper last woke
        self._sweeping = False

    def add(self, request: Waiting) -> bool:
        """Start the clock of ``request``'s body. False when no sweeper can run (not inside the
        app's lifespan): the caller then keeps a deadline of its own."""
        if self.task_group is None:
            return False
        self._waiting[request] = time.monotonic() + self.timeout
        self._added = True
        if not self._sweeping:
            self.task_group.start_soon(self._sweep, name=SWEEPER_NAME)
            self._sweeping = True
        return True

    def drop(self, request: Waiting) -> None:
        """The body is in (or the request is over): stop its clock."""
        self._waiting.pop(request, None)

    async def _sweep(self) -> None:
        # It ends only after a whole period in which no request was entered: under load it
        # stays, and a task is not started again for nearly every request.
        try:
            while self._added or self._waiting:
                self._added = False
                await anyio.sleep(self.resolution)
                now = time.monotonic()
                while self._waiting:
                    request = next(iter(self._waiting))
                    if self._waiting[request] > now:
                        break
                    del self._waiting[request]
                    request.body_deadline_passed()
        finally:
            self._sweeping = False
