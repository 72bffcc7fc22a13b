"""The HTTP client lets an idle connection go before the server would (over real HTTP on 127.0.0.1).

Regression: the client kept idle connections for httpx's default 5 s, the keep-alive of Node's and
uvicorn's servers too. A request sent on a connection just as the server closed it failed with a bare
read error; it happened after an OAuth exchange of about 5 s (the conformance suite's Node servers, under
load). Idle connections now expire after ``IDLE_CONNECTION_SECONDS``, well inside those 5 s.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.http_client import IDLE_CONNECTION_SECONDS, connect_http

from tests.e2e.http_server import app_in_thread

pytestmark = pytest.mark.anyio


class ClientPorts:
    """An ASGI app that records the client's port of every request (one per TCP connection) and passes it on."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.ports: list[int] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("path") == "/mcp" and scope.get("client"):
            self.ports.append(scope["client"][1])
        await self.app(scope, receive, send)


async def test_an_idle_connection_is_not_reused_after_the_expiry() -> None:
    server = Server("idle", "1")

    @server.tool()
    async def hello(ctx, args):
        return "hello"

    recorder = ClientPorts(MCPApp(server))
    with app_in_thread(recorder) as running:
        async with connect_http(f"http://127.0.0.1:{running.port}/mcp", protocol_version="2026-07-28") as client:
            await client.call_tool("hello", {})
            await client.call_tool("hello", {})
            busy = list(recorder.ports)
            await anyio.sleep(IDLE_CONNECTION_SECONDS + 0.5)  # still inside uvicorn's 5 s keep-alive
            await client.call_tool("hello", {})
    assert IDLE_CONNECTION_SECONDS < 5
    assert busy[-1] == busy[-2]  # back to back, the connection is reused
    assert recorder.ports[-1] not in busy  # after the idle expiry, a new connection
