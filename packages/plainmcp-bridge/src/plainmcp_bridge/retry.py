"""When and how long to wait before asking the model endpoint again.

Retried: connection failures (refused, reset, a timeout while connecting), 429 and every 5xx, as long as
no part of the answer reached the user yet (a stream cut half-way is not replayed: the user would read the
start twice). The wait is exponential with jitter (100 ms, 300 ms, 900 ms... times a random factor in
[0.5, 1]), or exactly what ``Retry-After`` asks when the server says so, unless that is longer than
``max_retry_after``: then waiting is pointless for an interactive turn and the error is reported.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass

RETRY_STATUSES = frozenset({429}) | frozenset(range(500, 600))


@dataclass(frozen=True)
class RetryPolicy:
    """``attempts`` is the total number of tries (1 = no retry)."""

    attempts: int = 3
    base: float = 0.1
    factor: float = 3.0
    max_delay: float = 10.0
    max_retry_after: float = 30.0

    def backoff(self, attempt: int, rng: random.Random | None = None) -> float:
        """The wait after failed try number ``attempt`` (1-based), with jitter."""
        delay = min(self.max_delay, self.base * self.factor ** (attempt - 1))
        return delay * (rng or random).uniform(0.5, 1.0)

    def delay(self, attempt: int, retry_after: str | None, now: float | None = None) -> float | None:
        """Seconds to wait before the next try, or None when there is no next try (attempts spent, or a
        ``Retry-After`` longer than ``max_retry_after``)."""
        if attempt >= self.attempts:
            return None
        asked = parse_retry_after(retry_after, now)
        if asked is None:
            return self.backoff(attempt)
        return asked if asked <= self.max_retry_after else None


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date (RFC 9110); None when absent or unreadable."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
