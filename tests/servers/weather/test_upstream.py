"""One upstream behind retries and a breaker, over ``httpx.MockTransport``: what is retried, how
long it waits, when the circuit opens, and that redirects are followed."""

from __future__ import annotations

import httpx
import pytest
from plainmcp_weather.resilience import CLOSED, HALF_OPEN, OPEN, CircuitBreaker, RetryPolicy
from plainmcp_weather.upstream import CircuitOpen, Rejected, Unavailable, Upstream

from .support import Clock

pytestmark = pytest.mark.anyio

URL = "http://upstream.test/v1/forecast"


def scripted(*steps):
    """A handler answering with ``steps`` in turn (a status, (status, headers), an exception class, or a body)."""
    calls: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        step = steps[min(len(calls), len(steps)) - 1]
        if isinstance(step, type) and issubclass(step, Exception):
            raise step("scripted", request=request)
        if isinstance(step, tuple):
            return httpx.Response(step[0], headers=step[1], json={"status": step[0]})
        if isinstance(step, int):
            return httpx.Response(step, json={"status": step, "detail": "secret upstream detail"})
        return httpx.Response(200, content=step)

    return handle, calls


def upstream(handler, *, retries=2, threshold=5, clock=None, max_retry_after=10.0):
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)

    breaker = CircuitBreaker("forecast", threshold=threshold, cooldown=30, clock=clock or Clock())
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler), follow_redirects=True)
    policy = RetryPolicy(retries=retries, base_delay=1.0, max_delay=8.0, max_retry_after=max_retry_after)
    return Upstream(
        "Open-Meteo forecast",
        client,
        base_url="http://upstream.test",
        policy=policy,
        breaker=breaker,
        sleep=sleep,
        rand=lambda: 0.5,
    ), sleeps


async def test_upstream_retries_503_then_succeeds_with_exponential_backoff():
    handler, calls = scripted(503, 500, b'{"ok": true}')
    api, sleeps = upstream(handler)
    assert await api.get_json(URL) == {"ok": True}
    assert len(calls) == 3 and api.retries == 2
    assert sleeps == [0.5, 1.0]  # half (the jitter draw) of 1 s, then of 2 s


async def test_upstream_honours_retry_after_on_429():
    handler, calls = scripted((429, {"Retry-After": "3"}), b"[]")
    api, sleeps = upstream(handler)
    assert await api.get_json(URL) == []
    assert sleeps == [3.0] and len(calls) == 2


async def test_upstream_does_not_wait_out_a_long_retry_after():
    handler, calls = scripted((429, {"Retry-After": "600"}), b"[]")
    api, sleeps = upstream(handler)
    with pytest.raises(Unavailable, match="rate-limiting.*about 600 seconds"):
        await api.get_json(URL)
    assert sleeps == [] and len(calls) == 1


async def test_upstream_retries_timeouts_and_gives_up_with_a_sentence():
    handler, calls = scripted(httpx.ReadTimeout)
    api, sleeps = upstream(handler, retries=2)
    with pytest.raises(Unavailable) as failure:
        await api.get_json(URL)
    assert len(calls) == 3 and len(sleeps) == 2
    assert failure.value.message == (
        "The Open-Meteo forecast service did not answer in time (tried 3 times). Try again in a minute."
    )


@pytest.mark.parametrize("status", [400, 403, 404, 422])
async def test_upstream_never_retries_other_4xx(status):
    handler, calls = scripted(status)
    api, sleeps = upstream(handler)
    with pytest.raises(Rejected) as failure:
        await api.get_json(URL)
    assert failure.value.status == status
    assert len(calls) == 1 and sleeps == []
    assert api.breaker.failures == 0  # a refusal says nothing about the upstream's health


async def test_upstream_malformed_json_fails_without_retry_and_without_leaking():
    handler, calls = scripted(b'{"latitude": 52.5, "longitude"')
    api, _ = upstream(handler)
    with pytest.raises(Unavailable) as failure:
        await api.get_json(URL)
    assert len(calls) == 1 and api.breaker.failures == 1
    assert "could not be read" in failure.value.message and "latitude" not in failure.value.message


async def test_upstream_messages_carry_no_url_or_upstream_text():
    handler, _ = scripted(500)
    api, _ = upstream(handler, retries=1)
    with pytest.raises(Unavailable) as failure:
        await api.get_json(URL)
    assert "upstream.test" not in failure.value.message and "secret" not in failure.value.message


async def test_upstream_breaker_opens_and_then_refuses_without_a_request():
    handler, calls = scripted(503)
    clock = Clock()
    api, _ = upstream(handler, retries=2, threshold=3, clock=clock)
    with pytest.raises(Unavailable):
        await api.get_json(URL)
    assert len(calls) == 3 and api.breaker.state == OPEN
    with pytest.raises(CircuitOpen, match="paused for about 30 more seconds"):
        await api.get_json(URL)
    assert len(calls) == 3  # nothing went out


async def test_upstream_breaker_probes_after_cooldown_and_closes_on_success():
    handler, calls = scripted(503, 503, b"{}")
    clock = Clock()
    api, _ = upstream(handler, retries=0, threshold=2, clock=clock)
    for _ in range(2):
        with pytest.raises(Unavailable):
            await api.get_json(URL)
    assert api.breaker.state == OPEN
    clock.now += 30
    assert await api.get_json(URL) == {}
    assert api.breaker.transitions == [(CLOSED, OPEN), (OPEN, HALF_OPEN), (HALF_OPEN, CLOSED)]


async def test_upstream_breaker_stops_retries_midway_when_it_opens():
    handler, calls = scripted(503)
    api, _ = upstream(handler, retries=5, threshold=2)
    with pytest.raises(CircuitOpen):
        await api.get_json(URL)
    assert len(calls) == 2


async def test_upstream_follows_redirects():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/points/39.74561234,-97.0892":
            return httpx.Response(301, headers={"Location": "/points/39.7456,-97.0892"})
        return httpx.Response(200, json={"path": request.url.path})

    api, _ = upstream(handler)
    assert await api.get_json("http://upstream.test/points/39.74561234,-97.0892") == {
        "path": "/points/39.7456,-97.0892"
    }
