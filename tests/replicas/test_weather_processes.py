"""Three real ``plainmcp-weather --transport http --redis URL`` processes, one real Redis, the real
stand-in upstream: 20 concurrent calls spread over the three send the upstream one request per API."""

from __future__ import annotations

import contextlib

import anyio
import pytest
from plainmcp.http_client import connect_http
from plainmcp_weather.standin import StandIn

from tests.e2e.http_server import server_process
from tests.servers.weather.support import QUICK

pytestmark = pytest.mark.anyio

CALLERS = 20
MODERN = "2026-07-28"


@pytest.fixture
def standin():
    with StandIn() as running:
        yield running


@contextlib.contextmanager
def replicas(standin: StandIn, redis_url: str | None, count: int):
    upstreams = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
    shared = ("--redis", redis_url) if redis_url else ()
    with contextlib.ExitStack() as stack:
        yield [
            stack.enter_context(server_process(*upstreams, *shared, "--backoff", "0.01", module="plainmcp_weather"))
            for _ in range(count)
        ]


@pytest.mark.parametrize(("shared", "requests"), [(True, 1), (False, 3)], ids=["redis", "alone"])
async def test_twenty_calls_over_three_processes_send_one_request_per_upstream(standin, request, shared, requests):
    """With ``--redis``, one request per upstream; without (the control), one per process."""
    for path in ("/v1/search", "/v1/forecast"):
        standin.fault(path, "slow", times=-1, delay=0.5)
    redis_url = request.getfixturevalue("redis_url") if shared else None
    with replicas(standin, redis_url, 3) as servers:
        results: list[dict] = []
        async with contextlib.AsyncExitStack() as stack:
            clients = [
                await stack.enter_async_context(connect_http(server.url, protocol_version=MODERN)) for server in servers
            ]

            async def one(index: int) -> None:
                arguments = {"location": "Sydney", "units": "imperial"}
                results.append(await clients[index % 3].call_tool("get_current_weather", arguments))

            with anyio.fail_after(QUICK):
                async with anyio.create_task_group() as group:
                    for index in range(CALLERS):
                        group.start_soon(one, index)
        logs = "\n".join(server.log() for server in servers)
    assert (standin.count("/v1/search"), standin.count("/v1/forecast")) == (requests, requests), logs
    assert len(results) == CALLERS and not any(result.get("isError") for result in results)
    assert {result["structuredContent"]["location"]["country"] for result in results} == {"Australia"}


async def test_processes_answer_without_redis_warn_once_and_share_again_when_it_returns(
    standin, redis_url, redis_server
):
    with replicas(standin, redis_url, 2) as servers:
        async with contextlib.AsyncExitStack() as stack:
            one, two = [
                await stack.enter_async_context(connect_http(server.url, protocol_version=MODERN)) for server in servers
            ]

            async def weather(client, latitude: float) -> None:
                result = await client.call_tool("get_current_weather", {"latitude": latitude, "longitude": 7.0})
                assert not result.get("isError"), result

            redis_server.stop()
            with anyio.fail_after(QUICK):
                for index in range(3):
                    await weather(one, 10.0 + index)
                    await weather(two, 10.0 + index)
            assert standin.count("/v1/forecast") == 6  # each on its own
            redis_server.start()
            latitude = 50.0
            with anyio.fail_after(QUICK):
                while True:
                    await anyio.sleep(0.5)
                    latitude += 1
                    before = standin.count("/v1/forecast")
                    await weather(one, latitude)
                    await weather(two, latitude)
                    if standin.count("/v1/forecast") == before + 1:
                        break  # two answered with what one stored in Redis
        logs = [server.log() for server in servers]
    for log in logs:
        assert log.count("the replicas' shared cache is unreachable") == 1, log
        assert "Traceback" not in log
    assert any("shared cache is reachable again" in log for log in logs)
