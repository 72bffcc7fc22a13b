"""Opaque cursors for the ``*/list`` methods.

A cursor names the list it belongs to and the offset of the next page, base64url-encoded so clients
treat it as opaque. Anything that does not decode to a cursor of the same list is ``-32602``.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any, TypeVar

from .errors import invalid_params

T = TypeVar("T")

DEFAULT_PAGE_SIZE = 100


def encode_cursor(kind: str, offset: int) -> str:
    return base64.urlsafe_b64encode(f"{kind}:{offset}".encode()).decode("ascii").rstrip("=")


def decode_cursor(kind: str, cursor: Any) -> int:
    """The offset a cursor points at. Raises MCPError(-32602) for anything else."""
    if not isinstance(cursor, str):
        raise invalid_params("Invalid cursor: must be a string")
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        cursor_kind, _, offset = base64.urlsafe_b64decode(padded.encode("ascii")).decode().partition(":")
        value = int(offset)
    except (ValueError, UnicodeError, binascii.Error):
        raise invalid_params("Invalid cursor") from None
    if cursor_kind != kind or value < 0 or str(value) != offset:
        raise invalid_params("Invalid cursor")
    return value


def paginate(kind: str, items: Sequence[T], cursor: Any, page_size: int) -> tuple[Sequence[T], str | None]:
    """One page of ``items`` and the cursor of the next page (None at the end)."""
    # "" is a cursor like any other in 2026-07-28; we never issue it, so read it as the first page.
    offset = 0 if cursor is None or cursor == "" else decode_cursor(kind, cursor)
    if offset > len(items):
        raise invalid_params("Invalid cursor: past the end of the list")
    end = offset + page_size
    return items[offset:end], (encode_cursor(kind, end) if end < len(items) else None)
