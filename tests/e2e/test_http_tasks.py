"""Tasks over real HTTP on 127.0.0.1. 2026-07-28 with bearer authentication: a task belongs to the
principal that created it. Another principal, holding the task id, can neither read, feed nor cancel
it (``-32602``, exactly as for an unknown id), and the owner's task is untouched by the attempts.
2025-11-25: a task belongs to its Streamable HTTP session, and ends with it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from plainmcp.http.app import MCPApp
from plainmcp.http.auth import BearerAuth, StaticTokens
from plainmcp_everything import Config, build_server

from .http_server import (
    ThreadedApp,
    app_in_thread,
    dumps,
    legacy_headers,
    legacy_session,
    modern_body,
    modern_headers,
    rpc,
    sync_client,
)

ALICE = "alice-token-0123456789abcdef"
BOB = "bob-token-0123456789abcdef01"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


@pytest.fixture(scope="module")
def served() -> Iterator[ThreadedApp]:
    app = MCPApp(build_server(Config()), auth=BearerAuth([StaticTokens([ALICE, BOB])]))
    with app_in_thread(app) as threaded:
        yield threaded


def post(app: ThreadedApp, token: str, method: str, params: dict[str, Any], **override: str | None) -> httpx.Response:
    body = modern_body(1, method, params, meta={CAPABILITIES: TASKS})
    if method.startswith("tasks/"):
        override = {"Mcp_Name": params["taskId"], **override}  # tasks methods mirror their task id
    headers = {**modern_headers(body, **override), "Authorization": f"Bearer {token}"}
    with sync_client() as client:
        return client.post(app.url, content=dumps(body), headers=headers)


def start(app: ThreadedApp, token: str) -> str:
    response = post(app, token, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
    assert response.status_code == 200, response.text
    created = response.json()["result"]
    assert created["resultType"] == "task"
    return created["taskId"]


@pytest.mark.parametrize(
    ("method", "extra"),
    [("tasks/get", {}), ("tasks/cancel", {}), ("tasks/update", {"inputResponses": {}})],
)
def test_another_principal_cannot_reach_a_task(served, method, extra):
    task_id = start(served, ALICE)
    try:
        stranger = post(served, BOB, method, {"taskId": task_id, **extra})
        unknown = post(served, BOB, method, {"taskId": "no-such-task", **extra})
        assert stranger.status_code == unknown.status_code == 400
        assert stranger.json()["error"]["code"] == unknown.json()["error"]["code"] == -32602
        assert stranger.json()["error"]["message"] == unknown.json()["error"]["message"]
        mine = post(served, ALICE, "tasks/get", {"taskId": task_id})
        assert mine.status_code == 200 and mine.json()["result"]["status"] == "working"
    finally:
        post(served, ALICE, "tasks/cancel", {"taskId": task_id})


def test_the_owner_cancels_and_reads_the_final_status(served):
    task_id = start(served, ALICE)
    ack = post(served, ALICE, "tasks/cancel", {"taskId": task_id})
    assert ack.status_code == 200 and ack.json()["result"]["resultType"] == "complete"
    final = post(served, ALICE, "tasks/get", {"taskId": task_id}).json()["result"]
    assert final["status"] == "cancelled" and "result" not in final


def test_a_task_method_mirrors_its_task_id_in_mcp_name(served):
    task_id = start(served, ALICE)
    try:
        wrong = post(served, ALICE, "tasks/get", {"taskId": task_id}, Mcp_Name="someone-elses-task")
        missing = post(served, ALICE, "tasks/get", {"taskId": task_id}, Mcp_Name=None)
        for response in (wrong, missing):
            assert response.status_code == 400 and response.json()["error"]["code"] == -32020
    finally:
        post(served, ALICE, "tasks/cancel", {"taskId": task_id})


# ------------------------------------------------------------------------- 2025-11-25 (tasks v1)


def legacy_rpc(client: httpx.Client, url: str, session: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = client.post(url, content=dumps(rpc(7, method, params)), headers=legacy_headers(session))
    assert response.status_code == 200, response.text
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads([d for d in data if d and '"id":7' in d.replace(" ", "")][-1])
    return response.json()


def test_a_legacy_task_belongs_to_its_http_session_and_ends_with_it():
    server = build_server(Config())
    with app_in_thread(MCPApp(server)) as app, sync_client() as client:
        owner = legacy_session(client, app.url)
        stranger = legacy_session(client, app.url)
        created = legacy_rpc(
            client, app.url, owner, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}, "task": {}}
        )
        task_id = created["result"]["task"]["taskId"]
        refused = legacy_rpc(client, app.url, stranger, "tasks/get", {"taskId": task_id})
        listed = legacy_rpc(client, app.url, stranger, "tasks/list", {})
        mine = legacy_rpc(client, app.url, owner, "tasks/get", {"taskId": task_id})
        assert refused["error"]["code"] == -32602 and listed["result"]["tasks"] == []
        assert mine["result"]["status"] == "working"
        assert len(server.tasks) == 1
        ended = client.delete(app.url, headers=legacy_headers(owner))
        assert ended.status_code in (200, 204)
        for _ in range(300):
            if len(server.tasks) == 0:
                break
            time.sleep(0.01)
        assert len(server.tasks) == 0  # the session's task was cancelled and forgotten with it


# ------------------------------------------------- 2026-07-28 without authentication: fair quotas


def anonymous_start(app: ThreadedApp, source: str) -> dict[str, Any]:
    """Start a 60-second task from the local address ``source`` (127.0.0.x), without credentials."""
    body = modern_body(
        1, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}}, meta={CAPABILITIES: TASKS}
    )
    with sync_client(transport=httpx.HTTPTransport(local_address=source)) as client:
        response = client.post(app.url, content=dumps(body), headers=modern_headers(body))
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()["result"]
    return result


def anonymous_cancel(app: ThreadedApp, task_id: str) -> None:
    body = modern_body(1, "tasks/cancel", {"taskId": task_id}, meta={CAPABILITIES: TASKS})
    with sync_client() as client:
        client.post(app.url, content=dumps(body), headers=modern_headers(body, Mcp_Name=task_id))


def test_without_authentication_one_client_cannot_take_every_clients_task_slots():
    """Issue 26 item 8: without authentication, each peer address has its own quota of running tasks: a
    client that fills its own still leaves another address its slots (a task id stays the bearer: any
    client holding it may read it)."""
    server = build_server(Config())
    server.tasks.max_tasks_per_owner = 2
    with app_in_thread(MCPApp(server)) as app:
        mine = [anonymous_start(app, "127.0.0.1") for _ in range(2)]
        refused = anonymous_start(app, "127.0.0.1")
        other = anonymous_start(app, "127.0.0.2")
        try:
            assert [created["resultType"] for created in mine] == ["task", "task"]
            assert refused["isError"] is True and "too many tasks" in refused["content"][0]["text"]
            assert other["resultType"] == "task"
            body = modern_body(1, "tasks/get", {"taskId": other["taskId"]}, meta={CAPABILITIES: TASKS})
            with sync_client() as client:  # from 127.0.0.1: the id, not the address, gives access
                seen = client.post(app.url, content=dumps(body), headers=modern_headers(body, Mcp_Name=other["taskId"]))
            assert seen.json()["result"]["status"] == "working"
        finally:
            for created in [*mine, other]:
                if "taskId" in created:
                    anonymous_cancel(app, created["taskId"])
