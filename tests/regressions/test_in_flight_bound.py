"""Regression: a peer could make one connection hold any number of requests at once (a legacy SSE
client posting without end, a stdio client pipelining without reading). Past ``max_in_flight`` a
request is now refused at once with -32603 "Server busy", and served again once one finishes."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.client import open_client
from plainmcp.connection import ServerConnection
from plainmcp.errors import RequestFailed
from plainmcp.testing import memory_pair

pytestmark = pytest.mark.anyio


async def test_requests_past_the_bound_are_refused_until_one_finishes() -> None:
    server = Server("busy-test", "0")
    release = anyio.Event()
    entered = 0

    @server.tool()
    async def wait(ctx: Any, args: dict[str, Any]) -> str:
        """Wait until released."""
        nonlocal entered
        entered += 1
        await release.wait()
        return "done"

    results: list[Any] = []
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        connection = ServerConnection(server, server_read, server_write, max_in_flight=2)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(connection.run)
            async with open_client(client_read, client_write) as client:

                async def call() -> None:
                    results.append((await client.call_tool("wait", {}))["content"][0]["text"])

                async with anyio.create_task_group() as calls:
                    calls.start_soon(call)
                    calls.start_soon(call)
                    with anyio.fail_after(5):
                        while entered < 2:
                            await anyio.sleep(0.01)
                    with pytest.raises(RequestFailed) as refused:
                        await client.call_tool("wait", {})
                    assert refused.value.code == -32603
                    assert "Server busy" in refused.value.message
                    release.set()
                assert results == ["done", "done"]
                assert (await client.call_tool("wait", {}))["content"][0]["text"] == "done"
            task_group.cancel_scope.cancel()
