"""Three weather replicas on one real Redis share answers, flights, breakers and rate limits; the
upstream is the real stand-in on 127.0.0.1, so every count is of requests it received."""

from __future__ import annotations

import logging
from contextlib import AsyncExitStack

import anyio
import pytest
from plainmcp.state.redis_state import RedisState
from plainmcp.testing import connect_in_memory
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.standin import StandIn

from tests.servers.weather.support import QUICK, config

pytestmark = pytest.mark.anyio

REPLICAS = 3
CALLERS = 20
PREFIX = "plainmcp:plainmcp-weather:"


@pytest.fixture
def standin():
    with StandIn() as running:
        yield running


def on(standin: StandIn, **overrides):
    return config(geocoding_url=standin.url, forecast_url=standin.url, nws_url=standin.url, **overrides)


def replica(standin: StandIn, redis_url: str, **overrides):
    server = build_server(on(standin, **overrides), Deps())
    server.share(RedisState(redis_url, prefix=PREFIX))
    return server


async def clients(stack: AsyncExitStack, servers) -> list:
    return [await stack.enter_async_context(connect_in_memory(server)) for server in servers]


async def spread(clients: list, count: int, tool: str, arguments) -> list[dict]:
    """``count`` concurrent calls, round-robin over ``clients``; ``arguments(i)`` for call ``i``."""
    results: list[dict] = [{}] * count

    async def one(index: int) -> None:
        results[index] = await clients[index % len(clients)].call_tool(tool, arguments(index))

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as group:
            for index in range(count):
                group.start_soon(one, index)
    return results


async def test_twenty_concurrent_calls_over_three_replicas_send_one_upstream_request(standin, redis_url):
    for path in ("/v1/search", "/v1/forecast"):  # every call arrives while the requests are out
        standin.fault(path, "slow", times=-1, delay=0.4)
    async with AsyncExitStack() as stack:
        replicas = await clients(stack, [replica(standin, redis_url) for _ in range(REPLICAS)])
        results = await spread(replicas, CALLERS, "get_current_weather", lambda i: {"location": "Tokyo"})
        assert (standin.count("/v1/search"), standin.count("/v1/forecast")) == (1, 1)
        # Later calls on any replica are answered from the cache the replicas share.
        again = await spread(replicas, REPLICAS, "get_current_weather", lambda i: {"location": "Tokyo"})
        assert (standin.count("/v1/search"), standin.count("/v1/forecast")) == (1, 1)
    assert not any(result.get("isError") for result in results + again)
    assert len({str(result["structuredContent"]["current"]) for result in results + again}) == 1


async def test_an_answer_fetched_by_one_replica_is_served_by_a_new_one_from_redis(standin, redis_url):
    async with AsyncExitStack() as stack:
        (first,) = await clients(stack, [replica(standin, redis_url)])
        await first.call_tool("get_current_weather", {"latitude": 35.6895, "longitude": 139.6917})
        (late,) = await clients(stack, [replica(standin, redis_url)])  # started after the fetch
        result = await late.call_tool("get_current_weather", {"latitude": 35.6895, "longitude": 139.6917})
    assert standin.count("/v1/forecast") == 1
    assert not result.get("isError")


async def test_a_breaker_opened_on_one_replica_is_open_on_the_others(standin, redis_url):
    standin.fault("/v1/forecast", "status", times=-1, status=503)
    settings = {"retries": 0, "breaker_threshold": 2, "breaker_cooldown": 60}
    where = {"latitude": 35.6895, "longitude": 139.6917}
    async with AsyncExitStack() as stack:
        one, two, three = await clients(stack, [replica(standin, redis_url, **settings) for _ in range(REPLICAS)])
        for _ in range(2):  # two failures, both seen by replica one
            failed = await one.call_tool("get_current_weather", where)
            assert failed["isError"] and "having trouble" in failed["content"][0]["text"]
        assert standin.count("/v1/forecast") == 2
        for other in (two, three):
            refused = await other.call_tool("get_current_weather", where)
            assert refused["isError"] and "paused" in refused["content"][0]["text"]
    assert standin.count("/v1/forecast") == 2  # the others never called the failing upstream


async def test_failures_spread_over_replicas_open_every_breaker(standin, redis_url):
    standin.fault("/v1/forecast", "status", times=-1, status=503)
    settings = {"retries": 0, "breaker_threshold": 3, "breaker_cooldown": 60}
    async with AsyncExitStack() as stack:
        replicas = await clients(stack, [replica(standin, redis_url, **settings) for _ in range(REPLICAS)])
        for index, client in enumerate(replicas):  # one failure each: none reaches 3 alone
            await client.call_tool("get_current_weather", {"latitude": 10.0 + index, "longitude": 20.0})
        refused = await replicas[0].call_tool("get_current_weather", {"latitude": 50.0, "longitude": 20.0})
    assert standin.count("/v1/forecast") == 3
    assert refused["isError"] and "paused" in refused["content"][0]["text"]


