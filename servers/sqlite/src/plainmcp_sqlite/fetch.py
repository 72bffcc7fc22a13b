"""Reading an executed statement's rows under the row and byte caps, measuring each row before it
is kept (see ``engine.py`` for the limits that bound a row before Python sees it)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class Outcome:
    """What one statement gave: column names, the rows kept, and whether more rows were left."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    more: bool
    #: ``"rows"`` or ``"bytes"``: which cap stopped the fetch when ``more`` is true.
    capped_by: str | None = None
    changes: int = 0
    last_row_id: int | None = None
    #: Write mode: rows changed in all, triggers and foreign-key actions included (``total_changes``).
    all_changes: int = 0
    #: Write mode: what the statement does, as the authorizer saw it (``"deleting from orders"``).
    effects: tuple[str, ...] = ()
    #: Write mode, a confirmed statement or its dry run: the digest of its changes (see ``changes.py``).
    digest: str | None = None
    #: What the caller's ``shape`` made of the rows on the worker thread (see ``Database.run``).
    shaped: Any = None


def json_size(text: str) -> int:
    """The bytes ``text`` takes in a JSON message: a control character travels as six (``\\u0001``),
    a non-ASCII one as its UTF-8, so a budget counted in characters would let a result reach
    several times its size on the wire."""
    if text.isprintable():
        return len(text.encode("utf-8", "surrogatepass"))
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2


def fetch_rows(cursor: sqlite3.Cursor, max_rows: int, max_bytes: int, *, partial: bool, skip: int = 0) -> Outcome:
    """The rows of an executed statement, at most ``max_rows`` and about ``max_bytes`` of them.

    Rows are converted one at a time and measured before they are kept; fetching stops at the
    first row that passes the budget (the first row is always kept, so a result is never empty
    only because one row is large). Python so holds the kept rows and at most one more, and a row
    is itself bounded: its values were all in SQLite's capped heap when Python converted them. Once
    the rows or the budget are full, the next row only tells whether more exist: its text stays
    bytes (Python may need four bytes a character for it).

    With ``partial`` (reads), a later row that SQLite cannot build within its limits (a value past
    the statement's value limit, the heap limit) ends the result there, as the byte budget would:
    truncated. Without it (a write's RETURNING rows) the statement fails, and is rolled back.

    The first ``skip`` rows are stepped over unconverted (a later page of a result)."""
    columns = [column[0] for column in cursor.description or ()]
    rows: list[tuple[Any, ...]] = []
    capped_by: str | None = None
    for _ in range(skip if columns else 0):
        if _next_undecoded(cursor) is None:
            break
    if columns:
        keep, size, sized = rows.append, 0, _SIZED
        # Set once the rows or the budget are full: then the next row only tells whether more exist.
        full = "rows" if max_rows == 0 else None
        row: tuple[Any, ...] | None = None
        try:
            if full is None:
                # Iterating the cursor steps it as fetchone does, without a method call per row.
                for row in cursor:
                    for value in row:
                        if type(value) is str and not (value.isascii() and value.isprintable()):
                            size += json_size(value)  # as it travels: escapes, UTF-8
                        else:
                            size += len(value) if type(value) in sized else 8
                    if size > max_bytes and rows:
                        capped_by = "bytes"  # this row is past the budget: left out, so more exist
                        break
                    keep(row)
                    if len(rows) == max_rows or size > max_bytes:
                        full = "rows" if len(rows) == max_rows else "bytes"
                        break
            if full is not None and _next_undecoded(cursor) is not None:
                capped_by = full
        except (sqlite3.DataError, MemoryError):
            # The cursor steps to the next row after converting this one: a failure here is
            # SQLite refusing to build a later row. Rows already kept are a true prefix.
            if not rows or not partial:
                raise
            capped_by = full or "bytes"
        row = None  # the row past the budget, if any: not held while the result is built
    changes = cursor.rowcount if cursor.rowcount > 0 else 0
    return Outcome(columns, rows, capped_by is not None, capped_by, changes, cursor.lastrowid)


def _next_undecoded(cursor: sqlite3.Cursor) -> tuple[Any, ...] | None:
    """The next row with its text as bytes, as SQLite holds it."""
    connection = cursor.connection
    factory = connection.text_factory
    connection.text_factory = bytes
    try:
        row: tuple[Any, ...] | None = cursor.fetchone()  # typeshed types fetchone() as Any
        return row
    finally:
        connection.text_factory = factory


#: What a row's size counts as their length (text in characters, blobs in bytes); 8 for the rest.
_SIZED = frozenset({str, bytes})
