"""Progress while retrying (issue 21): a call that waits for a retry or a ``Retry-After`` tells its
client, as progress (when the call asked for it) and as a log message, so a long wait is never silent."""

from __future__ import annotations

import anyio
import httpx
import pytest
from plainmcp import connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.standin import StandIn

from .support import QUICK, SERVER_MODULE, Recorder, config

pytestmark = pytest.mark.anyio

RATE_LIMITED = "The Open-Meteo forecast service is rate-limiting requests"


def limited(retry_after: str):
    return lambda request: httpx.Response(429, headers={"Retry-After": retry_after}, json={"reason": "slow down"})


class Heard:
    """What a client heard during one call: progress reports and log messages."""

    def __init__(self) -> None:
        self.progress: list[tuple[float, float | None, str | None]] = []
        self.logs: list[dict] = []

    def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.progress.append((progress, total, message))

    def on_notification(self, notification) -> None:
        if notification.method == "notifications/message":
            self.logs.append(notification.params)


async def test_a_retry_after_wait_is_reported_as_progress_and_a_log_message():
    recorder = Recorder()
    recorder.failures.append(("/v1/forecast", limited("3")))
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        recorder.failures.clear()  # the upstream is back after the wait

    heard = Heard()
    server = build_server(config(), Deps(transport=recorder.transport(), sleep=sleep))
    async with connect_in_memory(server, on_notification=heard.on_notification) as client:
        result = await client.call_tool("get_forecast", {"latitude": 1, "longitude": 2}, on_progress=heard.on_progress)
    assert not result.get("isError")
    assert sleeps == [3.0]
    message = f"{RATE_LIMITED}; retry 1 of 2 in 3 s."
    assert heard.progress == [(1, None, message)]
    assert [(log["level"], log["data"], log["logger"]) for log in heard.logs] == [
        ("warning", message, "plainmcp-weather")
    ]


async def test_a_long_wait_is_reported_again_every_five_seconds():
    recorder = Recorder()
    recorder.failures.append(("/v1/forecast", limited("12")))
    sleeps: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        recorder.failures.clear()

    heard = Heard()
    server = build_server(config(max_retry_after=30), Deps(transport=recorder.transport(), sleep=sleep))
    async with connect_in_memory(server) as client:
        await client.call_tool("get_forecast", {"latitude": 1, "longitude": 2}, on_progress=heard.on_progress)
    assert sleeps == [5.0, 5.0, 2.0]
    assert [progress for progress, _, _ in heard.progress] == [1, 2, 3]
    assert [message.rsplit(" in ", 1)[1] for _, _, message in heard.progress] == ["12 s.", "7 s.", "2 s."]


async def test_backoff_waits_after_5xx_are_reported_too():
    recorder = Recorder()
    recorder.failures.append(("/v1/search", lambda request: httpx.Response(503, json={})))
    heard = Heard()
    server = build_server(config(retries=2), Deps(transport=recorder.transport()))
    async with connect_in_memory(server) as client:
        result = await client.call_tool("search_locations", {"name": "Tokyo"}, on_progress=heard.on_progress)
    assert result["isError"] is True and recorder.count("/v1/search") == 3
    assert [message for _, _, message in heard.progress] == [
        "The Open-Meteo geocoding service is having trouble; retry 1 of 2 in 0 s.",
        "The Open-Meteo geocoding service is having trouble; retry 2 of 2 in 0 s.",
    ]


async def test_a_caller_that_joined_a_fetch_under_way_hears_its_waits():
    """Two clients ask for the same forecast; the second joins the first's fetch while it waits,
    and hears the next wait as the first does (the upstream sees one fetch)."""
    recorder = Recorder()
    recorder.failures.append(("/v1/forecast", limited("1")))
    server = build_server(config(), Deps(transport=recorder.transport()))
    first, second = Heard(), Heard()
    arguments = {"latitude": 1, "longitude": 2}
    async with connect_in_memory(server) as one, connect_in_memory(server) as other:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: one.call_tool("get_forecast", arguments, on_progress=first.on_progress))
            with anyio.fail_after(QUICK):
                while recorder.count("/v1/forecast") < 1:
                    await anyio.sleep(0.01)
            tasks.start_soon(lambda: other.call_tool("get_forecast", arguments, on_progress=second.on_progress))
            with anyio.fail_after(QUICK):
                while recorder.count("/v1/forecast") < 2:
                    await anyio.sleep(0.01)
            recorder.failures.clear()  # the third attempt succeeds
    assert recorder.count("/v1/forecast") == 3
    assert [progress for progress, _, _ in first.progress] == [1, 2]
    assert [message for _, _, message in second.progress] == [f"{RATE_LIMITED}; retry 2 of 2 in 1 s."]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_stdio_client_hears_the_wait_in_both_eras(version):
    """The real process against the stand-in answering 429 with Retry-After: 1 once."""
    heard = Heard()
    with StandIn() as standin:
        standin.fault("/v1/forecast", "status", times=1, status=429, retry_after="1")
        urls = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
        async with connect_stdio(
            [*SERVER_MODULE, *urls], protocol_version=version, log_level="info", on_notification=heard.on_notification
        ) as client:
            with anyio.fail_after(QUICK):
                result = await client.call_tool(
                    "get_current_weather", {"latitude": 1, "longitude": 2}, on_progress=heard.on_progress
                )
        assert standin.count("/v1/forecast") == 2
    assert not result.get("isError")
    message = f"{RATE_LIMITED}; retry 1 of 2 in 1 s."
    assert heard.progress == [(1, None, message)]
    assert [log["data"] for log in heard.logs if log["level"] == "warning"] == [message]
