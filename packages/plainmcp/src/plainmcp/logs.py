"""Logging set-up for server entry points: always stderr (and a ``--log-file``), text or JSON lines.

Only a program's ``__main__`` calls this; library code just uses ``logging.getLogger(__name__)``.
stdout belongs to the stdio transport and never receives a log line.

Fields given with ``extra={...}`` (the HTTP access line's ``request_id``, ``status``, ...) become
keys of the JSON object; text lines show the ``request_id``.

What the formatters guarantee, whoever logged the record (our code or a dependency's):

- **One record, one line.** Control characters in a message (a newline in a client's
  ``clientInfo.name``, a terminal escape) are written escaped (``\\n``, ``\\x1b``), so a peer's text
  can never start a line of its own. In text lines, a traceback's lines follow the record indented
  by four spaces: a line that starts in the first column always starts a record.
- **No secrets.** Every line passes through :func:`plainmcp.redaction.redact` (Authorization
  headers, bearer tokens, ``apikey=``-style parameters, JWTs).
- **Bounded.** A message is cut at :data:`MAX_MESSAGE_CHARS` characters.
- **Never blocking.** Lines to stderr are written by a thread of their own from a bounded buffer
  (:mod:`plainmcp.log_sink`): a client that stops reading the server's stderr does not stop the
  server, and a line costs no system call where it is logged. They are written within 50 ms, at
  once for warnings and errors, and at exit.
- **Dependencies stay quiet.** Loggers outside plainmcp (uvicorn, httpx, watchfiles, markdown-it...)
  are capped at WARNING, whatever ``level`` says, unless ``dependencies`` lowers the cap: their
  debug lines are internals, and their info lines can carry request URLs.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

from .log_sink import FieldsEntry, LineHandler, LineSink
from .redaction import may_hold_secret, may_hold_secret_in, redact

LEVELS = ("debug", "info", "warning", "error", "critical")

# Attributes every LogRecord has: anything else on a record came from ``extra``.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's message with terminal colours
}

# C0 controls, DEL, C1 controls (NEL among them) and the Unicode line and paragraph separators:
# everything some reader (a terminal, ``str.splitlines``, a log viewer) may take as a line break
# or a command.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# json.dumps escapes C0 itself; with ensure_ascii=False it leaves these raw.
_JSON_RAW = {code: f"\\u{code:04x}" for code in (*range(0x7F, 0xA0), 0x2028, 0x2029)}
_CONTINUATION = "\n    "
# One encoder for every JSON line (``json.dumps`` with options builds a new one per call).
_JSON_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)
# A message longer than this is cut (after redaction, so no secret is cut in half and missed): a
# peer's megabyte-long name must not become a megabyte of log per request.
MAX_MESSAGE_CHARS = 16 * 1024

# Logger names (first component) that are this program's own; all others are dependencies.
OWN_LOGGERS = ("plainmcp", "__main__")


def _plain(text: str) -> bool:
    """Whether ``text`` (lines joined by newlines) holds only printable ASCII besides the newlines."""
    return text.isascii() and text.replace("\n", " ").isprintable()


def escape_controls(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``, ``\\u2028``)."""
    if text.isascii() and text.isprintable():  # most lines: no control character can be in them
        return text
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _cut(message: str) -> str:
    """``message`` cut to :data:`MAX_MESSAGE_CHARS` (redact first: a secret cut in half is missed)."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return f"{message[:MAX_MESSAGE_CHARS]}... ({len(message) - MAX_MESSAGE_CHARS} more characters)"


def _message(record: logging.LogRecord) -> str:
    """The record's message, redacted and cut."""
    return _cut(redact(record.getMessage()))


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The ``extra`` fields a record was logged with."""
    return {
        key: value for key, value in vars(record).items() if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
    }


def _details(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    """The record's traceback and stack, if any (unredacted, multi-line)."""
    parts = []
    if record.exc_info:
        parts.append(formatter.formatException(record.exc_info))
    elif record.exc_text:
        parts.append(record.exc_text)
    if record.stack_info:
        parts.append(formatter.formatStack(record.stack_info))
    return "\n".join(parts)


class _SecondCache:
    """The text of the current second, formatted once per second instead of once per line."""

    def __init__(self, render: Callable[[int], str]) -> None:
        self.render = render
        self.second = -1
        self.text = ""

    def __call__(self, created: float) -> str:
        second = int(created)
        if second != self.second:
            self.text = self.render(second)  # before the second: another thread may read both
            self.second = second
        return self.text


