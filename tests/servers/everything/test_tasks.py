"""The tasks fixtures the conformance suite drives (``greet``, ``slow_compute``, ``failing_job``,
``protocol_error_job``, ``confirm_delete``, ``multi_input``, ``test_tool_with_task``), in both eras."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Client
from plainmcp.testing import connect_in_memory
from plainmcp_everything import Config, build_server

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
POLLS = 300


async def rpc(client: Client, method: str, params: dict[str, Any], extension: bool = True) -> Any:
    capabilities: dict[str, Any] = {"elicitation": {}}
    if extension:
        capabilities["extensions"] = {TASKS: {}}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    return await client.session.request(method, {**params, "_meta": meta})


async def settled(client: Client, task_id: str, *statuses: str) -> dict[str, Any]:
    for _ in range(POLLS):
        detail = await rpc(client, "tasks/get", {"taskId": task_id})
        if detail["status"] in statuses:
            return detail
        await anyio.sleep(0.01)
    raise AssertionError(detail)


def text(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


async def test_greet_and_an_instant_slow_compute_answer_at_once():
    async with connect_in_memory(build_server(Config()), protocol_version=MODERN) as client:
        hello = await rpc(client, "tools/call", {"name": "greet", "arguments": {"name": "World"}})
        instant = await rpc(client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0, "label": "x"}})
    assert hello["resultType"] == "complete" and text(hello) == "Hello, World!"
    assert instant["resultType"] == "complete" and text(instant) == "Computed x in 0 s"


async def test_test_tool_with_task_asks_first_then_goes_on_as_a_task():
    async with connect_in_memory(build_server(Config()), protocol_version=MODERN) as client:
        first = await rpc(client, "tools/call", {"name": "test_tool_with_task", "arguments": {}})
        (key,) = first["inputRequests"]
        answer = {key: {"action": "accept", "content": {"name": "Alice"}}}
        second = await rpc(
            client,
            "tools/call",
            {
                "name": "test_tool_with_task",
                "arguments": {},
                "inputResponses": answer,
                "requestState": first["requestState"],
            },
        )
        done = await settled(client, second["taskId"], "completed", "failed")
    assert first["resultType"] == "input_required" and "taskId" not in first
    assert second["resultType"] == "task" and "requestState" not in second
    assert text(done["result"]) == "Hello from the task, Alice!"


async def test_confirm_delete_waits_for_the_confirmation():
    async with connect_in_memory(build_server(Config()), protocol_version=MODERN) as client:
        task_id = (await rpc(client, "tools/call", {"name": "confirm_delete", "arguments": {"filename": "a.txt"}}))[
            "taskId"
        ]
        parked = await settled(client, task_id, "input_required")
        (key,) = parked["inputRequests"]
        await rpc(
            client,
            "tasks/update",
            {"taskId": task_id, "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}}},
        )
        done = await settled(client, task_id, "completed")
    assert text(done["result"]) == "Deleted a.txt"


async def test_failing_and_protocol_error_jobs_end_as_the_suite_expects():
    async with connect_in_memory(build_server(Config()), protocol_version=MODERN) as client:
        failing = (await rpc(client, "tools/call", {"name": "failing_job", "arguments": {}}))["taskId"]
        broken = (await rpc(client, "tools/call", {"name": "protocol_error_job", "arguments": {}}))["taskId"]
        protocol_error = await settled(client, broken, "failed", "completed")
        tool_error = await settled(client, failing, "failed", "completed")
    assert tool_error["status"] == "completed" and tool_error["result"]["isError"] is True
    assert protocol_error["status"] == "failed" and protocol_error["error"]["code"] == -32603


@pytest.mark.parametrize("era", ["2025-11-25", MODERN])
async def test_a_client_without_the_extension_gets_ordinary_calls(era):
    async with connect_in_memory(build_server(Config()), protocol_version=era) as client:
        if era == MODERN:
            result = await rpc(
                client, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0.05}}, extension=False
            )
        else:
            result = await client.call_tool("slow_compute", {"seconds": 0.05})
    assert "taskId" not in result and text(result) == "Computed result in 0.05 s"
