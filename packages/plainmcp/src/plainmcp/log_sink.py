"""Log lines to a stream that may stop being read, written by a thread of their own; and log lines
made without a :class:`logging.LogRecord` (:func:`log_fields`).

A server's stderr is a pipe read by whoever launched it: a client, a supervisor, a terminal. Writing
each line where it is logged costs a system call per line on the event loop's thread, and a reader
that stops reading blocks that thread, and with it every client. A :class:`LineSink` takes lines into
a bounded buffer instead (no system call, never blocking), and a daemon thread writes them out:

- within :data:`INTERVAL` seconds of the first line of a batch, at once for an ``urgent`` line
  (the handler marks warnings and errors so) or a buffer past :data:`HIGH_WATER` characters;
- on :meth:`LineSink.flush`, which :func:`logging.shutdown` calls at exit (a normal exit, SIGTERM
  and SIGINT, which every plainmcp server turns into one, and a forked worker's end): it waits for
  the writer, at most ``timeout`` seconds, so a reader that never reads again cannot hang the exit.

Memory is bounded: the buffer holds at most ``limit`` characters (plus a small allowance per line);
past it lines are dropped and counted, and the first write after that says how many were lost. The
writer may hold one more buffer's worth in a write the reader does not take.

What can be lost: on SIGKILL (or ``os._exit`` without :func:`logging.shutdown`, or the interpreter
crashing) the lines of the last :data:`INTERVAL` seconds, which were still in this process's memory;
with a reader that stopped, what does not fit in the buffer (counted, and said). Lines reach the
file descriptor whole and in order; something else written to the same stream directly (an uncaught
exception's traceback printed by Python) may come before log lines logged earlier than it.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any, Protocol, TextIO

#: Seconds a line may wait in the buffer before the writer takes it.
INTERVAL = 0.05
#: Characters in the buffer past which the writer is woken at once.
HIGH_WATER = 64 * 1024
#: Characters the buffer holds at most; lines past it are dropped (and counted).
LIMIT = 1024 * 1024
#: What one buffered line costs beyond its characters (the string object), counted against LIMIT.
_PER_LINE = 64

_sinks: weakref.WeakSet[LineSink] = weakref.WeakSet()


class LineSink:
    """Writes lines (without their newline) to ``stream``'s file descriptor from a thread of its own.

    Args:
        stream: a text stream; its file descriptor is written directly (its ``encoding``, with
            backslash escapes for what it cannot encode). A stream without one (a ``StringIO``) is
            written through ``write`` and ``flush`` instead, by the same thread.
        limit: characters the buffer holds at most.
        interval: seconds a line may wait before it is written.
        dropped_line: the line that says ``n`` lines were dropped (in the handler's format).
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        limit: int = LIMIT,
        interval: float = INTERVAL,
        dropped_line: Callable[[int], str] | None = None,
    ) -> None:
        self.stream = stream
        self.limit = limit
        self.interval = interval
        self.dropped_line = dropped_line or (lambda count: f"{count} log lines dropped: the stream was not read")
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        try:
            self.fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):
            self.fd = None
        self._reset()
        _sinks.add(self)

    def _reset(self) -> None:
        """Fresh state: at start, and in a forked child (whose copy of the parent's buffer the parent writes)."""
        self._lock = threading.Lock()
        self._done = threading.Condition(self._lock)
        self._wake = threading.Event()
        self._lines: list[str] = []
        self._size = 0
        self._dropped = 0
        self._urgent = False
        self._signaled = False  # the wake event is set and the writer has not seen it yet
        self._accepted = 0  # lines taken into the buffer, ever
        self._written = 0  # of those, lines the writer has finished with (written or lost to a closed stream)
        self._thread: threading.Thread | None = None

    def put(self, line: str, *, urgent: bool = False) -> None:
        """Queue ``line`` for writing; never blocks on the stream. A full buffer drops it (counted)."""
        with self._lock:
            cost = len(line) + _PER_LINE
            if self._size + cost > self.limit:
                self._dropped += 1
                return
            first = not self._lines
            self._lines.append(line)
            self._size += cost
            self._accepted += 1
            if self._thread is None:
                self._start()
            if urgent:
                self._urgent = True
            # One wake per need, not one per line: setting an event the writer has not yet seen
            # costs the caller a lock and a notify for nothing (and a busy writer the GIL).
            wake = (first or urgent or self._size >= HIGH_WATER) and not self._signaled
            if wake:
                self._signaled = True
        if wake:
            self._wake.set()

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until every line put so far is written, at most ``timeout`` seconds. False when the
        stream did not take them in time (a reader that stopped reading)."""
        with self._lock:
            if self._thread is None or self._written >= self._accepted:
                return True
            goal = self._accepted
            self._urgent = self._signaled = True
            self._wake.set()
            return self._done.wait_for(lambda: self._written >= goal, timeout)

    # ----------------------------------------------------------------------------- the writer

    def _start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="plainmcp-log-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            with self._lock:
                self._seen()
                hurry = self._urgent or self._size >= HIGH_WATER
            if not hurry:
                self._wake.wait(self.interval)  # let the batch grow; an urgent line cuts the wait short
                with self._lock:
                    self._seen()
            with self._lock:
                lines, self._lines, self._size = self._lines, [], 0
                dropped, self._dropped = self._dropped, 0
                self._urgent = False
            if dropped:
                lines.append(self.dropped_line(dropped))
            if lines:  # a flush may wake the writer after it took everything
                self._write("\n".join(lines) + "\n")
            with self._lock:
                self._written += len(lines) - (1 if dropped else 0)
                self._done.notify_all()

    def _seen(self) -> None:
        """The writer took note of the wake event (called with the lock held)."""
        self._signaled = False
        self._wake.clear()

    def _write(self, text: str) -> None:
        try:
            if self.fd is None:
                self.stream.write(text)
                self.stream.flush()
                return
            data = memoryview(text.encode(self.encoding, "backslashreplace"))
            while data:
                data = data[os.write(self.fd, data) :]
        except (OSError, ValueError):
            pass  # the reader is gone (EPIPE) or the stream closed: there is nowhere left to say so


class FieldsFormatter(Protocol):
    """A formatter that also makes the line of a record from its parts (:mod:`plainmcp.logs`' do)."""

    def format_fields(self, created: float, levelno: int, name: str, message: str, fields: dict[str, Any]) -> str:
        """The line ``format`` writes for a record of these values, ``fields`` its ``extra``."""
        ...


class LineHandler(logging.Handler):
    """A handler whose records become lines (``put_line``), and that takes lines made without a
    record (:func:`log_fields`) when its formatter can make them (``format_fields``)."""

    def put_line(self, line: str, levelno: int) -> None:
        raise NotImplementedError

    def put_fields(
        self, created: float, levelno: int, name: str, msg: str, args: tuple[Any, ...], fields: dict[str, Any]
    ) -> None:
        """Write the line of a record of these values without the record (here: made at once)."""
        formatter: FieldsFormatter = self.formatter  # type: ignore[assignment]  # checked by takes()
        self.put_line(formatter.format_fields(created, levelno, name, msg % args, fields), levelno)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self.put_line(line, record.levelno)

    def takes(self, name: str, levelno: int) -> bool | None:
        """Whether a record of logger ``name`` at ``levelno`` would be written here; None when only a
        real record will do (a filter without ``passes(name, levelno)``, a formatter without
        ``format_fields``). Remembered until the handler's level, filters or formatter change
        through their setters."""
        key = (name, levelno)
        cache = self.__dict__.setdefault("_takes_cache", {})
        if key not in cache:
            cache[key] = self._takes(name, levelno)
        return cache[key]

    def setLevel(self, level: int | str) -> None:
        self.__dict__.pop("_takes_cache", None)
        super().setLevel(level)

    def addFilter(self, filter: Any) -> None:
        self.__dict__.pop("_takes_cache", None)
        super().addFilter(filter)

    def removeFilter(self, filter: Any) -> None:
        self.__dict__.pop("_takes_cache", None)
        super().removeFilter(filter)

    def setFormatter(self, fmt: logging.Formatter | None) -> None:
        self.__dict__.pop("_takes_cache", None)
        super().setFormatter(fmt)

    def _takes(self, name: str, levelno: int) -> bool | None:
        if not hasattr(self.formatter, "format_fields"):
            return None
        if levelno < self.level:
            return False
        for cap in self.filters:
            passes = getattr(cap, "passes", None)
            if passes is None:
                return None
            if not passes(name, levelno):
                return False
        return True


def log_fields(logger: logging.Logger, level: int, msg: str, args: tuple[Any, ...], fields: dict[str, Any]) -> None:
    """Log as ``logger.log(level, msg, *args, extra=fields)`` does, the same line, but without a
    :class:`logging.LogRecord` when every handler the record would reach is a :class:`LineHandler`
    that can make it and no logger on its way has a filter: the line is made from these values and
    handed to each handler. The HTTP access line, once per request, takes this path."""
    if not logger.isEnabledFor(level):
        return
    takers = _line_takers(logger, level)
    if takers is None:
        logger.log(level, msg, *args, extra=fields, stacklevel=2)
        return
    created = time.time()
    for handler in takers:
        handler.put_fields(created, level, logger.name, msg, args, fields)


def _line_takers(logger: logging.Logger, level: int) -> list[LineHandler] | None:
    """The handlers that would write a record of ``logger`` at ``level``, or None when only a real
    record will do (a logger's filter, another kind of handler, or none at all: the last resort)."""
    takers: list[LineHandler] = []
    handled = False
    current: logging.Logger | None = logger
    while current is not None:
        if current.filters:
            return None
        for handler in current.handlers:
            if not isinstance(handler, LineHandler):
                return None
            takes = handler.takes(logger.name, level)
            if takes is None:
                return None
            handled = True
            if takes:
                takers.append(handler)
        current = current.parent if current.propagate else None
    return takers if handled else None


def _after_fork_in_child() -> None:
    for sink in list(_sinks):
        sink._reset()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