def _milliseconds(created: float) -> int:
    return int((created - int(created)) * 1000)  # as LogRecord.msecs


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, extra fields (and the traceback, if any)."""

    def __init__(self) -> None:
        super().__init__()
        self._second = _SecondCache(lambda second: time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))

    def format(self, record: logging.LogRecord) -> str:
        return self._line(
            record.created, int(record.msecs), record.levelname, record.name, record.getMessage(),
            extra_fields(record), _details(self, record),
        )  # fmt: skip

    def format_fields(self, created: float, levelno: int, name: str, message: str, fields: dict[str, Any]) -> str:
        """The line :meth:`format` writes for a record of these (``fields`` its ``extra``), made without one."""
        return self._line(created, _milliseconds(created), logging.getLevelName(levelno), name, message, fields, "")

    #: Every field shows in a JSON line.
    brief = False

    def _line(
        self, created: float, msecs: int, levelname: str, name: str, message: str, fields: dict[str, Any], details: str
    ) -> str:
        entry = self._entry(created, msecs, levelname, name, message, fields, details)
        return self._finish(entry, _JSON_ENCODER.encode(entry))

    def _entry(
        self, created: float, msecs: int, levelname: str, name: str, message: str, fields: dict[str, Any], details: str
    ) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "time": f"{self._second(created)}.{msecs:03d}Z",
            "level": levelname.lower(),
            "logger": name,
            "message": message,
        }
        for key, value in fields.items():
            entry.setdefault(key, value)
        if details:
            entry["traceback"] = details
        return entry

    def _finish(self, entry: dict[str, Any], line: str) -> str:
        """``line`` (``entry`` encoded) redacted, cut and with its raw controls escaped, as needed."""
        # Most lines hold no hint of a secret and a short message: they are done after one dump.
        secret = may_hold_secret(line)
        if secret or len(entry["message"]) > MAX_MESSAGE_CHARS:
            if secret:  # field by field, never on the JSON text, whose escapes a pattern could cut
                entry = {key: redact(value) if isinstance(value, str) else value for key, value in entry.items()}
            entry["message"] = _cut(entry["message"])
            line = json.dumps(entry, ensure_ascii=False, default=lambda value: redact(str(value)))
        return line if line.isascii() and "\x7f" not in line else line.translate(_JSON_RAW)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message``, with `` request_id=...`` when the record has one; a traceback
    follows on indented lines."""

    def __init__(self) -> None:
        super().__init__()
        self._second = _SecondCache(lambda second: time.strftime(self.default_time_format, self.converter(second)))

    def format(self, record: logging.LogRecord) -> str:
        line = self._line(
            record.created, int(record.msecs), record.levelname, record.name, record.getMessage(),
            getattr(record, "request_id", None),
        )  # fmt: skip
        details = _details(self, record)
        if details:
            lines = redact(details).splitlines()
            line += _CONTINUATION + _CONTINUATION.join(escape_controls(item) for item in lines)
        return line

    def format_fields(self, created: float, levelno: int, name: str, message: str, fields: dict[str, Any]) -> str:
        """The line :meth:`format` writes for a record of these (``fields`` its ``extra``), made without one."""
        return self._line(
            created, _milliseconds(created), logging.getLevelName(levelno), name, message, fields.get("request_id")
        )

    #: A text line shows one field, the request id: log_later may leave the others out.
    brief = True

    def format_batch(self, entries: list[FieldsEntry]) -> list[str]:
        """:meth:`format_fields` of each entry, in order. The usual batch (no hint of a secret, no control
        character, no overlong message) is made in one pass and checked once, as one text."""
        lines: list[str] = []
        shown: list[str] = []  # what _line checks: each message, and each request id
        layouts: dict[tuple[int, str, bool], str] = {}
        second, second_text = -1, ""
        longest = 0
        for created, levelno, name, message, fields in entries:
            request_id = fields.get("request_id")
            identified = request_id is not None
            layout = layouts.get((levelno, name, identified))
            if layout is None:  # "%s,%03d INFO plainmcp.http.exchange: %s request_id=%s", once per kind
                if not _plain(name):  # a logger's name is escaped like its message (never redacted)
                    return [self.format_fields(*entry) for entry in entries]
                layout = f"%s,%03d {logging.getLevelName(levelno)} {name}: %s" + (
                    " request_id=%s" if identified else ""
                )
                layouts[(levelno, name, identified)] = layout
            if int(created) != second:
                second_text, second = self._second(created), int(created)
            if identified:
                request_id = str(request_id)
                lines.append(layout % (second_text, (created - second) * 1000, message, request_id))
                shown.append(request_id)
            else:
                lines.append(layout % (second_text, (created - second) * 1000, message))
            shown.append(message)
            if len(message) > longest:
                longest = len(message)
        # _line checks a message and its request id joined; a hint that only the joining makes changes
        # nothing there either (redaction sees each part alone), so checking them apart gives its lines.
        text = "\n".join(shown)
        if longest <= MAX_MESSAGE_CHARS and not may_hold_secret_in(text) and _plain(text):
            return lines
        return [self.format_fields(*entry) for entry in entries]

    def _line(self, created: float, msecs: int, levelname: str, name: str, message: str, request_id: Any) -> str:
        # As logging.Formatter.formatTime with no datefmt: local time, comma, milliseconds.
        rid = None if request_id is None else str(request_id)
        if len(message) <= MAX_MESSAGE_CHARS and not may_hold_secret(message if rid is None else message + rid):
            # The usual line: one scan says neither part holds a hint of a secret.
            line = f"{self._second(created)},{msecs:03d} {levelname} {name}: {message}"
            return escape_controls(line if rid is None else f"{line} request_id={rid}")
        line = f"{self._second(created)},{msecs:03d} {levelname} {name}: {_cut(redact(message))}"
        if rid is not None:
            line += f" request_id={redact(rid)}"
        return escape_controls(line)


