"""Continuing a result that was cut: the cursor a truncated ``query`` hands back, and the resource that
holds more of it (``sqlite://result/{query}``, linked with a ``resource_link``).

Both are stateless, so they work the same in either protocol era and across restarts: the cursor is
the offset of the next row plus a digest of the statement it belongs to (a cursor passed with another
statement is refused rather than silently skipping rows of the wrong result); the resource URI carries
the statement itself. Neither gives more than the ``query`` tool already may: the statement runs on
the read-only connection, under the same policy, deadline and caps.

Paging re-runs the statement and steps over the rows already shown (they are not converted), so a
page costs the rows before it; the deadline bounds that, and a stable ``ORDER BY`` makes the pages
fit together when the data changes between calls.
"""

from __future__ import annotations

import base64
import json
import zlib
from typing import Any

from plainmcp import ToolError

RESULT_TEMPLATE = "sqlite://result/{query}"
#: Statements longer than this get a cursor but no resource link (the URI would carry them whole).
MAX_LINKED_SQL = 4000


def _encode(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def _decode(token: str) -> Any:
    """The value in ``token``. Raises ValueError when it is not one of ours."""
    if not isinstance(token, str) or len(token) > 4 * MAX_LINKED_SQL + 1000:
        raise ValueError("not a token")
    try:
        return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except (ValueError, UnicodeDecodeError) as failure:
        raise ValueError("not a token") from failure


def _digest(db: str, sql: str, params: Any) -> str:
    # A check that a cursor comes back with its own statement, not a secret (an edited offset only pages
    # the same read-only result differently): CRC-32 does, without loading hashlib's OpenSSL (~4 MiB RSS).
    return format(zlib.crc32(_encode([db, sql, params]).encode("utf-8")), "08x")


def next_cursor(db: str, sql: str, params: Any, offset: int) -> str:
    """The cursor of the page that starts at row ``offset`` of this statement's result."""
    return _encode({"o": offset, "h": _digest(db, sql, params)})


def offset_of(cursor: str, db: str, sql: str, params: Any) -> int:
    """The row a cursor continues from.

    Raises:
        ToolError: the cursor is malformed, or belongs to another statement, parameters or database.
    """
    try:
        found = _decode(cursor)
    except ValueError:
        found = None
    offset = found.get("o") if isinstance(found, dict) else None
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise ToolError("cursor is not a cursor this server gave: pass next_cursor from the previous result.")
    if found.get("h") != _digest(db, sql, params):
        raise ToolError(
            "cursor belongs to another statement: pass it with the same sql, params and db as the call "
            "that returned it, or leave it out to start from the first row."
        )
    return offset


def result_uri(db: str, sql: str, params: Any, offset: int) -> str | None:
    """The URI of the resource holding this result from row ``offset`` on; None for a statement too
    long to carry in a URI."""
    if len(sql) > MAX_LINKED_SQL:
        return None
    return "sqlite://result/" + _encode({"d": db, "s": sql, "p": params, "o": offset})


def query_of(token: str) -> tuple[str, str, Any, int] | None:
    """(database, sql, params, offset) of a result URI's ``query`` variable; None when malformed."""
    try:
        found = _decode(token)
    except ValueError:
        return None
    if not isinstance(found, dict):
        return None
    db, sql, params, offset = found.get("d"), found.get("s"), found.get("p"), found.get("o")
    if not (isinstance(db, str) and isinstance(sql, str) and isinstance(offset, int) and offset >= 0):
        return None
    if params is not None and not isinstance(params, (list, dict)):
        return None
    return db, sql, params, offset
