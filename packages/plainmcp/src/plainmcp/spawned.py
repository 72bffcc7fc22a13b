"""The stderr of a stdio server the client spawned: where its lines go, and the last ones kept.

A server explains itself on stderr (its log, or Python's traceback when it cannot even start), so
the client must not swallow it. Where the lines go is the ``stderr`` choice of
:func:`plainmcp.connect_stdio`:

- ``"auto"`` (the default): to the ``plainmcp.stdio.server.<command>`` logger when the program's
  logging shows that logger's INFO lines (a handler is configured and INFO is enabled), otherwise
  straight to this process's stderr as they come, as the official SDK's client does;
- ``"log"``: always to that logger, at INFO;
- ``"discard"``: nowhere;
- a text stream (``sys.stderr``, an open file): written there, one line at a time.

Whatever the choice, :class:`StderrTail` keeps the last lines, so that a server that exits before
it answers is reported as :class:`ServerExited`, naming its exit code and its last words.
"""

from __future__ import annotations

import logging
import sys
from collections import deque
from collections.abc import Callable
from typing import Any, TextIO

import anyio
from anyio.abc import ByteReceiveStream

from .errors import ErrorCode, RequestFailed

TAIL_LINES = 20
MAX_LINE_BYTES = 16 * 1024  # a server writing without newlines cannot grow the client: longer lines are split

Sink = Callable[[str], None]


class ServerExited(RequestFailed):
    """The spawned server exited before it answered (usually: it could not start).

    ``returncode`` is its exit status (negative: the signal that ended it); ``stderr_lines`` its
    last lines on stderr, which the message quotes after ``summary`` (the first sentence).
    """

    def __init__(self, name: str, returncode: int, stderr_lines: list[str]) -> None:
        how = f"was killed by signal {-returncode}" if returncode < 0 else f"exited with code {returncode}"
        self.summary = message = f"the server ({name}) {how} before it answered"
        if stderr_lines:
            message += "; its last lines on stderr:\n" + "\n".join(f"  {line}" for line in stderr_lines)
        else:
            message += " (it wrote nothing on stderr)"
        super().__init__(ErrorCode.REQUEST_TIMEOUT, message, {"exitCode": returncode})
        self.returncode = returncode
        self.stderr_lines = stderr_lines


def stderr_sink(stderr: str | TextIO, name: str) -> Sink:
    """Where the lines of server ``name`` go, for a ``stderr`` choice (see the module docstring).
    Raises ValueError for an unknown choice."""
    server_log = logging.getLogger(f"plainmcp.stdio.server.{name}")
    if stderr == "auto":
        shown = server_log.isEnabledFor(logging.INFO) and server_log.hasHandlers()
        stderr = "log" if shown else sys.stderr
    if stderr == "log":
        return lambda line: server_log.info("%s", line)
    if stderr == "discard":
        return lambda line: None
    if isinstance(stderr, str):
        raise ValueError(f"stderr must be 'auto', 'log', 'discard' or a text stream, not {stderr!r}")
    stream: Any = stderr

    def write(line: str) -> None:
        try:
            stream.write(line + "\n")
            stream.flush()
        except (OSError, ValueError):  # our own stderr closed: the server's lines have nowhere to go
            pass

    return write


class StderrTail:
    """Reads a server's stderr to its end: each line to ``sink``, the last ``lines`` kept."""

    def __init__(self, sink: Sink, lines: int = TAIL_LINES) -> None:
        self.sink = sink
        self.lines: deque[str] = deque(maxlen=lines)
        self.ended = anyio.Event()

    def _line(self, raw: bytes) -> None:
        for start in range(0, max(len(raw), 1), MAX_LINE_BYTES):
            line = raw[start : start + MAX_LINE_BYTES].decode("utf-8", "replace").rstrip("\r\n")
            self.lines.append(line)
            self.sink(line)

    async def pump(self, source: ByteReceiveStream) -> None:
        pending = b""
        try:
            async for chunk in source:
                *complete, pending = (pending + chunk).split(b"\n")
                for raw in complete:
                    self._line(raw)
                while len(pending) > MAX_LINE_BYTES:
                    self._line(pending[:MAX_LINE_BYTES])
                    pending = pending[MAX_LINE_BYTES:]
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        finally:
            if pending.strip():
                self._line(pending)
            self.ended.set()

    async def exited(self, process: Any, name: str, wait: float = 1.0) -> ServerExited | None:
        """A :class:`ServerExited` for ``process`` if it ends within ``wait`` seconds (with its
        stderr read to the end), else None: a server that merely closed its output is still running."""
        with anyio.move_on_after(wait):
            await process.wait()
            await self.ended.wait()
        if process.returncode is None:
            return None
        return ServerExited(name, process.returncode, list(self.lines))