async def test_the_per_upstream_rate_limit_holds_across_replicas(standin, redis_url):
    async with AsyncExitStack() as stack:
        replicas = await clients(stack, [replica(standin, redis_url, rate_limit=4) for _ in range(REPLICAS)])
        results = await spread(
            replicas, 9, "get_current_weather", lambda i: {"latitude": 1.0 + i, "longitude": 2.0}
        )  # nine places: nine requests wanted, four allowed this minute
    assert standin.count("/v1/forecast") == 4
    refused = [result for result in results if result.get("isError")]
    assert len(refused) == 5
    assert all("request limit for the Open-Meteo forecast service" in r["content"][0]["text"] for r in refused)


async def test_without_redis_weather_answers_alone_warns_once_and_shares_again_when_it_returns(
    standin, redis_url, redis_server, caplog
):
    caplog.set_level(logging.WARNING, logger="plainmcp_weather.sharing")
    async with AsyncExitStack() as stack:
        one, two = await clients(stack, [replica(standin, redis_url) for _ in range(2)])
        redis_server.stop()
        for index in range(4):  # each works, on its own cache and fetches
            for client in (one, two):
                result = await client.call_tool("get_current_weather", {"latitude": 30.0 + index, "longitude": 1.0})
                assert not result.get("isError")
        assert standin.count("/v1/forecast") == 8  # no shared cache: each replica fetched for itself
        cached = await one.call_tool("get_current_weather", {"latitude": 30.0, "longitude": 1.0})
        assert not cached.get("isError") and standin.count("/v1/forecast") == 8  # its own cache still works
        down = [r for r in caplog.records if "unreachable" in r.getMessage()]
        assert len(down) == 2  # once per replica, not once per call

        redis_server.start()
        latitude = 60.0
        with anyio.fail_after(QUICK):  # shared again within about a second (the pause between tries)
            while True:
                await anyio.sleep(0.3)
                latitude += 0.5  # a new place each round: neither replica has it in its own cache
                before = standin.count("/v1/forecast")
                for client in (one, two):
                    await client.call_tool("get_current_weather", {"latitude": latitude, "longitude": 1.0})
                if standin.count("/v1/forecast") == before + 1:
                    break  # replica two was answered with what replica one stored in Redis
    assert any("reachable again" in r.getMessage() for r in caplog.records)


async def test_a_frozen_redis_delays_weather_by_one_command_timeout_not_one_per_call(standin, redis_url, redis_server):
    """SIGSTOP: connections stay open and nothing answers. The first call waits out one command timeout
    (2 s); the calls after it skip the shared layer while it pauses, and every call answers."""
    import signal

    async with AsyncExitStack() as stack:
        (one,) = await clients(stack, [replica(standin, redis_url)])
        redis_server.process.send_signal(signal.SIGSTOP)
        try:
            with anyio.fail_after(6):  # a liveness bound: one command timeout (2 s) in all, not one per call (12 s)
                for index in range(6):
                    result = await one.call_tool("get_current_weather", {"latitude": 40.0 + index, "longitude": 1.0})
                    assert not result.get("isError")
        finally:
            redis_server.process.send_signal(signal.SIGCONT)
    assert standin.count("/v1/forecast") == 6


ANSWERS = [
    ("get_current_weather", {"location": "Paris, France", "units": "imperial"}),
    ("get_forecast", {"location": "Sydney", "days": 3, "hourly": True}),
    ("get_forecast", {"location": "Miami", "source": "nws"}),
    ("search_locations", {"name": "Portland, ME"}),
    ("get_alerts", {"state": "Florida"}),
    ("get_air_quality", {"location": "London"}),
    ("get_marine_forecast", {"location": "Sydney", "days": 2}),
    ("compare_weather", {"locations": ["London", "Tokyo"]}),
    ("get_historical_weather", {"location": "Tokyo", "start_date": "2024-07-01", "end_date": "2024-07-03"}),
]


@pytest.mark.parametrize(("tool", "arguments"), ANSWERS, ids=[f"{tool}-{i}" for i, (tool, _) in enumerate(ANSWERS)])
async def test_an_answer_from_redis_is_the_answer_the_fetching_replica_gave(standin, redis_url, tool, arguments):
    """Every kind of upstream answer survives its trip through Redis as JSON: the other replica answers
    the same, without a request."""
    urls = {name: standin.url for name in ("air_quality_url", "marine_url", "archive_url")}
    async with AsyncExitStack() as stack:
        one, two = await clients(stack, [replica(standin, redis_url, **urls) for _ in range(2)])
        fetched = await one.call_tool(tool, arguments)
        requests = len(standin.requests())
        shared = await two.call_tool(tool, arguments)
    assert not fetched.get("isError"), fetched
    assert len(standin.requests()) == requests  # replica two asked the upstream nothing
    assert shared == fetched


