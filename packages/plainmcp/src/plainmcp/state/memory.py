"""The default shared state: everything in this process (a server of one process needs nothing else)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .fanout import MemoryFanout
from .keyring import KeyRing

#: Claims kept at most; past it the expired ones are swept (they are few: one per notification window).
_CLAIMS_SWEEP_AT = 4096


class MemoryState:
    """:class:`~plainmcp.state.SharedState` in one process.

    Args:
        keyring: the ring sealing ``requestState``; a random key by default.
    """

    kind = "memory"
    replicated = False

    def __init__(self, keyring: KeyRing | None = None) -> None:
        self._keyring = keyring if keyring is not None else KeyRing.random()
        self._fanout = MemoryFanout()
        self._claims: dict[str, float] = {}

    @property
    def keyring(self) -> KeyRing:
        return self._keyring

    @property
    def fanout(self) -> MemoryFanout:
        return self._fanout

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[None]:
        yield

    async def claim(self, name: str, ttl_seconds: float) -> bool:
        now = time.monotonic()
        if len(self._claims) >= _CLAIMS_SWEEP_AT:
            self._claims = {key: until for key, until in self._claims.items() if until > now}
        until = self._claims.get(name)
        if until is not None and until > now:
            return False
        self._claims[name] = now + ttl_seconds
        return True

    async def health(self) -> dict[str, Any]:
        return {"kind": self.kind, "reachable": True}

    def counters(self) -> dict[str, float]:
        return {"up": 1.0, "failures": 0.0}
