"""The real server process over stdio against the real stand-in on 127.0.0.1, in both eras.

Retry counts, breaker transitions, cache hits and stale answers are read off the stand-in's request
counts: what reached the "upstream", not what the server says about itself.
"""

from __future__ import annotations

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_weather.standin import StandIn

from .support import QUICK, SERVER_MODULE

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


@pytest.fixture
def standin():
    with StandIn() as running:
        yield running


def command(standin: StandIn, *extra: str) -> list[str]:
    return [
        *SERVER_MODULE,
        "--geocoding-url",
        standin.url,
        "--forecast-url",
        standin.url,
        "--nws-url",
        standin.url,
        "--backoff",
        "0.01",
        "--max-backoff",
        "0.05",
        "--timeout",
        "2",
        "--log-level",
        "warning",
        *extra,
    ]


def text_of(result) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def call(client, name, arguments):
    with anyio.fail_after(QUICK):
        return await client.call_tool(name, arguments)


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
async def test_stdio_answers_and_caches_in_both_eras(standin, version):
    async with connect_stdio(command(standin), protocol_version=version) as client:
        assert client.server_info["name"] == "plainmcp-weather"
        first = await call(client, "get_forecast", {"location": "Paris, France", "days": 2})
        again = await call(client, "get_forecast", {"location": " paris ,  FRANCE ", "days": 2})
        current = await call(client, "get_current_weather", {"location": "Portland, OR", "units": "imperial"})
    assert first["structuredContent"]["location"]["country"] == "France"
    assert again["structuredContent"] == first["structuredContent"]
    assert current["structuredContent"]["location"]["region"] == "Oregon"
    assert current["structuredContent"]["units"]["temperature"] == "°F"
    assert standin.count("/v1/search") == 2  # "Paris" once (the second call was a cache hit), "Portland" once
    assert standin.count("/v1/forecast") == 2


async def test_stdio_retries_a_503_burst(standin):
    standin.fault("/v1/forecast", "status", times=2, status=503)
    async with connect_stdio(command(standin, "--retries", "2")) as client:
        result = await call(client, "get_current_weather", {"latitude": 35.6895, "longitude": 139.6917})
    assert not result.get("isError")
    assert standin.count("/v1/forecast") == 3


async def test_stdio_retries_after_429_with_retry_after(standin):
    standin.fault("/v1/search", "status", times=1, status=429, retry_after="1")
    async with connect_stdio(command(standin)) as client:
        result = await call(client, "search_locations", {"name": "Tokyo"})
    assert result["structuredContent"]["results"][0]["country_code"] == "JP"
    assert standin.count("/v1/search") == 2


async def test_stdio_gives_up_after_the_retries_with_a_sentence(standin):
    standin.fault("/v1/forecast", "status", times=-1, status=500)
    async with connect_stdio(command(standin, "--retries", "1")) as client:
        result = await call(client, "get_forecast", {"latitude": 1, "longitude": 2})
    assert result["isError"] is True
    assert (
        text_of(result) == "The Open-Meteo forecast service is having trouble (tried 2 times). Try again in a minute."
    )
    assert standin.count("/v1/forecast") == 2


async def test_stdio_malformed_json_is_an_error_and_not_retried(standin):
    standin.fault("/v1/forecast", "malformed", times=1)
    async with connect_stdio(command(standin)) as client:
        result = await call(client, "get_forecast", {"latitude": 1, "longitude": 2})
    assert result["isError"] is True and "could not be read" in text_of(result)
    assert standin.count("/v1/forecast") == 1


async def test_stdio_slow_upstream_times_out_and_is_retried(standin):
    standin.fault("/v1/forecast", "slow", times=1, delay=3)
    async with connect_stdio(command(standin, "--timeout", "0.5", "--retries", "1")) as client:
        recovered = await call(client, "get_forecast", {"latitude": 1, "longitude": 2})
        standin.fault("/v1/forecast", "slow", times=-1, delay=3)
        failed = await call(client, "get_forecast", {"latitude": 3, "longitude": 4})
    assert not recovered.get("isError")
    assert failed["isError"] is True and "did not answer in time (tried 2 times)" in text_of(failed)
    assert standin.count("/v1/forecast") == 4


async def test_stdio_follows_redirects_and_survives_dropped_connections(standin):
    standin.fault("/v1/search", "redirect", times=1)
    standin.fault("/v1/forecast", "drop", times=1)
    async with connect_stdio(command(standin)) as client:
        result = await call(client, "get_current_weather", {"location": "Sydney"})
    assert result["structuredContent"]["location"]["country"] == "Australia"
    assert standin.count("/v1/search") == 2 and standin.count("/v1/forecast") == 2


async def test_stdio_breaker_opens_then_probes_after_the_cooldown(standin):
    standin.fault("/v1/forecast", "status", times=-1, status=503)
    extra = ("--retries", "0", "--breaker-threshold", "2", "--breaker-cooldown", "0.5")
    async with connect_stdio(command(standin, *extra)) as client:
        for latitude in (1, 2):
            assert (await call(client, "get_forecast", {"latitude": latitude, "longitude": 0}))["isError"]
        paused = await call(client, "get_forecast", {"latitude": 3, "longitude": 0})
        assert "paused" in text_of(paused)
        assert standin.count("/v1/forecast") == 2  # the open circuit sent nothing
        standin.reset()
        await anyio.sleep(0.6)  # the cool-down
        probe = await call(client, "get_forecast", {"latitude": 3, "longitude": 0})
    assert not probe.get("isError")
    assert standin.count("/v1/forecast") == 1


async def test_stdio_serves_a_stale_answer_while_the_upstream_is_down(standin):
    async with connect_stdio(command(standin, "--current-ttl", "0.2", "--stale-for", "600")) as client:
        fresh = await call(client, "get_current_weather", {"location": "Miami"})
        await anyio.sleep(0.3)  # past the TTL
        standin.fault("/v1/", "status", times=-1, status=503)
        stale = await call(client, "get_current_weather", {"location": "Miami"})
    assert fresh["structuredContent"]["stale"] is False
    assert stale["structuredContent"]["stale"] is True
    assert stale["structuredContent"]["current"] == fresh["structuredContent"]["current"]
    assert "Stale" in text_of(stale)


async def test_stdio_alerts_send_the_user_agent_and_rounded_points(standin):
    agent = "weather-e2e (ops@example.com)"
    async with connect_stdio(command(standin, "--user-agent", agent)) as client:
        result = await call(client, "get_alerts", {"latitude": 25.77427123, "longitude": -80.19366})
        outside = await call(client, "get_alerts", {"latitude": 35.6895, "longitude": 139.69171})
    assert result["structuredContent"]["alerts"][0]["event"] == "Hurricane Warning"
    assert outside["isError"] is True and "outside the area" in text_of(outside)
    nws = standin.requests("/points") + standin.requests("/alerts")
    assert {entry["user_agent"] for entry in nws} == {agent}
    assert standin.requests("/points")[0]["path"] == "/points/25.7743,-80.1937"


async def test_stdio_options_come_from_the_environment_too(standin):
    env = {
        "PLAINMCP_WEATHER_GEOCODING_URL": standin.url,
        "PLAINMCP_WEATHER_FORECAST_URL": standin.url,
        "PLAINMCP_WEATHER_NWS_URL": standin.url,
        "PLAINMCP_WEATHER_USER_AGENT": "from-env",
    }
    async with connect_stdio(SERVER_MODULE, env=env) as client:
        result = await call(client, "get_alerts", {"state": "ME"})
    assert result["structuredContent"]["count"] == 0
    assert standin.requests("/alerts")[0]["user_agent"] == "from-env"
