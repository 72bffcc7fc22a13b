"""Reading the optional objects of a peer's JSON (a tool's annotations, a chunk's message) without trusting them."""

from __future__ import annotations

from typing import Any


def mapping(value: object) -> dict[str, Any]:
    """``value`` itself when it is a JSON object, else an empty one (missing, null or of another type)."""
    return value if isinstance(value, dict) else {}
