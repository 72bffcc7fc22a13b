"""``query`` as a task (issue 17), on the real server process over stdio in both eras: a 2026-07-28
client that declared the tasks extension gets a taskId at once and polls or cancels; a 2025-11-25
client sends ``params.task`` and reads the result with ``tasks/result``. ``execute`` never becomes a
task (its confirmation stays a request)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import ErrorCode, MCPError, connect_stdio

from ..task_calls import LEGACY, MODERN, rpc, settled
from .support import STDIO_COMMAND, WAIT, folder_state, make_shop

pytestmark = pytest.mark.anyio

POLLS = 500

#: A read that runs until stopped (far past any test): its deadline is --timeout, 60 s here.
ENDLESS = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
CUSTOMERS = "SELECT id, name FROM customers WHERE id <= ? ORDER BY id"


def command(path: Path, *extra: str) -> list[str]:
    return [*STDIO_COMMAND, "--db", str(path), "--timeout", "60", "--no-watch", *extra]


def query(sql: str, params: list[Any] | None = None) -> dict[str, Any]:
    return {"name": "query", "arguments": {"sql": sql, **({"params": params} if params is not None else {})}}


async def test_query_says_it_may_run_as_a_task_and_execute_does_not(tmp_path):
    async with connect_stdio(command(make_shop(tmp_path), "--allow-write")) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    assert tools["query"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["execute"] and "execution" not in tools["list_tables"]


async def test_modern_query_becomes_a_task_whose_result_is_the_rows(tmp_path):
    async with connect_stdio(command(make_shop(tmp_path)), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            created = await rpc(client, "tools/call", query(CUSTOMERS, [2]))
            done = await settled(client, created["taskId"], "completed", "failed")
    assert created["resultType"] == "task" and created["status"] == "working" and "content" not in created
    assert done["status"] == "completed" and "isError" not in done["result"]
    assert done["result"]["structuredContent"]["rows"] == [[1, "Ada"], [2, "Grace"]]


async def test_modern_bad_arguments_are_refused_at_once_not_as_a_task(tmp_path):
    async with connect_stdio(command(make_shop(tmp_path)), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            empty = await rpc(client, "tools/call", query("   "))
            too_big = await rpc(client, "tools/call", query(CUSTOMERS, [2**70]))
    for refused in (empty, too_big):
        assert refused["resultType"] == "complete" and refused["isError"] is True and "taskId" not in refused


async def test_modern_a_write_inside_a_query_task_fails_and_leaves_the_file_alone(tmp_path):
    path = make_shop(tmp_path)
    before = folder_state(tmp_path)
    async with connect_stdio(command(path), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            created = await rpc(client, "tools/call", query("DELETE FROM orders"))
            done = await settled(client, created["taskId"], "completed", "failed")
    assert done["status"] == "completed" and done["result"]["isError"] is True
    assert folder_state(tmp_path) == before


async def test_modern_cancel_stops_the_running_statement(tmp_path):
    """One read connection runs one statement at a time: the next query answers promptly only if the
    cancelled task's statement (60 s deadline) was really stopped, not just marked cancelled."""
    async with connect_stdio(command(make_shop(tmp_path)), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            task_id = (await rpc(client, "tools/call", query(ENDLESS)))["taskId"]
            await anyio.sleep(0.2)  # the statement is under way on the worker
            working = await rpc(client, "tasks/get", {"taskId": task_id})
            await rpc(client, "tasks/cancel", {"taskId": task_id})
            cancelled = await settled(client, task_id, "cancelled")
        with anyio.fail_after(5):
            after = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM customers"})
    assert working["status"] == "working"
    assert cancelled["status"] == "cancelled" and "result" not in cancelled
    assert after["structuredContent"]["rows"] == [[3]]


async def test_modern_client_without_the_extension_gets_an_ordinary_answer(tmp_path):
    async with connect_stdio(command(make_shop(tmp_path)), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            result = await rpc(client, "tools/call", query(CUSTOMERS, [1]), extension=False)
    assert result["resultType"] == "complete" and "taskId" not in result
    assert result["structuredContent"]["rows"] == [[1, "Ada"]]


async def test_legacy_query_with_params_task_is_read_with_tasks_result(tmp_path):
    statuses: list[dict[str, Any]] = []

    def on_notification(notification: Any) -> None:
        if notification.method == "notifications/tasks/status":
            statuses.append(notification.params)

    async with connect_stdio(
        command(make_shop(tmp_path)), protocol_version=LEGACY, on_notification=on_notification
    ) as client:
        assert client.server_capabilities["tasks"]["requests"] == {"tools": {"call": {}}}
        with anyio.fail_after(WAIT):
            created = await client.session.request("tools/call", {**query(CUSTOMERS, [3]), "task": {"ttl": 60_000}})
            task_id = created["task"]["taskId"]
            result = await client.session.request("tasks/result", {"taskId": task_id})
            listed = await client.session.request("tasks/list", {})
            for _ in range(POLLS):  # the status notification may trail the result
                if statuses:
                    break
                await anyio.sleep(0.01)
    assert created["task"]["status"] == "working" and created["task"]["ttl"] == 60_000
    assert result["structuredContent"]["rows"] == [[1, "Ada"], [2, "Grace"], [3, "Linus"]]
    assert [(task["taskId"], task["status"]) for task in listed["tasks"]] == [(task_id, "completed")]
    assert statuses and statuses[-1]["taskId"] == task_id and statuses[-1]["status"] == "completed"


async def test_legacy_cancel_stops_the_running_statement(tmp_path):
    async with connect_stdio(command(make_shop(tmp_path)), protocol_version=LEGACY) as client:
        with anyio.fail_after(WAIT):
            created = await client.session.request("tools/call", {**query(ENDLESS), "task": {}})
            task_id = created["task"]["taskId"]
            await anyio.sleep(0.2)
            await client.session.request("tasks/cancel", {"taskId": task_id})
            cancelled = await settled(client, task_id, "cancelled", modern=False)
        with anyio.fail_after(5):
            after = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM orders"})
    assert cancelled["status"] == "cancelled"
    assert after["structuredContent"]["rows"] == [[3]]


async def test_legacy_execute_refuses_params_task(tmp_path):
    async with connect_stdio(command(make_shop(tmp_path), "--allow-write"), protocol_version=LEGACY) as client:
        with anyio.fail_after(WAIT), pytest.raises(MCPError) as refused:
            await client.session.request(
                "tools/call", {"name": "execute", "arguments": {"sql": "DELETE FROM orders"}, "task": {}}
            )
    assert refused.value.code == ErrorCode.METHOD_NOT_FOUND
