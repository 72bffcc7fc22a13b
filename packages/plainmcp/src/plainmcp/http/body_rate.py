"""A minimum rate for request bodies still arriving, so a dripped body cannot hold a slot for long.

The app's body deadline (``body_timeout``, 30 s by default) bounds a whole body; a client dripping
a byte a second would still hold its connection slot all that time, and a few hundred such
connections hold every slot. Here each connection whose body is still arriving must bring at
least :data:`MIN_BYTES_PER_SECOND` bytes a second over every :data:`WINDOW` seconds; one that does
not gets ``408`` (or, once its response has begun, is reset) and its slot is free. A window in
which the server itself stopped reading (uvicorn's flow control, while the application has not
asked for more of the body) or the client waits for ``100 Continue`` does not count. A body sent
whole (what every real client does) is never measured.

One timer per server, running only while some body is arriving, checks every connection at
once (event-loop thread only).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Protocol

#: Seconds over which a body's progress is measured.
WINDOW = 4.0
#: The least a body still arriving must bring, per second, averaged over a WINDOW.
MIN_BYTES_PER_SECOND = 1024
_TICK = 1.0


class Arriving(Protocol):
    """A connection whose request body is still arriving."""

    cycle: Any  # uvicorn's request cycle: ``more_body`` is False once the parser has the whole body
    flow: Any  # uvicorn's flow control: ``read_paused`` while the server is not reading

    def body_too_slow(self) -> None: ...


class BodyRate:
    """The connections with a body arriving, and the one timer that checks them."""

    def __init__(self, window: float = WINDOW, min_bytes_per_second: int = MIN_BYTES_PER_SECOND) -> None:
        self.window = window
        self.min_bytes = int(min_bytes_per_second * window)
        self._arriving: dict[Arriving, list[Any]] = {}  # connection -> [cycle, window start, bytes]
        self._timer: asyncio.TimerHandle | None = None

    def started(self, connection: Arriving, loop: asyncio.AbstractEventLoop) -> None:
        """A head is complete and its body is not: measure the body from now."""
        self._arriving[connection] = [connection.cycle, time.monotonic(), 0]
        if self._timer is None:
            self._timer = loop.call_later(_TICK, self._check, loop)

    def received(self, connection: Arriving, size: int) -> None:
        entry = self._arriving.get(connection)
        if entry is not None:
            entry[2] += size

    def forget(self, connection: Arriving) -> None:
        self._arriving.pop(connection, None)

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        self._timer = None
        now = time.monotonic()
        for connection, entry in list(self._arriving.items()):
            cycle, since, size = entry
            if connection.cycle is not cycle or not cycle.more_body:
                del self._arriving[connection]  # the body is in (or the request is over)
            elif (connection.flow is not None and connection.flow.read_paused) or getattr(
                cycle, "waiting_for_100_continue", False
            ):
                # We are not reading, or the client waits for our "100 Continue": not its fault.
                entry[1], entry[2] = now, 0
            elif now - since >= self.window:
                if size < self.min_bytes:
                    del self._arriving[connection]
                    connection.body_too_slow()
                else:
                    entry[1], entry[2] = now, 0
        if self._arriving:
            self._timer = loop.call_later(_TICK, self._check, loop)
