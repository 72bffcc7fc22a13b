"""Logging set-up for server entry points: always stderr, text or JSON lines.

Only a program's ``__main__`` calls this; library code just uses ``logging.getLogger(__name__)``.
stdout belongs to the stdio transport and never receives a log line.

Fields given with ``extra={...}`` (the HTTP access line's ``request_id``, ``status``, ...) become
keys of the JSON object; text lines show the ``request_id``.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

LEVELS = ("debug", "info", "warning", "error", "critical")

# Attributes every LogRecord has: anything else on a record came from ``extra``.
_RECORD_ATTRIBUTES = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {
    "message", "asctime", "taskName",
    "color_message",  # uvicorn's message with terminal colours
}


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The ``extra`` fields a record was logged with."""
    return {key: value for key, value in vars(record).items() if key not in _RECORD_ATTRIBUTES and not key.startswith("_")}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, extra fields (and the traceback, if any)."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in extra_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_info:
            entry["traceback"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message``, with `` request_id=...`` when the record has one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = getattr(record, "request_id", None)
        if request_id is None:
            return line
        first, newline, rest = line.partition("\n")  # keep it on the message line, not after a traceback
        return f"{first} request_id={request_id}{newline}{rest}"


def configure_logging(level: str = "info", fmt: str = "text") -> None:
    """Send every log record at ``level`` or above to stderr, as ``text`` or ``json`` lines."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
