"""Retry timing and circuit breaking: pure logic, no I/O, every clock and random source injected.

:class:`RetryPolicy` decides *whether* and *how long* to wait before another attempt;
:class:`CircuitBreaker` decides whether an upstream may be called at all. :mod:`.upstream` puts
them around real HTTP calls.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: Statuses worth another attempt: the upstream asked us to slow down, or failed on its side.
#: 502 and 504 come from proxies in front of an upstream that is itself 500/503-ing.
RETRYABLE_STATUSES = frozenset({429, 500, 502, 503, 504})


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header: delta-seconds or an HTTP date (RFC 9110 10.2.3).

    Returns None when absent or unreadable (the caller then uses its own backoff); a date in the
    past gives 0. ``now`` is the current Unix time (``time.time()`` when None).
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    import email.utils  # only for the rare HTTP-date form; keeps it off the cold start

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None or when.tzinfo is None:
        return None
    current = time.time() if now is None else now
    return max(0.0, when.timestamp() - current)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with full jitter, capped, honouring ``Retry-After``.

    Attributes:
        retries: further attempts after the first (0 = no retry).
        base_delay: the backoff before the first retry, in seconds; doubled for each later one.
        max_delay: no computed backoff exceeds this.
        max_retry_after: a ``Retry-After`` longer than this is not waited out: the call fails
            at once, since a tool call should not hang for minutes.
    """

    retries: int = 2
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 10.0

    def __post_init__(self) -> None:
        if self.retries < 0 or self.base_delay < 0 or self.max_delay < 0 or self.max_retry_after < 0:
            raise ValueError("retry settings must be >= 0")

    def delay(
        self, retry: int, retry_after: float | None = None, rand: Callable[[], float] = random.random
    ) -> float | None:
        """Seconds to sleep before retry number ``retry`` (1 for the first), or None: do not retry.

        With ``Retry-After`` the upstream's wish wins (it knows when it will be back), unless it
        exceeds ``max_retry_after``. Otherwise "full jitter": a uniform draw in
        ``[0, min(max_delay, base_delay * 2**(retry-1))]``, which spreads the retries of many
        clients instead of having them hit a recovering upstream in lockstep.
        """
        if retry < 1 or retry > self.retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        ceiling = min(self.max_delay, self.base_delay * (2 ** (retry - 1)))
        return ceiling * rand()


CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"


@dataclass(slots=True)
class CircuitBreaker:
    """A circuit breaker for one upstream.

    ``closed``: calls pass; ``threshold`` consecutive failures open it. ``open``: calls are refused
    until ``cooldown`` seconds have passed, then it is ``half_open``: one probe call passes (others
    are refused meanwhile); its success closes the circuit, its failure opens it for another
    cool-down. ``clock`` is a monotonic clock in seconds (injectable for tests).

    ``transitions`` records every state change as ``(old, new)``, for logs and tests.
    """

    name: str
    threshold: int = 5
    cooldown: float = 30.0
    clock: Callable[[], float] = time.monotonic
    state: str = CLOSED
    failures: int = 0
    opened_at: float = 0.0
    probing: bool = False
    transitions: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.threshold < 1 or self.cooldown < 0:
            raise ValueError("a breaker needs threshold >= 1 and cooldown >= 0")

    def _move(self, state: str) -> None:
        if state != self.state:
            self.transitions.append((self.state, state))
            self.state = state

    def retry_in(self) -> float:
        """Seconds until an open circuit lets a probe through (0 when calls may pass now)."""
        if self.state != OPEN:
            return 0.0
        return max(0.0, self.opened_at + self.cooldown - self.clock())

    def allow(self) -> bool:
        """Whether a call may go out now. In ``half_open`` the one caller that gets True is the probe."""
        if self.state == OPEN:
            if self.retry_in() > 0:
                return False
            self._move(HALF_OPEN)
            self.probing = False
        if self.state == HALF_OPEN:
            if self.probing:
                return False
            self.probing = True
        return True

    def record_success(self) -> None:
        self.failures = 0
        self.probing = False
        self._move(CLOSED)

    def record_failure(self) -> None:
        """A failure that says the upstream is unwell (timeout, 5xx, 429, garbage), never a 4xx."""
        self.probing = False
        if self.state == HALF_OPEN:
            self._open()
            return
        self.failures += 1
        if self.failures >= self.threshold:
            self._open()

    def release(self) -> None:
        """The allowed call ended with neither verdict (cancelled, or a 4xx): let another probe through."""
        self.probing = False

    def trip(self, for_seconds: float) -> None:
        """Open for ``for_seconds`` more, because another replica's breaker for this upstream is open
        (shared state); an open circuit that already stays open longer is left as it is."""
        if for_seconds <= 0 or (self.state == OPEN and self.retry_in() >= for_seconds):
            return
        self.opened_at = self.clock() - self.cooldown + for_seconds
        self.failures = 0
        self.probing = False
        self._move(OPEN)

    def _open(self) -> None:
        self.opened_at = self.clock()
        self.failures = 0
        self._move(OPEN)
