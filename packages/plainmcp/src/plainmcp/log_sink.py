"""Log lines to a stream that may stop being read, written by a thread of their own; and log lines
made later, without a :class:`logging.LogRecord` (:func:`log_later`).

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
import select
import stat
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
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
            self._regular_file = stat.S_ISREG(os.fstat(self.fd).st_mode)
        except (AttributeError, OSError, ValueError):
            self.fd, self._regular_file = None, False
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
        self._writable: Any = None  # a poll object on the descriptor, made at the first put_batch
        self._direct = 0  # lines put_batch wrote itself, ever

    def put(self, line: str, *, urgent: bool = False) -> None:
        """Queue ``line`` for writing; never blocks on the stream. A full buffer drops it (counted)."""
        self.put_many((line,), urgent=urgent)

    def put_many(self, lines: Sequence[str], *, urgent: bool = False) -> None:
        """:meth:`put` for each of ``lines``, in order, under one lock."""
        with self._lock:
            first = not self._lines
            for line in lines:
                cost = len(line) + _PER_LINE
                if self._size + cost > self.limit:
                    self._dropped += 1
                    continue
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

    def put_batch(self, lines: Sequence[str], *, urgent: bool = False) -> None:
        """Write ``lines`` at once from the caller's thread as far as the stream takes them without
        blocking, and :meth:`put_many` the rest. For a batch made on the event loop: a write on the loop
        costs less than waking the writer thread, which then competes for the interpreter with the loop.

        Only when no line is waiting or being written before them (the order holds). A regular file
        takes them in one write; a pipe, a terminal or a socket in writes of at most ``PIPE_BUF`` bytes,
        each after ``poll`` said the descriptor has room (such a write does not block)."""
        with self._lock:
            if self.fd is not None and not self._lines and self._written == self._accepted:
                written = self._write_ready(lines)
                self._direct += written
                lines = lines[written:]
        if lines:
            self.put_many(lines, urgent=urgent)

    def _write_ready(self, lines: Sequence[str]) -> int:
        """Write the first lines that the descriptor takes without blocking; how many (lock held)."""
        assert self.fd is not None
        try:
            if self._regular_file:
                os.write(self.fd, ("\n".join(lines) + "\n").encode(self.encoding, "backslashreplace"))
                return len(lines)
            if self._writable is None:
                self._writable = select.poll()
                self._writable.register(self.fd, select.POLLOUT)
            done = 0
            while done < len(lines):
                chunk: list[bytes] = []
                size, taken = 0, done
                while taken < len(lines):
                    data = lines[taken].encode(self.encoding, "backslashreplace") + b"\n"
                    if chunk and size + len(data) > select.PIPE_BUF:
                        break
                    chunk.append(data)
                    size += len(data)
                    taken += 1
                if size > select.PIPE_BUF or not self._writable.poll(0):
                    break  # a line too long for one sure write, or no room now: the writer thread's
                os.write(self.fd, b"".join(chunk))  # at most PIPE_BUF bytes into room: all at once
                done = taken
            return done
        except (OSError, ValueError):
            return len(lines)  # the reader is gone or the stream closed: as the writer thread does

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


#: What a line is made of without a record: (created, levelno, logger name, message, extra fields).
FieldsEntry = tuple[float, int, str, str, dict[str, Any]]


class FieldsFormatter(Protocol):
    """A formatter that also makes the line of a record from its parts (:mod:`plainmcp.logs`' do)."""

    def format_fields(self, created: float, levelno: int, name: str, message: str, fields: dict[str, Any]) -> str:
        """The line ``format`` writes for a record of these values, ``fields`` its ``extra``."""
        ...


class LineHandler(logging.Handler):
    """A handler whose records become lines (``put_line``), and that takes lines made without a
    record (:func:`log_later`) when its formatter can make them (``format_fields``)."""

    def put_line(self, line: str, levelno: int) -> None:
        raise NotImplementedError

    def put_lines(self, lines: list[str], levelno: int) -> None:
        """Write lines made without a record, in order (at ``levelno``, the highest of theirs)."""
        for line in lines:
            self.put_line(line, levelno)

    def emit(self, record: logging.LogRecord) -> None:
        if _later.items and not _later.making:
            make_pending_lines()  # the lines logged before this record come before it
        try:
            line = self.format(record)
        except Exception:
            self.handleError(record)
            return
        self.put_line(line, record.levelno)

    def flush(self) -> None:
        if _later.items and not _later.making:
            make_pending_lines()

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


def log_later(
    logger: logging.Logger, level: int, render: Callable[..., tuple[str, dict[str, Any]]], values: tuple[Any, ...]
) -> None:
    """Log as ``logger.log(level, message, extra=fields)`` with ``message, fields = render(*values,
    brief=False)``: the same line, made later. The HTTP access line, once per request, takes this path.
    ``render(*values, brief=True)`` may give only the ``request_id`` field: it is asked so when every
    formatter the line reaches is ``brief`` (shows no other field, as :class:`plainmcp.logs.TextFormatter`).

    When every handler the line would reach is a :class:`LineHandler` that can make it (and no logger on
    its way has a filter), the values wait, and the lines of many calls are made together by a callback on
    the running event loop, at most :data:`INTERVAL` seconds later (or after :data:`BATCH_LINES` calls).
    Made in one run, the lines cost a fraction of what each costs made between requests; the caller pays
    for a tuple. A line made by a :class:`LineHandler` for a record, a handler's ``flush`` (at exit too)
    and :func:`make_pending_lines` make the waiting lines first, so the lines stay in order. Any other
    handler (a file, pytest's ``caplog``) gets a real record at once, from the caller's place. Without a
    running event loop the line is made at once.
    """
    if not logger.isEnabledFor(level):
        return
    route = (logger, level)
    if route not in _later.routed:  # once a batch: whether its handlers can make the line later
        if _line_takers(logger, level) is None:
            message, fields = render(*values, brief=False)
            logger.log(level, message, extra=fields, stacklevel=2)
            return
        _later.routed.add(route)
    _later.items.append((time.time(), logger, level, render, values))
    due = _later.loop
    if due is None or due.is_closed():  # no callback is due (a loop that closed never calls back)
        loop = _running_loop()
        if loop is None:
            make_pending_lines()
        else:
            _later.loop = loop
            loop.call_later(INTERVAL, _interval_over)
    elif len(_later.items) == BATCH_LINES and _running_loop() is due:  # a busy server: a batch stalls the
        due.call_soon(make_pending_lines)  # loop for a millisecond at most


#: Lines :func:`log_later` holds at most before it has them made at the event loop's next turn.
BATCH_LINES = 256


class _Later:
    """What :func:`log_later` holds: the values of lines not made yet, the routes checked this batch, and
    the loop whose callback is due (one at a time: lines made sooner, at a batch's end or before a
    record's line, leave it due, and it makes what has come in since)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.items: deque[tuple[float, logging.Logger, int, Callable[..., tuple[str, dict[str, Any]]], tuple[Any, ...]]]
        self.items = deque()  # appended and popped whole by any thread: no lock
        self.routed: set[tuple[logging.Logger, int]] = set()
        self.loop: Any = None
        self.making = False  # a batch is being made: a record it logs (a foreign handler's) must not start another


_later = _Later()


def _interval_over() -> None:
    """The loop's callback, :data:`INTERVAL` after the first line of a batch: the only one per loop."""
    _later.loop = None  # before taking the items: a call that comes in meanwhile asks for a new callback
    make_pending_lines()


def make_pending_lines() -> None:
    """Make the lines :func:`log_later` holds and hand them to their handlers, in order (any thread)."""
    if _later.making:
        return
    _later.making = True
    try:
        _make_pending_lines()
    finally:
        _later.making = False


def _make_pending_lines() -> None:
    _later.routed.clear()
    items = _later.items
    if not items:
        return
    batches: dict[tuple[LineHandler, int], list[FieldsEntry]] = {}  # by handler and level: warnings are urgent
    # Per logger and level: whether the line is brief, and the batches it goes to (None: a record).
    routes: dict[tuple[logging.Logger, int], tuple[bool, list[list[FieldsEntry]] | None]] = {}
    while items:
        try:
            created, logger, level, render, values = items.popleft()
        except IndexError:  # another thread took the last one
            break
        route = routes.get((logger, level))
        if route is None:
            takers = _line_takers(logger, level)  # the handlers now: they may have changed since
            if takers is None:
                route = (False, None)
            else:
                brief = all(getattr(handler.formatter, "brief", False) for handler in takers)
                route = (brief, [batches.setdefault((handler, level), []) for handler in takers])
            routes[(logger, level)] = route
        brief, targets = route
        try:
            message, fields = render(*values, brief=brief)
        except Exception:  # one bad line must not cost the batch: say so, as logging says a failed emit
            logging.getLogger(__name__).exception("a log line of %s could not be made", logger.name)
            continue
        if targets is None:
            _handle_record(logger, level, created, message, fields)
            continue
        entry = (created, level, logger.name, message, fields)
        for batch in targets:
            batch.append(entry)
    for (handler, level), entries in batches.items():
        formatter: FieldsFormatter = handler.formatter  # type: ignore[assignment]  # checked by takes()
        make_batch = getattr(formatter, "format_batch", None)  # a formatter may make a batch in one pass
        try:
            lines = make_batch(entries) if make_batch else [formatter.format_fields(*entry) for entry in entries]
        except Exception:
            logging.getLogger(__name__).exception("%d log lines could not be made", len(entries))
            continue
        handler.put_lines(lines, level)


def _handle_record(logger: logging.Logger, level: int, created: float, message: str, fields: dict[str, Any]) -> None:
    """Log a real record of these values, dated when they were logged."""
    record = logger.makeRecord(logger.name, level, "(log_later)", 0, message, (), None, extra=fields)
    record.created, record.msecs = created, int((created - int(created)) * 1000) + 0.0
    logger.handle(record)


def _running_loop() -> Any:
    """The asyncio event loop running in this thread, or None (asyncio is not imported for this)."""
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


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
    _later.reset()  # the parent's waiting lines are the parent's to make


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
