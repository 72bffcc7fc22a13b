"""Identical concurrent requests share one upstream request, counted on the real stand-in over HTTP;
an error reaches every waiter once, and neither a cancelled waiter nor a cancelled leader breaks the
others."""

from __future__ import annotations

import gc
import weakref

import anyio
import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_weather.flight import SingleFlight
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.service import WeatherService
from plainmcp_weather.standin import StandIn
from plainmcp_weather.units import units_for

from .hostile import HostileUpstream
from .support import QUICK, config

pytestmark = pytest.mark.anyio

CALLERS = 20
TOKYO = {"latitude": 35.6895, "longitude": 139.6917}


@pytest.fixture
def standin():
    with StandIn() as running:
        yield running


def on(standin: StandIn, **overrides):
    """A config whose three upstreams are the stand-in."""
    return config(geocoding_url=standin.url, forecast_url=standin.url, nws_url=standin.url, **overrides)


async def call_all(client, count: int, arguments: dict | None = None) -> list[dict]:
    results: list[dict] = []

    async def one() -> None:
        results.append(await client.call_tool("get_current_weather", arguments or TOKYO))

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as task_group:
            for _ in range(count):
                task_group.start_soon(one)
    return results


async def test_twenty_concurrent_calls_for_one_place_send_one_forecast_request(standin):
    for path in ("/v1/search", "/v1/forecast"):  # all twenty arrive while each request is out
        standin.fault(path, "slow", times=-1, delay=0.4)
    server = build_server(on(standin, cache_size=0), Deps())  # no cache: only the merging can save requests
    async with connect_in_memory(server) as client:
        results = await call_all(client, CALLERS, {"location": "Tokyo"})
        assert standin.count("/v1/search") == 1 and standin.count("/v1/forecast") == 1
        # The flights ended with their calls: a later call is not answered from a finished one.
        await call_all(client, 1, {"location": "Tokyo"})
    assert standin.count("/v1/search") == 2 and standin.count("/v1/forecast") == 2
    assert len(results) == CALLERS and not any(result.get("isError") for result in results)
    assert len({str(result["structuredContent"]["current"]) for result in results}) == 1


async def test_a_failing_fetch_reaches_every_waiter_with_one_request():
    with HostileUpstream() as hostile:  # a 503 after half a second
        server = build_server(config(forecast_url=f"{hostile.url}/unwell", retries=0), Deps())
        async with connect_in_memory(server) as client:
            results = await call_all(client, CALLERS)
        assert hostile.requests("unwell") == 1
    assert all(result["isError"] for result in results)
    assert {result["content"][0]["text"] for result in results} == {
        "The Open-Meteo forecast service is having trouble (tried once). Try again in a minute."
    }


async def wait_for_requests(standin: StandIn, count: int) -> None:
    with anyio.fail_after(QUICK):
        while standin.count("/v1/forecast") < count:
            await anyio.sleep(0.01)


async def test_cancelled_leader_hands_the_fetch_to_the_next_waiter(standin):
    standin.fault("/v1/forecast", "slow", times=-1, delay=0.4)
    service = WeatherService(on(standin))
    units = units_for("metric")
    answers: list = []
    leader = anyio.CancelScope()

    async def lead() -> None:
        with leader:
            await service.weather(1.0, 2.0, units, current=True)
        assert leader.cancelled_caught

    async def follow() -> None:
        answers.append(await service.weather(1.0, 2.0, units, current=True))

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(lead)
            await wait_for_requests(standin, 1)
            task_group.start_soon(follow)
            task_group.start_soon(follow)
            await anyio.sleep(0.05)  # both wait on the leader's flight
            leader.cancel()
    await service.aclose()
    assert len(answers) == 2 and answers[0].value == answers[1].value
    assert standin.count("/v1/forecast") == 2  # the leader's (abandoned), then one for both followers
    assert len(service.flights) == 0


async def test_cancelled_waiter_leaves_the_others_their_answer(standin):
    standin.fault("/v1/forecast", "slow", times=-1, delay=0.4)
    service = WeatherService(on(standin))
    units = units_for("metric")
    answers: list = []
    scopes = [anyio.CancelScope() for _ in range(3)]

    async def caller(scope: anyio.CancelScope) -> None:
        with scope:
            answers.append(await service.weather(1.0, 2.0, units, current=True))

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(caller, scopes[0])
            await wait_for_requests(standin, 1)
            task_group.start_soon(caller, scopes[1])
            task_group.start_soon(caller, scopes[2])
            await anyio.sleep(0.05)
            scopes[1].cancel()
    await service.aclose()
    assert len(answers) == 2
    assert standin.count("/v1/forecast") == 1
    assert len(service.flights) == 0


async def test_single_flight_lets_the_next_caller_lead_after_the_leader_is_cancelled():
    flight = SingleFlight()
    release = anyio.Event()
    results: list[str] = []
    leader = anyio.CancelScope()

    async def work() -> str:
        await release.wait()
        return "value"

    async def lead() -> None:
        with leader:
            await flight.run("key", work)

    async def follow() -> None:
        results.append(await flight.run("key", work))

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(lead)
            await anyio.sleep(0.01)
            task_group.start_soon(follow)
            await anyio.sleep(0.01)
            leader.cancel()
            await anyio.sleep(0.01)  # the follower now leads, and waits on `release` itself
            release.set()
    assert results == ["value"] and flight.runs == 2 and len(flight) == 0


async def test_single_flight_gives_every_waiter_the_leaders_exception():
    flight = SingleFlight()
    release = anyio.Event()
    failures: list[Exception] = []

    async def work() -> None:
        await release.wait()
        raise LookupError("upstream says no")

    async def call() -> None:
        try:
            await flight.run("key", work)
        except LookupError as error:
            failures.append(error)

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as task_group:
            for _ in range(3):
                task_group.start_soon(call)
            await anyio.sleep(0.01)
            release.set()
    assert [str(error) for error in failures] == ["upstream says no"] * 3 and flight.runs == 1


async def test_single_flight_failure_frees_what_the_work_held_without_the_garbage_collector():
    """Regression: the leader's frame held the flight, the flight the error, the error's traceback
    the frame: a cycle that kept every failed fetch's parsed body alive until a full collection (twenty
    4 MiB bodies of small objects at once reached 2 GB)."""
    flight = SingleFlight()
    held: list[weakref.ref] = []

    class Body:
        pass

    async def work() -> None:
        body = Body()
        held.append(weakref.ref(body))
        raise LookupError("unreadable")

    gc.disable()
    try:
        with pytest.raises(LookupError):
            await flight.run("key", work)
        assert held[0]() is None
    finally:
        gc.enable()
