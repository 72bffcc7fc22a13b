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
from collections.abc import Iterable
from typing import Any

from .redaction import may_hold_secret, redact

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
# A message longer than this is cut (after redaction, so no secret is cut in half and missed): a
# peer's megabyte-long name must not become a megabyte of log per request.
MAX_MESSAGE_CHARS = 16 * 1024

# Logger names (first component) that are this program's own; all others are dependencies.
OWN_LOGGERS = ("plainmcp", "__main__")


def escape_controls(text: str) -> str:
    """``text`` with every control character written as an escape (``\\n``, ``\\x1b``, ``\\u2028``)."""
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


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, extra fields (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            entry.setdefault(key, value)
        details = _details(self, record)
        if details:
            entry["traceback"] = details
        line = json.dumps(entry, ensure_ascii=False, default=str)
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

    def format(self, record: logging.LogRecord) -> str:
        line = f"{self.formatTime(record)} {record.levelname} {record.name}: {_message(record)}"
        request_id = getattr(record, "request_id", None)
        if request_id is not None:
            line += f" request_id={redact(str(request_id))}"
        line = escape_controls(line)
        details = _details(self, record)
        if details:
            lines = redact(details).splitlines()
            line += _CONTINUATION + _CONTINUATION.join(escape_controls(item) for item in lines)
        return line


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
        return record.levelno >= self.floor or self.is_own(record.name)


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

    Records of loggers outside plainmcp (and its servers' ``plainmcp_*`` packages, ``__main__`` and
    the names in ``own``) also need ``dependencies`` or above: pass ``dependencies=level`` to see
    a dependency's info and debug lines too.
    """
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if file is not None:
        handlers[0].setLevel(logging.WARNING)  # the file has everything; the client's view of stderr the problems
        handlers.append(file_handler(file, max_bytes, backups))
    cap = DependencyCap(own, logging.getLevelName(dependencies.upper()))
    for handler in handlers:
        handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
        handler.addFilter(cap)
    root = logging.getLogger()
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
