"""``get_forecast`` as a task (issue 17), on the real server process over stdio against the real
stand-in on 127.0.0.1, in both eras: a call waiting on an upstream retry (429 with ``Retry-After``)
answers with a taskId at once; the client polls it (2026-07-28, tasks extension declared) or reads it
with ``tasks/result`` (2025-11-25, ``params.task``), or cancels it, and then no retry is sent.
What reached the upstream is read off the stand-in's request counts."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Client, ErrorCode, MCPError, connect_stdio
from plainmcp_weather.standin import StandIn

from .. import task_calls
from ..task_calls import LEGACY, MODERN, rpc
from .support import QUICK, SERVER_MODULE

pytestmark = pytest.mark.anyio

POLLS = 800  # the stand-in's retries make tasks slower to settle
FORECAST = {"name": "get_forecast", "arguments": {"latitude": 35.6895, "longitude": 139.6917, "days": 2}}


@pytest.fixture
def standin():
    with StandIn() as running:
        yield running


def command(standin: StandIn) -> list[str]:
    urls = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
    return [*SERVER_MODULE, *urls, "--timeout", "2", "--log-level", "warning"]


async def settled(client: Client, task_id: str, *statuses: str, modern: bool = True) -> dict[str, Any]:
    return await task_calls.settled(client, task_id, *statuses, modern=modern, polls=POLLS)


async def reached(standin: StandIn, count: int) -> None:
    """Wait until the stand-in has had ``count`` forecast requests."""
    for _ in range(POLLS):
        if standin.count("/v1/forecast") >= count:
            return
        await anyio.sleep(0.01)
    raise AssertionError(f"forecast requests: {standin.count('/v1/forecast')}")


def daily_of(result: dict[str, Any]) -> list[Any]:
    return result["structuredContent"]["daily"]


async def test_get_forecast_says_it_may_run_as_a_task(standin):
    async with connect_stdio(command(standin)) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    assert tools["get_forecast"]["execution"] == {"taskSupport": "optional"}
    assert all("execution" not in tools[name] for name in ("search_locations", "get_current_weather", "get_alerts"))


async def test_modern_forecast_waiting_on_a_retry_is_a_task_the_client_polls(standin):
    standin.fault("/v1/forecast", "status", times=1, status=429, retry_after="1")
    async with connect_stdio(command(standin), protocol_version=MODERN) as client:
        with anyio.fail_after(QUICK):
            created = await rpc(client, "tools/call", FORECAST)
            await reached(standin, 1)  # the first attempt was refused; the task waits for its retry
            waiting = await rpc(client, "tasks/get", {"taskId": created["taskId"]})
            done = await settled(client, created["taskId"], "completed", "failed")
    assert created["resultType"] == "task" and created["status"] == "working" and "content" not in created
    assert waiting["status"] == "working" and "result" not in waiting
    assert done["status"] == "completed" and "isError" not in done["result"]
    assert len(daily_of(done["result"])) == 2
    assert standin.count("/v1/forecast") == 2


async def test_modern_cancel_during_the_retry_wait_sends_no_retry(standin):
    standin.fault("/v1/forecast", "status", times=1, status=429, retry_after="1")
    async with connect_stdio(command(standin), protocol_version=MODERN) as client:
        with anyio.fail_after(QUICK):
            task_id = (await rpc(client, "tools/call", FORECAST))["taskId"]
            await reached(standin, 1)
            await rpc(client, "tasks/cancel", {"taskId": task_id})
            cancelled = await settled(client, task_id, "cancelled")
            await anyio.sleep(1.5)  # past the Retry-After: a retry still under way would have come by now
            retries = standin.count("/v1/forecast") - 1
            after = await rpc(client, "tasks/get", {"taskId": task_id})
    assert cancelled["status"] == "cancelled" and after["status"] == "cancelled" and "result" not in after
    assert retries == 0


async def test_modern_bad_arguments_are_refused_at_once_not_as_a_task(standin):
    async with connect_stdio(command(standin), protocol_version=MODERN) as client:
        with anyio.fail_after(QUICK):
            refused = await rpc(
                client, "tools/call", {"name": "get_forecast", "arguments": {"location": "x", "days": 0}}
            )
    assert refused["resultType"] == "complete" and refused["isError"] is True and "taskId" not in refused
    assert standin.count("/") == 0


async def test_modern_client_without_the_extension_gets_an_ordinary_answer(standin):
    async with connect_stdio(command(standin), protocol_version=MODERN) as client:
        with anyio.fail_after(QUICK):
            result = await rpc(client, "tools/call", FORECAST, extension=False)
    assert result["resultType"] == "complete" and "taskId" not in result
    assert len(daily_of(result)) == 2


async def test_legacy_forecast_with_params_task_is_read_with_tasks_result(standin):
    standin.fault("/v1/forecast", "status", times=1, status=429, retry_after="1")
    statuses: list[dict[str, Any]] = []

    def on_notification(notification: Any) -> None:
        if notification.method == "notifications/tasks/status":
            statuses.append(notification.params)

    async with connect_stdio(command(standin), protocol_version=LEGACY, on_notification=on_notification) as client:
        with anyio.fail_after(QUICK):
            created = await client.session.request("tools/call", {**FORECAST, "task": {"ttl": 60_000}})
            task_id = created["task"]["taskId"]
            await reached(standin, 1)
            waiting = await client.session.request("tasks/get", {"taskId": task_id})
            result = await client.session.request("tasks/result", {"taskId": task_id})
            listed = await client.session.request("tasks/list", {})
            for _ in range(POLLS):  # the status notification may trail the result
                if statuses:
                    break
                await anyio.sleep(0.01)
    assert created["task"]["status"] == "working" and waiting["status"] == "working"
    assert "isError" not in result and len(daily_of(result)) == 2
    assert [(task["taskId"], task["status"]) for task in listed["tasks"]] == [(task_id, "completed")]
    assert statuses and statuses[-1]["taskId"] == task_id and statuses[-1]["status"] == "completed"
    assert standin.count("/v1/forecast") == 2


async def test_legacy_cancel_during_the_retry_wait_sends_no_retry(standin):
    standin.fault("/v1/forecast", "status", times=1, status=429, retry_after="1")
    async with connect_stdio(command(standin), protocol_version=LEGACY) as client:
        with anyio.fail_after(QUICK):
            task_id = (await client.session.request("tools/call", {**FORECAST, "task": {}}))["task"]["taskId"]
            await reached(standin, 1)
            await client.session.request("tasks/cancel", {"taskId": task_id})
            cancelled = await settled(client, task_id, "cancelled", modern=False)
            await anyio.sleep(1.5)  # past the Retry-After
    assert cancelled["status"] == "cancelled"
    assert standin.count("/v1/forecast") == 1


async def test_legacy_other_tools_refuse_params_task(standin):
    async with connect_stdio(command(standin), protocol_version=LEGACY) as client:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as refused:
            await client.session.request(
                "tools/call", {"name": "get_current_weather", "arguments": {"latitude": 1, "longitude": 2}, "task": {}}
            )
    assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
    assert standin.count("/") == 0
