"""The fixture's configuration: what an operator or an embedder chooses, checked once.

The fixture has no command-line options of its own (every tool returns fixed content): the options every
server shares (transport, host, port, logging, HTTP auth) are the core's, added by
``plainmcp.server_arguments``. What an embedder may choose is the key that seals 2026-07-28
``requestState``, for several processes behind one endpoint.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

ENV_PREFIX = "PLAINMCP_EVERYTHING"
#: HMAC-SHA256 wants a key at least as long as its output (RFC 2104); the core's random key is this long too.
STATE_KEY_MIN_BYTES = 32


@dataclass(frozen=True, slots=True)
class Config:
    """How to build the fixture.

    Fields:
        state_key: the key that seals the 2026-07-28 ``requestState`` (at least 32 bytes). None (the
            default, and what the command line gives) draws a random key per server, which is right for
            one process; give every process behind one endpoint the same key so that any of them can
            continue a multi-round call another one started. Kept out of ``repr`` (it is a secret).

    Raises:
        ValueError: a ``state_key`` that is not bytes, or shorter than 32 bytes.
    """

    state_key: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        key = self.state_key
        if key is not None and (not isinstance(key, bytes) or len(key) < STATE_KEY_MIN_BYTES):
            raise ValueError(f"state_key: give at least {STATE_KEY_MIN_BYTES} bytes, or None for a random key")

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add the fixture's own options to ``parser``: there are none, the shared ones are all it takes."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """The configuration the command line asks for (the defaults: the fixture has no options)."""
        return cls()
