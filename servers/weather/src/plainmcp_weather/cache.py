"""A bounded TTL cache that can still hand out an expired entry when the upstream is down.

Keys are built with :func:`cache_key`, which normalizes what does not change the answer
(case and surrounding whitespace of names, float noise in coordinates), and keeps everything that
does (units, days, flags) -- so ``"paris"`` and ``" Paris "`` share an entry, and celsius and
fahrenheit do not.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

#: Coordinates are rounded to this many decimals in keys (~11 m), below any weather model's grid.
COORDINATE_DECIMALS = 4


def _normal(value: Any) -> Hashable:
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return round(value, COORDINATE_DECIMALS) + 0.0  # + 0.0 turns -0.0 into 0.0
    if isinstance(value, (list, tuple)):
        return tuple(_normal(item) for item in value)
    raise TypeError(f"cannot use {type(value).__name__} in a cache key")


def cache_key(kind: str, **parameters: Any) -> tuple[Hashable, ...]:
    """A hashable key for ``kind`` with these parameters (order-independent; None means absent)."""
    return (kind, *sorted((name, _normal(value)) for name, value in parameters.items() if value is not None))


@dataclass(frozen=True, slots=True)
class Hit:
    """A cached value, with when it was stored (Unix time) and whether its TTL has passed."""

    value: Any
    stored_at: float
    stale: bool


@dataclass(slots=True)
class _Entry:
    value: Any
    stored_at: float  # wall time, for reporting
    fresh_until: float  # monotonic
    keep_until: float  # monotonic: past this even a stale answer is too old to serve


class TTLCache:
    """At most ``max_entries`` values, each fresh for its own TTL and kept ``stale_for`` seconds more.

    Least recently used entries are evicted first. ``clock`` is monotonic, ``wall`` gives Unix time
    (both injectable). ``hits``, ``misses`` and ``stale_hits`` count lookups, for tests and logs.
    """

    def __init__(
        self,
        max_entries: int = 1024,
        *,
        stale_for: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if max_entries < 0 or stale_for < 0:
            raise ValueError("max_entries and stale_for must be >= 0")
        self.max_entries = max_entries
        self.stale_for = stale_for
        self._clock = clock
        self._wall = wall
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.stale_hits = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Hit | None:
        """The fresh value for ``key``, or None (counted as a hit or a miss)."""
        entry = self._lookup(key)
        if entry is None or entry.fresh_until <= self._clock():
            self.misses += 1
            return None
        self.hits += 1
        return Hit(entry.value, entry.stored_at, stale=False)

    def get_stale(self, key: Hashable) -> Hit | None:
        """The value for ``key`` even if expired, while it is within ``stale_for`` of its TTL."""
        entry = self._lookup(key)
        if entry is None:
            return None
        stale = entry.fresh_until <= self._clock()
        if stale:
            self.stale_hits += 1
        return Hit(entry.value, entry.stored_at, stale=stale)

    def put(self, key: Hashable, value: Any, ttl: float, stored_at: float | None = None) -> None:
        """Keep ``value`` fresh for ``ttl`` seconds from now; ``stored_at`` is when it was fetched
        (now when None; earlier for an answer another replica fetched)."""
        if self.max_entries == 0 or ttl <= 0:
            return
        now = self._clock()
        fetched = self._wall() if stored_at is None else stored_at
        self._entries[key] = _Entry(value, fetched, now + ttl, now + ttl + self.stale_for)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    def _lookup(self, key: Hashable) -> _Entry | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry.keep_until <= self._clock():
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return entry
