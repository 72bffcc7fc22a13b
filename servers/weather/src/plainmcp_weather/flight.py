"""Single flight: concurrent calls for the same key share one execution.

Twenty models asking for the weather in one place at once should cost the upstream one request,
not twenty. The first caller for a key (the *leader*) runs the work in its own task; callers that
arrive while it runs wait for its outcome: its value, or its exception (so a failing upstream is
asked once, not once per waiter).

Callers can also *watch* the work while they wait (:meth:`SingleFlight.run`'s ``watcher``): the work
announces what it is doing (a retry it waits for) and every caller waiting on it hears it, the leader
and those who joined later alike, so each can tell its own client.

Cancellation stays local. A waiter that is cancelled just stops waiting. A leader that is
cancelled stops the work itself (nothing runs on that nobody asked for), and the waiters do not
inherit its cancellation: the next one becomes the leader and runs the work again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

import anyio

logger = logging.getLogger(__name__)

#: Told what the work announces (see :meth:`SingleFlight.announce`).
Watcher = Callable[[Any], Awaitable[None]]


class _Flight:
    __slots__ = ("done", "error", "finished", "value", "watchers")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.finished = False  # True once the work returned or raised an Exception (not cancelled)
        self.value: Any = None
        self.error: Exception | None = None
        self.watchers: list[Watcher] = []


class SingleFlight:
    """Runs ``work`` at most once at a time per key. ``runs`` counts executions started, for tests."""

    def __init__(self) -> None:
        self._flights: dict[Hashable, _Flight] = {}
        self.runs = 0

    def __len__(self) -> int:
        """Keys in flight now."""
        return len(self._flights)

    async def announce(self, key: Hashable, event: Any) -> None:
        """Tell every caller waiting on ``key``'s work about ``event`` (the work calls this). A
        watcher that fails is logged and skipped: telling a client must never fail the work."""
        flight = self._flights.get(key)
        for watcher in list(flight.watchers) if flight is not None else ():
            try:
                await watcher(event)
            except Exception:
                logger.debug("a watcher of %r failed", key, exc_info=True)

    async def run(self, key: Hashable, work: Callable[[], Awaitable[Any]], watcher: Watcher | None = None) -> Any:
        """``await work()``, or the outcome of the call for ``key`` already under way; ``watcher``
        hears what the work announces while this caller waits for it.

        Raises:
            Exception: whatever ``work`` raised, in this caller or in the leader it waited for.
        """
        while True:
            flight = self._flights.get(key)
            if flight is None:
                return await self._lead(key, work, watcher)
            if watcher is not None:
                flight.watchers.append(watcher)
            try:
                await flight.done.wait()
            finally:
                if watcher is not None:
                    flight.watchers.remove(watcher)
            if not flight.finished:
                continue  # the leader was cancelled before an outcome: one of us leads now
            error, value = flight.error, flight.value
            del flight  # as in _lead: no cycle through this frame
            if error is None:
                return value
            try:
                # The same exception object reaches every waiter; drop the leader's traceback.
                raise error.with_traceback(None)
            finally:
                del error

    async def _lead(self, key: Hashable, work: Callable[[], Awaitable[Any]], watcher: Watcher | None) -> Any:
        flight = _Flight()
        if watcher is not None:
            flight.watchers.append(watcher)
        self._flights[key] = flight
        self.runs += 1
        try:
            flight.value = await work()
            flight.finished = True
            return flight.value
        except Exception as error:
            flight.error = error
            flight.finished = True
            raise
        finally:
            del self._flights[key]
            flight.done.set()
            # This frame must not hold the flight once it ends: flight -> error -> traceback -> this
            # frame would be a cycle, keeping the work's frames (a parsed upstream body among their
            # locals) alive until the garbage collector happens to run.
            del flight
