"""Tasks in the legacy era (2025-11-25, the experimental ``tasks`` capability, v1): the client asks for a
task with ``params.task``; ``tasks/get``, ``tasks/result``, ``tasks/list`` and ``tasks/cancel`` serve the
connection's own tasks. The same handlers as in 2026-07-28 (``ctx.start_task()``)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Client, ErrorCode, MCPError
from plainmcp.testing import connect_in_memory

from .test_tasks import Fixture, fixture_on

pytestmark = pytest.mark.anyio

LEGACY = "2025-11-25"
POLLS = 300


async def rpc(client: Client, method: str, params: dict[str, Any]) -> Any:
    return await client.session.request(method, params)


@pytest.fixture(params=["memory", "redis"])
def stored(request: pytest.FixtureRequest) -> Fixture:
    """The test server with its task records in memory, or in a real Redis."""
    return fixture_on(request)


async def status_until(client: Client, task_id: str, *statuses: str) -> dict[str, Any]:
    for _ in range(POLLS):
        task = await rpc(client, "tasks/get", {"taskId": task_id})
        if task["status"] in statuses:
            return task
        await anyio.sleep(0.01)
    raise AssertionError(task)


async def test_initialize_declares_the_tasks_capability_from_2025_11_25_only():
    fixture = Fixture()
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        current = client.server_capabilities
        tools, _ = await client.list_tools()
    async with connect_in_memory(fixture.server, protocol_version="2025-06-18") as client:
        older = client.server_capabilities
    assert current["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert "tasks" not in older
    assert {tool["name"]: tool.get("execution") for tool in tools}["must"] == {"taskSupport": "required"}


async def test_a_task_asked_for_runs_and_its_result_waits_for_the_end():
    fixture = Fixture()
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        created = await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": {"ttl": 60_000}})
        task = created["task"]
        assert set(task) == {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}
        assert task["status"] == "working" and task["ttl"] == 60_000
        async with anyio.create_task_group() as group:
            results: list[Any] = []

            async def wait_result() -> None:
                results.append(await rpc(client, "tasks/result", {"taskId": task["taskId"]}))

            group.start_soon(wait_result)
            await anyio.sleep(0.05)
            assert results == []  # tasks/result blocks while the task works
            fixture.release.set()
        listed = await rpc(client, "tasks/list", {})
    (result,) = results
    assert result["content"] == [{"type": "text", "text": "worked"}]
    assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task["taskId"]}
    assert [entry["taskId"] for entry in listed["tasks"]] == [task["taskId"]]
    assert listed["tasks"][0]["status"] == "completed"


async def test_a_handler_that_never_starts_a_task_is_kept_as_a_completed_one():
    fixture = Fixture()
    fixture.release.set()
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        created = await rpc(client, "tools/call", {"name": "plain_optional", "arguments": {}, "task": {}})
        done = await status_until(client, created["task"]["taskId"], "completed")
        result = await rpc(client, "tasks/result", {"taskId": done["taskId"]})
    assert result["content"][0]["text"] == "plain"


async def test_required_without_a_task_and_forbidden_with_one_are_method_not_found():
    async with connect_in_memory(Fixture().server, protocol_version=LEGACY) as client:
        with pytest.raises(MCPError) as required:
            await rpc(client, "tools/call", {"name": "must", "arguments": {}})
        with pytest.raises(MCPError) as forbidden:
            await rpc(client, "tools/call", {"name": "plain", "arguments": {}, "task": {}})
    assert required.value.code == forbidden.value.code == ErrorCode.METHOD_NOT_FOUND


async def test_cancel_returns_the_task_and_refuses_a_finished_one():
    fixture = Fixture()
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        task_id = (await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": {}}))["task"]["taskId"]
        cancelled = await rpc(client, "tasks/cancel", {"taskId": task_id})
        with pytest.raises(MCPError) as again:
            await rpc(client, "tasks/cancel", {"taskId": task_id})
        with pytest.raises(MCPError) as result:
            await rpc(client, "tasks/result", {"taskId": task_id})
    assert cancelled["status"] == "cancelled" and cancelled["taskId"] == task_id
    assert again.value.code == ErrorCode.INVALID_PARAMS
    assert result.value.code == ErrorCode.INVALID_REQUEST


async def test_a_failed_task_gives_its_error_to_tasks_result():
    async with connect_in_memory(Fixture().server, protocol_version=LEGACY) as client:
        task_id = (await rpc(client, "tools/call", {"name": "broken", "arguments": {}, "task": {}}))["task"]["taskId"]
        with pytest.raises(MCPError) as failed:
            await rpc(client, "tasks/result", {"taskId": task_id})
        assert (await rpc(client, "tasks/get", {"taskId": task_id}))["status"] == "failed"
    assert failed.value.code == ErrorCode.INVALID_PARAMS and failed.value.message == "bad state"


async def test_another_session_cannot_see_or_cancel_a_task():
    fixture = Fixture()
    server = fixture.server
    async with connect_in_memory(server, protocol_version=LEGACY) as owner:
        task_id = (await rpc(owner, "tools/call", {"name": "work", "arguments": {}, "task": {}}))["task"]["taskId"]
        async with connect_in_memory(server, protocol_version=LEGACY) as stranger:
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                with pytest.raises(MCPError) as refused:
                    await rpc(stranger, method, {"taskId": task_id})
                assert refused.value.code == ErrorCode.INVALID_PARAMS
            assert (await rpc(stranger, "tasks/list", {}))["tasks"] == []
        assert (await rpc(owner, "tasks/get", {"taskId": task_id}))["status"] == "working"
        await rpc(owner, "tasks/cancel", {"taskId": task_id})


async def test_input_inside_a_legacy_task_is_a_request_to_the_client():
    fixture = Fixture()
    asked: list[str] = []

    async def on_elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params["message"])
        return {"action": "accept", "content": {"ok": True}}

    async with connect_in_memory(fixture.server, protocol_version=LEGACY, elicitation=on_elicit) as client:
        task_id = (await rpc(client, "tools/call", {"name": "ask_two", "arguments": {}, "task": {}}))["task"]["taskId"]
        result = await rpc(client, "tasks/result", {"taskId": task_id})
    assert sorted(asked) == ["A?", "B?"]
    assert result["content"][0]["text"] == "a=True b=True"


async def test_a_connection_that_ends_takes_its_tasks_with_it():
    fixture = Fixture()
    server = fixture.server
    async with server.running():
        async with connect_in_memory(server, protocol_version=LEGACY) as client:
            await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": {}})
            assert len(server.tasks) == 1
        for _ in range(POLLS):
            if fixture.stopped:
                break
            await anyio.sleep(0.01)
        assert len(server.tasks) == 0
    assert fixture.stopped == 1  # the handler was cancelled, not left running for its TTL


async def test_status_changes_are_told_to_the_owning_connection():
    fixture = Fixture()
    seen: list[Any] = []
    async with connect_in_memory(fixture.server, protocol_version=LEGACY, on_notification=seen.append) as client:
        task_id = (await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": {}}))["task"]["taskId"]
        fixture.release.set()
        await rpc(client, "tasks/result", {"taskId": task_id})
        for _ in range(POLLS):
            if any(n.method == "notifications/tasks/status" for n in seen):
                break
            await anyio.sleep(0.01)
    statuses = [n.params for n in seen if n.method == "notifications/tasks/status"]
    assert [(p["taskId"], p["status"]) for p in statuses] == [(task_id, "completed")]
    assert set(statuses[0]) == {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}


@pytest.mark.parametrize(
    ("asked", "kept"), [({"ttl": 10**12}, 600_000), ({"ttl": 5000}, 5000), ({"ttl": -1}, 600_000), ({}, 600_000)]
)
async def test_a_requested_ttl_is_capped_at_the_servers(asked, kept):
    fixture = Fixture()
    fixture.release.set()
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        created = await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": asked})
    assert created["task"]["ttl"] == kept


async def test_tasks_result_answers_once_the_ttl_ends(stored):
    fixture = stored
    """Issue 26 item 8: ``tasks/result`` on a task still working when its ttl ends answers an error saying
    the task expired, instead of waiting forever (the handler is cancelled with it)."""
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        created = await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": {"ttl": 300}})
        with anyio.fail_after(5), pytest.raises(MCPError) as expired:
            await rpc(client, "tasks/result", {"taskId": created["task"]["taskId"]})
        with pytest.raises(MCPError) as gone:
            await rpc(client, "tasks/get", {"taskId": created["task"]["taskId"]})
        for _ in range(POLLS):
            if fixture.stopped:
                break
            await anyio.sleep(0.01)
    assert expired.value.code == ErrorCode.INVALID_PARAMS
    assert "expired" in expired.value.message and "300 ms" in expired.value.message
    assert gone.value.code == ErrorCode.INVALID_PARAMS
    assert fixture.stopped == 1


async def test_a_legacy_task_is_cancelled_and_its_result_refused_on_either_store(stored):
    fixture = stored
    async with connect_in_memory(fixture.server, protocol_version=LEGACY) as client:
        task_id = (await rpc(client, "tools/call", {"name": "work", "arguments": {}, "task": {}}))["task"]["taskId"]
        cancelled = await rpc(client, "tasks/cancel", {"taskId": task_id})
        with anyio.fail_after(5), pytest.raises(MCPError) as result:
            await rpc(client, "tasks/result", {"taskId": task_id})
        listed = await rpc(client, "tasks/list", {})
    assert cancelled["status"] == "cancelled"
    assert result.value.code == ErrorCode.INVALID_REQUEST
    assert [(t["taskId"], t["status"]) for t in listed["tasks"]] == [(task_id, "cancelled")]
