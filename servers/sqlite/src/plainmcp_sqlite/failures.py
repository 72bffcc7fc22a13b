"""How a statement failed, in words the model can act on: the errors of :mod:`.engine`, and SQLite's
exceptions turned into them (never a host path)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol


class Guard(Protocol):
    """What a failure's explanation reads of the connection's guard (:class:`.engine.Guard`)."""

    refusal: str | None
    deadline: float
    value_limit: int
    attach: tuple[tuple[str, Path], ...]


class DatabaseError(Exception):
    """A statement failed. The message is written for the model: what was wrong, no host path."""


class Refused(DatabaseError):
    """The access mode does not allow what the statement tried."""


class Changed(DatabaseError):
    """A confirmed statement would now make other changes than the ones the user confirmed."""


class DeadlineExceeded(DatabaseError):
    """The statement ran past its deadline and was stopped."""


DEADLINE = (
    "Deadline exceeded: the statement ran longer than the limit and was stopped. "
    "Narrow it (WHERE, LIMIT, an indexed column) or check for a recursive CTE without an end."
)


def explain(failure: sqlite3.Error, guard: Guard, mode: str, path: Path, *, like_limit: int) -> DatabaseError:
    """Turn SQLite's exception into one the model can act on."""
    message = str(failure)
    if guard.refusal is not None:
        if mode == "read":
            return Refused(
                f"Statement refused in read-only mode: {guard.refusal} is not allowed. Only reading "
                "statements run here (SELECT, WITH ... SELECT, read-only PRAGMAs)."
            )
        return Refused(f"Statement refused: {guard.refusal} is not allowed by this server, even with writes enabled.")
    if "readonly database" in message or "query_only" in message:
        return Refused("Statement refused in read-only mode: it would write to the database.")
    if message == "interrupted":
        if time.monotonic() > guard.deadline:
            return DeadlineExceeded(DEADLINE)
        return DatabaseError("The statement was cancelled.")
    if message.startswith("near ") and message.endswith(": syntax error"):
        return DatabaseError(f"SQL syntax error {message.removesuffix(': syntax error')}.")
    if "one statement at a time" in message:
        return DatabaseError("Only one SQL statement per call: remove the ';' and what follows it.")
    if "string or blob too big" in message:
        return DatabaseError(
            f"A value is larger than the limit of {guard.value_limit} bytes (the size of one result): "
            "select a part of it (substr(x, 1, n)) or its length (length(x) of a blob)."
        )
    if "LIKE or GLOB pattern too complex" in message:
        return DatabaseError(f"A LIKE or GLOB pattern is longer than the limit of {like_limit} bytes.")
    if "Could not decode to UTF-8" in message:
        return DatabaseError("A text value is not valid UTF-8; select it as CAST(column AS BLOB) or hex(column).")
    if "database is locked" in message or "database is busy" in message:
        return DatabaseError("The database is locked by another connection; try again shortly.")
    if isinstance(failure, sqlite3.ProgrammingError) and "binding" in message:
        return DatabaseError(f"Parameters do not match the statement: {message}")
    return DatabaseError(scrub(message, path, guard.attach))


def scrub(message: str, path: Path, others: Sequence[tuple[str, Path]] = ()) -> str:
    """SQLite's message without the databases' host paths, should it mention one."""
    for name, file in (("database", path), *others):
        for text in {str(file), str(file.resolve()), file.resolve().as_uri()}:
            message = message.replace(text, f"<{name}>")
    return message[:1:].upper() + message[1:]
