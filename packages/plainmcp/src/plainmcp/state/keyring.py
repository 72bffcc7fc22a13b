"""The key ring that seals 2026-07-28 ``requestState`` (multi-round-trip results).

A retry may land on any replica, so every replica must verify what any replica sealed. The ring holds
one or more 32-byte keys: the first seals, every one verifies. Rotation without downtime is two steps:
give every replica ``NEW,OLD`` (new tokens are sealed with NEW, old ones still verify), then, once
the old tokens' lifetime has passed, ``NEW`` alone.

Where the keys come from (:func:`keys_from_environment`): ``PLAINMCP_STATE_KEYS`` (comma-separated,
each 64 hex digits or URL-safe base64 of 32 bytes); else, with Redis, one key kept in Redis that the
first replica makes (:mod:`plainmcp.state.redis_state`); else a random key per process (one process
needs nothing more).
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence

KEY_BYTES = 32
ENVIRONMENT_VARIABLE = "PLAINMCP_STATE_KEYS"


class KeyRing:
    """Keys that seal and verify: ``sealing`` is the first, ``keys`` all of them (in order).

    Raises:
        ValueError: no key, or a key shorter than 32 bytes.
    """

    __slots__ = ("keys",)

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("a key ring needs at least one key")
        for key in keys:
            if not isinstance(key, bytes) or len(key) < KEY_BYTES:
                raise ValueError(f"each state key must be at least {KEY_BYTES} bytes")
        self.keys: tuple[bytes, ...] = tuple(keys)

    @classmethod
    def random(cls) -> KeyRing:
        """A ring of one fresh key: what a single process uses when nothing is configured."""
        return cls([os.urandom(KEY_BYTES)])

    @property
    def sealing(self) -> bytes:
        return self.keys[0]

    def __repr__(self) -> str:  # never the key material
        return f"KeyRing({len(self.keys)} keys)"


def parse_key(text: str) -> bytes:
    """One key as written by an operator: 64 hex digits, or URL-safe base64 of at least 32 bytes.

    Raises:
        ValueError: anything else (the message never repeats the text: it is a secret).
    """
    text = text.strip()
    try:
        key = bytes.fromhex(text) if len(text) >= 2 * KEY_BYTES and _is_hex(text) else _unbase64(text)
    except (ValueError, binascii.Error):
        raise ValueError(f"{ENVIRONMENT_VARIABLE}: a key is neither hex nor base64") from None
    if len(key) < KEY_BYTES:
        raise ValueError(f"{ENVIRONMENT_VARIABLE}: each key must hold at least {KEY_BYTES} bytes")
    return key


def keys_from_environment(environ: dict[str, str] | None = None) -> KeyRing | None:
    """The ring ``PLAINMCP_STATE_KEYS`` gives, or None when it is unset or empty.

    Raises:
        ValueError: a key that is not valid (see :func:`parse_key`).
    """
    text = (os.environ if environ is None else environ).get(ENVIRONMENT_VARIABLE, "")
    parts = [part for part in text.split(",") if part.strip()]
    return KeyRing([parse_key(part) for part in parts]) if parts else None


def _is_hex(text: str) -> bool:
    return all(char in "0123456789abcdefABCDEF" for char in text)


def _unbase64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
