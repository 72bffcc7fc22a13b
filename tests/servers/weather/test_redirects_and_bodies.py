"""Redirects stay on the configured upstream, bodies are decoded only as asked, and an attempt
that is cancelled leaves the breaker able to probe again. Real HTTP on 127.0.0.1 where the wire
matters (a redirect to another server, gzip), ``httpx.MockTransport`` for the URL forms."""

from __future__ import annotations

import anyio
import httpx
import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_weather.resilience import OPEN, CircuitBreaker, RetryPolicy
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.standin import StandIn
from plainmcp_weather.upstream import MAX_REDIRECTS, Unavailable, Upstream

from .hostile import VALID, HostileUpstream
from .support import QUICK, Clock, config

pytestmark = pytest.mark.anyio

ELSEWHERE = (
    "The Open-Meteo forecast service redirected the request to another address, which this server does not follow."
)


def text_of(result: dict) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def forecast_from(base: str) -> dict:
    """get_forecast from a real server in this process whose forecast upstream is ``base``."""
    server = build_server(config(forecast_url=base, retries=2), Deps())
    async with connect_in_memory(server) as client:
        with anyio.fail_after(QUICK):
            return await client.call_tool("get_forecast", {"latitude": 1, "longitude": 2})


async def test_redirect_to_another_server_is_an_upstream_error_and_not_followed():
    with StandIn() as elsewhere, HostileUpstream(target=elsewhere.url) as hostile:
        result = await forecast_from(f"{hostile.url}/away")
        assert result["isError"] is True and text_of(result) == ELSEWHERE
        assert elsewhere.count("/") == 0  # same host, another port: another upstream, never asked
        assert hostile.requests("away") == 1  # not retried


async def test_redirect_loop_on_the_same_upstream_stops_after_the_bound():
    with HostileUpstream() as hostile:
        result = await forecast_from(f"{hostile.url}/loop")
    assert result["isError"] is True and "redirected the request too many times" in text_of(result)
    assert hostile.requests("loop") == MAX_REDIRECTS + 1


def upstream(
    handler,
    *,
    base_url: str = "http://upstream.test",
    breaker: CircuitBreaker | None = None,
    client: httpx.AsyncClient | None = None,
) -> Upstream:
    client = client or httpx.AsyncClient(transport=httpx.MockTransport(handler), follow_redirects=True)
    return Upstream(
        "Open-Meteo forecast",
        client,
        base_url=base_url,
        policy=RetryPolicy(retries=2, base_delay=0),
        breaker=breaker or CircuitBreaker("forecast", clock=Clock()),
        timeout=2,
    )


@pytest.mark.parametrize(
    "location",
    [
        "https://upstream.test/v1/forecast",  # another scheme
        "http://upstream.test:8080/v1/forecast",  # another port
        "http://elsewhere.test/v1/forecast",
        "//elsewhere.test/v1/forecast",  # scheme-relative
        "http://upstream.test.elsewhere.test/v1/forecast",
        "http://upstream.test@elsewhere.test/v1/forecast",
    ],
)
async def test_redirect_off_the_upstream_is_refused_in_every_form(location):
    calls: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(302, headers={"Location": location})

    # The client itself would follow redirects: the upstream still decides.
    with pytest.raises(Unavailable) as failure:
        await upstream(handler).get_json("http://upstream.test/v1/forecast")
    assert failure.value.message == ELSEWHERE
    assert [str(call.url) for call in calls] == ["http://upstream.test/v1/forecast"]


async def test_redirect_on_the_same_upstream_is_followed_with_default_port_and_case_folded():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/old":
            return httpx.Response(301, headers={"Location": "HTTP://Upstream.TEST:80/new?x=1"})
        return httpx.Response(200, json={"path": request.url.path})

    assert await upstream(handler).get_json("http://upstream.test/old") == {"path": "/new"}


async def test_redirect_on_an_internationalized_host_matches_in_punycode():
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/old":
            return httpx.Response(302, headers={"Location": "http://xn--bcher-kva.test/new"})
        return httpx.Response(200, json={"path": request.url.path})

    api = upstream(handler, base_url="http://bücher.test")
    assert await api.get_json("http://bücher.test/old") == {"path": "/new"}


async def test_gzip_body_is_decoded_and_a_cut_one_or_other_encodings_are_refused():
    with HostileUpstream() as hostile:
        async with httpx.AsyncClient() as client:
            assert await upstream(None, base_url=hostile.url, client=client).get_json(f"{hostile.url}/gzip") == VALID
            for mode in ("brotli", "cutgzip"):
                with pytest.raises(Unavailable, match="could not be read"):
                    await upstream(None, base_url=hostile.url, client=client).get_json(f"{hostile.url}/{mode}")
        assert hostile.requests("brotli") == hostile.requests("cutgzip") == 1  # unreadable is not retried


async def test_deeply_nested_json_is_unreadable_not_a_crash():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=b"[" * 200_000)

    with pytest.raises(Unavailable, match="could not be read"):
        await upstream(handler).get_json("http://upstream.test/v1/forecast")


async def test_cancelled_probe_lets_the_next_probe_through():
    """Regression: a half-open probe cancelled mid-request kept the breaker refusing every call."""
    clock = Clock()
    breaker = CircuitBreaker("forecast", threshold=1, cooldown=10, clock=clock)
    breaker.allow()
    breaker.record_failure()
    assert breaker.state == OPEN
    clock.now += 10

    async def hang(request: httpx.Request) -> httpx.Response:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    with anyio.move_on_after(0.1):
        await upstream(hang, breaker=breaker).get_json("http://upstream.test/v1/forecast")
    assert breaker.allow()  # the cancelled probe gave its turn back


async def test_the_cap_is_configurable_and_applies_to_bodies_built_in_process_too():
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"padding": "x" * 5000})

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    small = Upstream(
        "Open-Meteo forecast",
        client,
        base_url="http://upstream.test",
        max_bytes=4096,
        policy=RetryPolicy(retries=2),
        breaker=CircuitBreaker("forecast", clock=Clock()),
    )
    with pytest.raises(Unavailable, match="larger than this server accepts"):
        await small.get_json("http://upstream.test/v1/forecast")
    assert small.attempts == 1  # not retried
    with pytest.raises(ValueError, match="--max-response-bytes must be at least 1024"):
        config(max_response_bytes=100)


async def test_a_body_denser_in_values_than_the_cap_allows_is_refused_unparsed():
    dense = b"[" + b"{}," * 200 + b"{}]"  # 603 bytes, 402 delimiters: over 4096 // 16 = 256
    sparse = b"[" + b'"a value of some length",' * 100 + b'"end"]'  # 101 values in 2.5 kB
    bodies = iter([dense, sparse])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=next(bodies))

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    small = Upstream(
        "Open-Meteo forecast",
        client,
        base_url="http://upstream.test",
        max_bytes=4096,
        policy=RetryPolicy(retries=0),
        breaker=CircuitBreaker("forecast", clock=Clock()),
    )
    with pytest.raises(Unavailable, match="larger than this server accepts"):
        await small.get_json("http://upstream.test/v1/forecast")
    assert len(await small.get_json("http://upstream.test/v1/forecast")) == 101
