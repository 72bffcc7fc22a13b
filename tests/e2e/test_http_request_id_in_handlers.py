"""The HTTP request id reaches tool handlers (``ctx.http_request_id``), so a server can send it on to
its upstream and one call can be traced from client to server to upstream. Every transport that
carries calls over HTTP: Streamable HTTP in both eras (batches too) and the 2024-11-05 HTTP+SSE."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.http_client import connect_http
from plainmcp.testing import connect_in_memory

from .http_server import MODERN, app_in_thread, dumps, modern_body, modern_headers

pytestmark = pytest.mark.anyio


def tracing_server() -> Server:
    server = Server("trace-test", "0")

    @server.tool()
    async def whoami(ctx: Any, args: dict[str, Any]) -> str:
        """The HTTP request id this call came with."""
        return str(ctx.http_request_id)

    return server


@pytest.fixture(scope="module")
def running() -> Any:
    with app_in_thread(MCPApp(tracing_server())) as app:
        yield app


def text_of(result: dict[str, Any]) -> str:
    return result["content"][0]["text"]


@pytest.mark.parametrize(
    ("path", "transport", "version"),
    [
        ("/mcp", "streamable", "2025-11-25"),
        ("/mcp", "streamable", "2025-03-26"),
        ("/mcp", "streamable", MODERN),
        ("/sse", "sse", "2024-11-05"),
    ],
)
async def test_handler_sees_the_clients_request_id(running: Any, path: str, transport: str, version: str) -> None:
    async with connect_http(
        f"{running.base_url}{path}", transport=transport, protocol_version=version, headers={"X-Request-ID": "trace-7"}
    ) as client:
        assert text_of(await client.call_tool("whoami", {})) == "trace-7"


def test_handler_sees_the_minted_id_that_the_response_carries(running: Any) -> None:
    body = modern_body(1, "tools/call", {"name": "whoami", "arguments": {}})
    with httpx.Client(trust_env=False) as http:
        response = http.post(f"{running.base_url}/mcp", content=dumps(body), headers=modern_headers(body))
    assert response.status_code == 200
    minted = response.headers["x-request-id"]
    assert len(minted) == 36  # a UUID
    assert response.json()["result"]["content"][0]["text"] == minted


def test_every_request_of_a_batch_carries_the_posts_id(running: Any) -> None:
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
    }
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    with httpx.Client(trust_env=False, headers=headers) as http:
        url = f"{running.base_url}/mcp"
        session = http.post(url, content=dumps(init)).headers["mcp-session-id"]
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-03-26"}
        http.post(url, content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers=headers)
        batch = [
            {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
            for n in (1, 2)
        ]
        response = http.post(url, content=dumps(batch), headers={**headers, "X-Request-ID": "batch-9"})
    assert response.status_code == 200
    assert sorted((item["id"], item["result"]["content"][0]["text"]) for item in response.json()) == [
        (1, "batch-9"),
        (2, "batch-9"),
    ]


async def test_no_http_request_id_off_http() -> None:
    async with connect_in_memory(tracing_server()) as client:
        assert text_of(await client.call_tool("whoami", {})) == "None"
