"""Tasks (SEP-2663) through a real nginx (round-robin, no stickiness) over three real ``plainmcp-everything``
processes sharing a real Redis: every poll resolves wherever it lands, a cancel through the proxy stops the
task whichever replica runs it, and a finished task's result is read through any replica. (Issue 25 measured
12 of 18 ``tasks/get`` polls answering "Unknown taskId" here before tasks were shared.)"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.e2e.http_server import dumps, modern_body, modern_headers, sync_client
from tests.replicas.cluster import cluster

TASKS = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}


@pytest.fixture(scope="module")
def nginx_cluster(redis_server, tmp_path_factory):
    directory = tmp_path_factory.mktemp("tasks")
    with cluster(directory, redis_url=redis_server.url, extra_args=("--redis-prefix", "proxy-tasks:")) as running:
        yield running


def post(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = modern_body(1, method, params, meta=TASKS)
    override = {"Mcp_Name": params["taskId"]} if method.startswith("tasks/") else {}
    with sync_client() as client:
        response = client.post(url, content=dumps(body), headers=modern_headers(body, **override))
    payload: dict[str, Any] = response.json()
    return payload


def start(url: str, seconds: float) -> str:
    created = post(url, "tools/call", {"name": "slow_compute", "arguments": {"seconds": seconds}})["result"]
    assert created["resultType"] == "task", created
    return str(created["taskId"])


def test_every_poll_through_the_proxy_finds_the_task(nginx_cluster):
    task_ids = [start(nginx_cluster.url, 60) for _ in range(6)]
    try:
        answers = [post(nginx_cluster.url, "tasks/get", {"taskId": t}) for t in task_ids for _ in range(3)]
        assert [a.get("result", a.get("error"))["status"] for a in answers] == ["working"] * 18, answers
        for replica in nginx_cluster.replicas:  # and each replica, asked directly
            assert (
                post(f"{replica.base_url}/mcp", "tasks/get", {"taskId": task_ids[0]})["result"]["status"] == "working"
            )
    finally:
        for task_id in task_ids:
            post(nginx_cluster.url, "tasks/cancel", {"taskId": task_id})


def test_a_cancel_through_the_proxy_ends_the_task_on_every_replica(nginx_cluster):
    task_ids = [start(nginx_cluster.url, 60) for _ in range(3)]  # spread over the replicas
    for task_id in task_ids:
        assert post(nginx_cluster.url, "tasks/cancel", {"taskId": task_id})["result"]["resultType"] == "complete"
    for replica in nginx_cluster.replicas:
        statuses = [post(f"{replica.base_url}/mcp", "tasks/get", {"taskId": t})["result"]["status"] for t in task_ids]
        assert statuses == ["cancelled"] * 3


def test_a_finished_tasks_result_is_read_through_any_replica(nginx_cluster):
    task_id = start(nginx_cluster.url, 0.5)
    deadline = time.monotonic() + 15
    detail: dict[str, Any] = {}
    while time.monotonic() < deadline:
        detail = post(nginx_cluster.url, "tasks/get", {"taskId": task_id})["result"]
        if detail["status"] != "working":
            break
        time.sleep(0.1)
    assert detail["status"] == "completed", detail
    for replica in nginx_cluster.replicas:
        result = post(f"{replica.base_url}/mcp", "tasks/get", {"taskId": task_id})["result"]["result"]
        assert result["content"][0]["text"] == "Computed result in 0.5 s"
