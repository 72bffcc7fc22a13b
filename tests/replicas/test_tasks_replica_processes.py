"""Tasks across real replica processes: two ``plainmcp-everything --transport http --redis URL`` servers
on 127.0.0.1 sharing one real Redis. A task created on A is read and cancelled through B; when A is
killed with SIGKILL mid-task, B reports the task ``failed`` within the lease time (8 s, renewed every
2 s), never ``working`` forever."""

from __future__ import annotations

import signal
import time
from typing import Any

import httpx
import pytest

from tests.e2e.http_server import ServerProcess, dumps, modern_body, modern_headers, server_process, sync_client

TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
#: The runner's lease (plainmcp.tasks.TaskStore.lease_seconds) plus one renewal period and slack.
FAILED_WITHIN_SECONDS = 8 + 2 + 5


def post(replica: ServerProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = modern_body(1, method, params, meta={CAPABILITIES: TASKS})
    override = {"Mcp_Name": params["taskId"]} if method.startswith("tasks/") else {}
    with sync_client() as client:
        response = client.post(replica.url, content=dumps(body), headers=modern_headers(body, **override))
    payload: dict[str, Any] = response.json()
    assert "result" in payload, payload
    return payload["result"]  # type: ignore[no-any-return]


def start(replica: ServerProcess) -> str:
    created = post(replica, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
    assert created["resultType"] == "task", created
    return str(created["taskId"])


def replicas(redis_url: str, prefix: str) -> tuple[Any, Any]:
    args = ("--redis", redis_url, "--redis-prefix", prefix)
    return server_process(*args), server_process(*args)


def test_a_task_started_on_one_process_is_read_and_cancelled_through_another(redis_url):
    first, second = replicas(redis_url, "procs-cancel:")
    with first as a, second as b:
        task_id = start(a)
        assert post(b, "tasks/get", {"taskId": task_id})["status"] == "working"
        assert post(b, "tasks/cancel", {"taskId": task_id})["resultType"] == "complete"
        assert post(a, "tasks/get", {"taskId": task_id})["status"] == "cancelled"
        assert "Traceback" not in a.log() + b.log()


def test_a_replica_killed_mid_task_leaves_it_failed_within_the_lease(redis_url):
    first, second = replicas(redis_url, "procs-kill:")
    with first as a, second as b:
        task_id = start(a)
        time.sleep(2.5)  # past one lease renewal on A
        assert post(b, "tasks/get", {"taskId": task_id})["status"] == "working"
        a.process.send_signal(signal.SIGKILL)
        a.process.wait(10)
        killed = time.monotonic()
        detail: dict[str, Any] = {}
        while time.monotonic() - killed < FAILED_WITHIN_SECONDS:
            detail = post(b, "tasks/get", {"taskId": task_id})
            if detail["status"] != "working":
                break
            time.sleep(0.25)
        after = time.monotonic() - killed
        assert detail["status"] == "failed", detail
        assert "server instance running this task stopped" in detail["error"]["message"]
        print(f"failed {after:.2f} s after SIGKILL")  # the measurement the report quotes (pytest -s)
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"{a.base_url}/health", timeout=1)