async def test_replicas_share_alert_polls_and_each_subscriber_hears_a_new_alert_once(standin, redis_url):
    """Two replicas with a subscriber each to one area, polling every 0.5 s: the area is asked for
    about once per interval in all (not once per replica), and each subscriber hears the alert once."""
    uri = "weather://alerts/ME"
    heard: list[list[str]] = [[], []]
    async with AsyncExitStack() as stack:
        servers = [replica(standin, redis_url, alerts_poll=0.5) for _ in range(2)]
        listeners = []
        for index, server in enumerate(servers):
            client = await stack.enter_async_context(
                connect_in_memory(
                    server,
                    protocol_version="2025-11-25",
                    on_notification=lambda n, mine=heard[index]: (
                        mine.append(n.params["uri"]) if n.method == "notifications/resources/updated" else None
                    ),
                )
            )
            await client.subscribe(uri)
            listeners.append(client)
        await anyio.sleep(3.0)  # six intervals
        polls = standin.count("/alerts/active")
        standin.issue_alerts("ME", ["Winter Storm Warning"])
        with anyio.fail_after(QUICK):
            while not all(heard):
                await anyio.sleep(0.05)
        await anyio.sleep(1.5)  # two more intervals: nothing more to hear
    assert 5 <= polls <= 9  # alone, each replica would poll 6-7 times (12-14 in all)
    assert heard == [[uri], [uri]]


async def test_a_replica_serves_another_replicas_stale_answer_while_the_upstream_is_down(standin, redis_url):
    where = {"latitude": 35.6895, "longitude": 139.6917}
    settings = {"current_ttl": 0.3, "stale_for": 600, "retries": 0}
    async with AsyncExitStack() as stack:
        (one,) = await clients(stack, [replica(standin, redis_url, **settings)])
        fetched = await one.call_tool("get_current_weather", where)
        await anyio.sleep(0.5)  # past its TTL
        standin.fault("/v1/forecast", "status", times=-1, status=503)
        (late,) = await clients(stack, [replica(standin, redis_url, **settings)])  # nothing in its own cache
        stale = await late.call_tool("get_current_weather", where)
    assert not stale.get("isError"), stale
    assert stale["structuredContent"]["stale"] is True
    assert stale["structuredContent"]["current"] == fetched["structuredContent"]["current"]
    assert stale["structuredContent"]["retrieved_at"] == fetched["structuredContent"]["retrieved_at"]  # its stored-at
    assert standin.count("/v1/forecast") == 2  # the fetch, then the one failed attempt of the late replica


async def test_a_failing_upstream_is_asked_once_for_twenty_callers_on_three_replicas(redis_url):
    from tests.servers.weather.hostile import HostileUpstream

    with HostileUpstream() as hostile:  # a 503 after half a second
        url = f"{hostile.url}/unwell"
        async with AsyncExitStack() as stack:
            servers = []
            for _ in range(REPLICAS):
                server = build_server(config(forecast_url=url, retries=0), Deps())
                server.share(RedisState(redis_url, prefix=PREFIX))
                servers.append(server)
            replicas = await clients(stack, servers)
            results = await spread(replicas, CALLERS, "get_current_weather", lambda i: {"latitude": 1, "longitude": 2})
        assert hostile.requests("unwell") == 1
    assert all(result["isError"] for result in results)
    assert {result["content"][0]["text"] for result in results} == {
        "The Open-Meteo forecast service is having trouble (tried once). Try again in a minute."
    }


async def test_callers_on_another_replica_hear_the_fetching_replicas_wait_for_a_retry(redis_url):
    """The fetch runs on replica one; a caller on replica two, waiting for it through Redis, is told of
    its wait for a retry as progress, as a caller on replica one would be."""
    from tests.servers.weather.hostile import HostileUpstream

    heard: list[str | None] = []
    with HostileUpstream() as hostile:  # a 503 after half a second, each time
        settings = config(forecast_url=f"{hostile.url}/unwell", retries=1, backoff=1.0)
        servers = []
        for _ in range(2):
            server = build_server(settings, Deps(rand=lambda: 1.0))  # the full backoff: one second
            server.share(RedisState(redis_url, prefix=PREFIX))
            servers.append(server)
        async with AsyncExitStack() as stack:
            one, two = await clients(stack, servers)
            await anyio.sleep(0.3)  # the replicas' subscriptions to each other's waits are made
            results: list[dict] = []

            async def fetching() -> None:
                results.append(await one.call_tool("get_current_weather", {"latitude": 1, "longitude": 2}))

            async def waiting() -> None:
                await anyio.sleep(0.2)  # joins while replica one's first attempt is out

                def on_progress(progress: float, total: float | None, message: str | None) -> None:
                    heard.append(message)

                arguments = {"latitude": 1, "longitude": 2}
                results.append(await two.call_tool("get_current_weather", arguments, on_progress=on_progress))

            with anyio.fail_after(QUICK):
                async with anyio.create_task_group() as group:
                    group.start_soon(fetching)
                    group.start_soon(waiting)
        assert hostile.requests("unwell") == 2  # one fetch, its one retry: replica two asked nothing
    assert heard == ["The Open-Meteo forecast service is having trouble; retry 1 of 1 in 1 s."]
    assert len(results) == 2 and all(result["isError"] for result in results)
