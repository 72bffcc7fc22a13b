"""One socket write for what a connection writes in one step of the event loop.

uvicorn writes a response in two calls to its transport: the status line and headers when the
application sends ``http.response.start``, then the body. Each call is a ``send`` system call (the
transport writes at once when its buffer is empty), so a small JSON answer costs two system calls
and two TCP segments. On the servers here that second call was about a tenth of a request's CPU
time (``bench/http_bench.py``). :class:`CoalescedWrites` sits between uvicorn's protocol and the
real transport: writes made in one step are joined and handed to the transport once, by a callback
the loop runs right after the step, so nothing waits longer than one turn of the loop.

Its promises, so that the protocol above sees the transport it expects:

- Bytes reach the transport whole and in order; ``close`` and ``write_eof`` hand over what is
  pending first; ``abort`` drops it, as the transport's own abort drops its buffer.
- Memory stays bounded: once :data:`MAX_PENDING` bytes are pending they go out at once, so the
  transport's own flow control (``pause_writing``, which uvicorn waits on) still holds a producer
  that never yields.
- ``get_write_buffer_size`` counts the pending bytes too; everything else is the transport's.
- Bytes still pending when the transport closed under them (the peer went away in the same step) are
  dropped, as the transport drops what it could not send.
"""

from __future__ import annotations

import asyncio
from typing import Any

#: Pending bytes past which a write goes to the transport at once instead of waiting for the step's end.
MAX_PENDING = 64 * 1024


class CoalescedWrites:
    """Wraps ``transport`` (an :class:`asyncio.WriteTransport`); writes made before the loop's next
    turn are joined into one ``transport.write``."""

    __slots__ = ("transport", "_loop", "_pending", "_size")

    def __init__(self, transport: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self._loop = loop
        self._pending: list[bytes] | None = None  # None: nothing pending and no flush scheduled
        self._size = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._pending is None:
            self._pending = [bytes(data)]
            self._size = len(data)
            self._loop.call_soon(self._flush)
        else:
            self._pending.append(bytes(data))
            self._size += len(data)
        if self._size >= MAX_PENDING:
            self._flush()

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def _flush(self) -> None:
        """Hand what is pending to the transport (the scheduled callback, or sooner); a no-op when
        nothing is, so the callback of a flush already done costs nothing."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        self._size = 0
        if self.transport.is_closing():
            # The connection went away within the step (a peer reset): there is nowhere to write, and
            # uvloop's transport would raise, in a loop callback, where it is only an error line.
            return
        self.transport.write(pending[0] if len(pending) == 1 else b"".join(pending))
        # A later write in this step schedules a new callback; the one already queued finds
        # nothing pending or takes the new bytes, both in order.

    def close(self) -> None:
        self._flush()
        self.transport.close()

    def write_eof(self) -> None:
        self._flush()
        self.transport.write_eof()

    def abort(self) -> None:
        self._pending = None
        self._size = 0
        self.transport.abort()

    def get_write_buffer_size(self) -> int:
        return int(self.transport.get_write_buffer_size()) + self._size

    def __getattr__(self, name: str) -> Any:
        # is_closing, get_extra_info, pause_reading, resume_reading, set_write_buffer_limits, ...
        return getattr(self.transport, name)
