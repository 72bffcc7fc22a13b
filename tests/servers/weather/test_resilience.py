"""Retry timing and the circuit breaker, with a fake clock and a fixed jitter source."""

from __future__ import annotations

import pytest
from plainmcp_weather.resilience import (
    CLOSED,
    HALF_OPEN,
    OPEN,
    CircuitBreaker,
    RetryPolicy,
    parse_retry_after,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_retry_policy_backoff_doubles_up_to_the_cap():
    policy = RetryPolicy(retries=5, base_delay=0.5, max_delay=3.0)
    ceilings = [policy.delay(retry, rand=lambda: 1.0) for retry in range(1, 6)]
    assert ceilings == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_retry_policy_jitter_spreads_within_the_ceiling():
    policy = RetryPolicy(retries=3, base_delay=1.0)
    assert policy.delay(3, rand=lambda: 0.0) == 0.0
    assert policy.delay(3, rand=lambda: 0.25) == 1.0  # a quarter of 4 s


def test_retry_policy_stops_after_its_retries():
    policy = RetryPolicy(retries=2)
    assert policy.delay(2, rand=lambda: 0.5) is not None
    assert policy.delay(3, rand=lambda: 0.5) is None
    assert RetryPolicy(retries=0).delay(1) is None


def test_retry_policy_honours_retry_after_but_not_past_its_limit():
    policy = RetryPolicy(retries=2, base_delay=0.1, max_retry_after=5)
    assert policy.delay(1, retry_after=4.0, rand=lambda: 0.0) == 4.0
    assert policy.delay(1, retry_after=6.0) is None


def test_retry_policy_rejects_negative_settings():
    with pytest.raises(ValueError):
        RetryPolicy(retries=-1)


def test_parse_retry_after_reads_seconds_and_http_dates():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 120 ") == 120.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:10 GMT", now=1445412480.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    assert parse_retry_after("soon") is None
    assert parse_retry_after(None) is None


def test_breaker_opens_after_threshold_consecutive_failures():
    breaker = CircuitBreaker("x", threshold=3, cooldown=10, clock=Clock())
    for _ in range(2):
        assert breaker.allow()
        breaker.record_failure()
    assert breaker.state == CLOSED
    breaker.record_success()  # a success resets the count
    for _ in range(3):
        assert breaker.allow()
        breaker.record_failure()
    assert breaker.state == OPEN
    assert not breaker.allow()
    assert breaker.transitions == [(CLOSED, OPEN)]


def test_breaker_lets_one_probe_through_after_the_cooldown():
    clock = Clock()
    breaker = CircuitBreaker("x", threshold=1, cooldown=10, clock=clock)
    breaker.allow()
    breaker.record_failure()
    clock.now += 9.5
    assert not breaker.allow()
    assert breaker.retry_in() == pytest.approx(0.5)
    clock.now += 0.5
    assert breaker.allow()  # the probe
    assert breaker.state == HALF_OPEN
    assert not breaker.allow()  # nobody else while it is out
    breaker.record_success()
    assert breaker.state == CLOSED and breaker.allow()
    assert breaker.transitions == [(CLOSED, OPEN), (OPEN, HALF_OPEN), (HALF_OPEN, CLOSED)]


def test_breaker_failed_probe_opens_for_another_cooldown():
    clock = Clock()
    breaker = CircuitBreaker("x", threshold=2, cooldown=10, clock=clock)
    for _ in range(2):
        breaker.allow()
        breaker.record_failure()
    clock.now += 10
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state == OPEN
    assert breaker.retry_in() == pytest.approx(10)
    assert breaker.transitions[-2:] == [(OPEN, HALF_OPEN), (HALF_OPEN, OPEN)]


def test_breaker_released_probe_lets_the_next_one_through():
    clock = Clock()
    breaker = CircuitBreaker("x", threshold=1, cooldown=0, clock=clock)
    breaker.allow()
    breaker.record_failure()
    assert breaker.allow()
    breaker.release()  # e.g. the probe got a 4xx: no verdict
    assert breaker.state == HALF_OPEN and breaker.allow()
