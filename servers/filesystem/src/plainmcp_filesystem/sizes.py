"""How much a name weighs in a message: for cutting results before the transport refuses them."""

from __future__ import annotations

import json

__all__ = ["weight"]


def weight(name: str) -> int:
    """The most bytes ``name`` can take as a JSON string in a message: escapes counted, and every
    non-ASCII character as ``\\uXXXX`` (the encoder falls back to ASCII for a whole message when a
    file name holds undecodable bytes)."""
    if name.isascii() and name.isprintable():
        return len(name) + 2 + name.count("\\") + name.count('"')
    return len(json.dumps(name))
