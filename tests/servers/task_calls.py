"""Tasks through a real server's client, as the servers' test_tasks modules need them: a 2026-07-28
request whose envelope declares (or not) the tasks extension, and polling a task until it settles."""

from __future__ import annotations

from typing import Any

import anyio
from plainmcp import Client

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TASKS = "io.modelcontextprotocol/tasks"


async def rpc(client: Client, method: str, params: dict[str, Any], extension: bool = True) -> Any:
    """A 2026-07-28 request whose envelope declares the tasks extension (or not)."""
    capabilities: dict[str, Any] = {"extensions": {TASKS: {}}} if extension else {}
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    return await client.session.request(method, {**params, "_meta": meta})


async def settled(
    client: Client, task_id: str, *statuses: str, modern: bool = True, polls: int = 500
) -> dict[str, Any]:
    """The task's detail once its status is one of ``statuses`` (``tasks/get`` every 10 ms, at most
    ``polls`` times; AssertionError with the last detail after that)."""
    detail: dict[str, Any] = {}
    for _ in range(polls):
        if modern:
            detail = await rpc(client, "tasks/get", {"taskId": task_id})
        else:
            detail = await client.session.request("tasks/get", {"taskId": task_id})
        if detail["status"] in statuses:
            return detail
        await anyio.sleep(0.01)
    raise AssertionError(detail)
