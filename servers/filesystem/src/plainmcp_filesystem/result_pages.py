"""Pages of a listing or search: the text budget each page keeps to, and the cursor to go on.

A listing, tree or search whose text would pass the budget (``--max-read-bytes``, the one reads
keep to: about 10k tokens) is cut after the last item that fits, and the result carries a cursor.
The cursor is opaque: the index of the next item, signed (HMAC-SHA256 with a key this server
process draws at start) together with the tool and every other argument of the call. A cursor is
therefore only good for the same call: given with another path, pattern or option, edited, or
kept across a restart, it is refused. Continuing repeats the walk or search up to the page: what
a page costs stays bounded by the caps and deadlines a single call already has.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
from collections.abc import Iterable
from typing import Any

_FORM = re.compile(r"(\d{1,12})\.([A-Za-z0-9_-]{22})")
REFUSED = "Invalid cursor: pass back the nextCursor of an earlier result of the same call, unchanged"


class PageCursors:
    """Signs and checks the cursors of one server process."""

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key if key is not None else os.urandom(32)

    def _mac(self, tool: str, args: dict[str, Any], start: int) -> str:
        bound = {name: value for name, value in args.items() if name != "cursor"}
        message = json.dumps([tool, bound, start], sort_keys=True, separators=(",", ":")).encode()
        digest = hmac.new(self._key, message, hashlib.sha256).digest()[:16]
        return base64.urlsafe_b64encode(digest).decode().rstrip("=")

    def issue(self, tool: str, args: dict[str, Any], start: int) -> str:
        """The cursor that continues this call at item ``start``."""
        return f"{start}.{self._mac(tool, args, start)}"

    def start(self, tool: str, args: dict[str, Any]) -> int:
        """Where this call starts: 0 without a cursor, else the item its cursor names.

        Raises:
            ValueError: the cursor is not one this server gave for these arguments.
        """
        cursor = args.get("cursor")
        if cursor is None:
            return 0
        match = _FORM.fullmatch(cursor) if isinstance(cursor, str) else None
        if match is None or not hmac.compare_digest(match.group(2), self._mac(tool, args, int(match.group(1)))):
            raise ValueError(REFUSED)
        return int(match.group(1))


def fitting(weights: Iterable[int], budget: int) -> int:
    """How many items, in order, fit in ``budget`` bytes (always at least one, so paging moves on)."""
    taken = used = 0
    for size in weights:
        used += size
        if used > budget and taken:
            break
        taken += 1
    return taken


def more(cursor: str) -> str:
    """The line a cut page ends with."""
    return f'[more: call again with the same arguments and cursor "{cursor}"]'