class DependencyCap(logging.Filter):
    """Lets through every record of the program's own loggers, and a dependency's only from
    ``floor`` up."""

    def __init__(self, own: Iterable[str] = (), floor: int = logging.WARNING) -> None:
        super().__init__()
        self.own = frozenset((*OWN_LOGGERS, *own))
        self.floor = floor

    def is_own(self, name: str) -> bool:
        top = name.partition(".")[0]
        return top in self.own or top.startswith("plainmcp_")  # the servers' packages

    def filter(self, record: logging.LogRecord) -> bool:
        return self.passes(record.name, record.levelno)

    def passes(self, name: str, levelno: int) -> bool:
        """Whether a record of logger ``name`` at ``levelno`` gets through."""
        return levelno >= self.floor or self.is_own(name)


class StderrLines(LineHandler):
    """Lines to stderr (or ``stream``) through a :class:`~plainmcp.log_sink.LineSink`: buffered,
    written by a thread of their own, never blocking the caller; warnings and errors at once."""

    def __init__(self, stream: Any = None) -> None:
        super().__init__()
        self.sink = LineSink(stream if stream is not None else sys.stderr, dropped_line=self._dropped_line)

    def put_line(self, line: str, levelno: int) -> None:
        self.sink.put(line, urgent=levelno >= logging.WARNING)

    def put_lines(self, lines: list[str], levelno: int) -> None:
        self.sink.put_batch(lines, urgent=levelno >= logging.WARNING)

    def flush(self) -> None:
        super().flush()  # the lines log_later holds first
        self.sink.flush()

    def close(self) -> None:
        self.flush()
        super().close()

    def _dropped_line(self, count: int) -> str:
        message = f"{count} log lines dropped: stderr was not read fast enough"
        formatter = self.formatter
        if isinstance(formatter, JsonFormatter | TextFormatter):
            return formatter.format_fields(time.time(), logging.WARNING, __name__, message, {})
        return message


class StderrAfterLog:
    """``sys.stderr`` while log lines to it are buffered: what is written to it directly (the line of
    a ``SystemExit``, argparse's usage error, a traceback Python prints) comes after every log line
    logged before it, as when each log line was written at once."""

    def __init__(self, stream: Any, sink: LineSink) -> None:
        self.stream = stream
        self.sink = sink

    def write(self, text: str) -> int:
        self.sink.flush()
        return int(self.stream.write(text))

    def writelines(self, lines: Iterable[str]) -> None:
        self.sink.flush()
        self.stream.writelines(lines)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def configure_logging(
    level: str = "info",
    fmt: str = "text",
    *,
    dependencies: str = "warning",
    own: Iterable[str] = (),
    file: str | None = None,
    max_bytes: int = 0,
    backups: int = 5,
) -> None:
    """Send every log record at ``level`` or above to stderr, as ``text`` or ``json`` lines; with
    ``file``, to that file (:func:`file_handler`), and stderr keeps warnings and errors only.
    ``sys.stderr`` becomes a :class:`StderrAfterLog`, so direct writes keep their place after the
    buffered log lines.

    Records of loggers outside plainmcp (and its servers' ``plainmcp_*`` packages, ``__main__`` and
    the names in ``own``) also need ``dependencies`` or above: pass ``dependencies=level`` to see
    a dependency's info and debug lines too.
    """
    stream = sys.stderr.stream if isinstance(sys.stderr, StderrAfterLog) else sys.stderr
    stderr = StderrLines(stream)
    sys.stderr = StderrAfterLog(stream, stderr.sink)
    handlers: list[logging.Handler] = [stderr]
    if file is not None:
        handlers[0].setLevel(logging.WARNING)  # the file has everything; the client's view of stderr the problems
        handlers.append(file_handler(file, max_bytes, backups))
    cap = DependencyCap(own, logging.getLevelName(dependencies.upper()))
    for handler in handlers:
        handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
        handler.addFilter(cap)
    root = logging.getLogger()
    for replaced in root.handlers:
        replaced.flush()  # what an earlier configuration still holds goes out first
    root.handlers[:] = handlers
    root.setLevel(level.upper())


def file_handler(path: str, max_bytes: int, backups: int) -> logging.Handler:
    """A handler appending to ``path`` (UTF-8): rotated by the standard library when it reaches
    ``max_bytes`` (``PATH.1`` ... ``PATH.<backups>``), or with ``max_bytes`` 0 never rotated but reopened
    when something else (logrotate) moves it away. Raises OSError when the file cannot be opened."""
    import logging.handlers
    import os

    path = os.path.expanduser(path)
    if max_bytes > 0:
        return logging.handlers.RotatingFileHandler(path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    return logging.handlers.WatchedFileHandler(path, encoding="utf-8")
