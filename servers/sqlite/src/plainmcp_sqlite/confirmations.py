"""What makes a confirmed write commit once, and only what the user saw: the question's text (the
whole statement and its parameters, escaped) and the ledger of confirmations already spent.

A question carries a random nonce and an expiry. In 2026-07-28 both travel in the sealed
``requestState`` (the client can read it, not change it), and the answer is awaited under a key
made of the nonce, so an answer sent before the question was asked matches nothing. The
:class:`Ledger` remembers every spent nonce until its expiry: memory is bounded by refusing new
questions while it is full of unexpired nonces, never by forgetting one (which would let an
accepted round be replayed).
"""

from __future__ import annotations

import heapq
import json
import time
import unicodedata
from collections.abc import Callable
from typing import Any

#: How long a question may wait for its answer, in seconds (the answer commits only before this).
LIFETIME_SECONDS = 600.0
#: Spent confirmations kept at most, each until it expires; while full, no new question is asked.
CAPACITY = 4096
#: The longest statement (and parameters) the question shows, in characters once escaped; a longer
#: one is refused, since the user must see all of what will run.
MAX_SHOWN_CHARS = 8000


class Ledger:
    """Spent nonces, each kept until its expiry (``clock``: seconds, as :func:`time.time`)."""

    def __init__(self, capacity: int | None = None, clock: Callable[[], float] = time.time) -> None:
        self.capacity = CAPACITY if capacity is None else capacity
        self.clock = clock
        self._spent: set[str] = set()
        self._expiries: list[tuple[float, str]] = []

    def __len__(self) -> int:
        self._purge()
        return len(self._spent)

    def _purge(self) -> None:
        now = self.clock()
        while self._expiries and self._expiries[0][0] < now:
            _, nonce = heapq.heappop(self._expiries)
            self._spent.discard(nonce)

    def has_room(self) -> bool:
        """Whether a new question may be asked (its answer could be recorded)."""
        return len(self) < self.capacity

    def spend(self, nonce: str, expires: float) -> str | None:
        """Record ``nonce`` as used; None when it may commit, else why not (for the model)."""
        self._purge()
        if expires < self.clock():
            return "This confirmation has expired, and nothing was changed. Call execute anew to ask again."
        if nonce in self._spent:
            return "This confirmation was already used, and nothing was changed again. Call execute anew."
        if len(self._spent) >= self.capacity:
            return "The server is holding too many confirmations; nothing was changed. Try again in a few minutes."
        self._spent.add(nonce)
        heapq.heappush(self._expiries, (expires, nonce))
        return None


def visible(text: str) -> str:
    """``text`` with every control and format character (escape sequences, bidirectional overrides,
    zero-width characters) written as an escape, so what the user reads is what runs. Newlines and
    tabs stay."""
    out = []
    for char in text:
        if char in "\n\t" or unicodedata.category(char) not in ("Cc", "Cf", "Zl", "Zp", "Cs"):
            out.append(char)
        else:
            out.append(char.encode("unicode_escape", "backslashreplace").decode("ascii"))
    return "".join(out)


def shown_statement(sql: str, params: Any) -> str | None:
    """The statement and its parameters as the question shows them, whole; None when too long."""
    text = visible(sql)
    if params:
        text += "\n\nwith parameters: " + visible(json.dumps(params, ensure_ascii=False, default=repr))
    return text if len(text) <= MAX_SHOWN_CHARS else None
