"""2026-07-28 version negotiation on the client side, over real HTTP on 127.0.0.1.

Regression: a client asking for ``2026-07-28`` that got ``-32022 UnsupportedProtocolVersion``
(HTTP 400, ``data.supported``) gave up with the error, although the server named versions the
client speaks (the conformance suite's ``request-metadata`` warned
``sep-2575-client-retry-supported-version``). It now retries that request once with the newest
mutual version, in both the header and ``_meta``; a second refusal is an error, not a loop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from plainmcp import ErrorCode, MCPError
from plainmcp.http_client import connect_http

from tests.e2e.http_server import app_in_thread

pytestmark = pytest.mark.anyio

VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class RefusingServer:
    """An ASGI app: refuses the first ``refusals`` POSTs with -32022 (supported: ``supported``),
    answers the rest like a 2026-07-28 server, and records each POST's header and ``_meta`` version."""

    def __init__(self, refusals: int, supported: list[str]) -> None:
        self.refusals = refusals
        self.supported = supported
        self.posts: list[tuple[str, str | None, str | None]] = []  # (method, header version, _meta version)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()  # startup
            await send({"type": "lifespan.startup.complete"})
            await receive()  # shutdown
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/health":
            await self._send(send, 200, {"status": "ok"})
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        request = json.loads(body)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        meta = (request.get("params") or {}).get("_meta") or {}
        self.posts.append((request["method"], headers.get("mcp-protocol-version"), meta.get(VERSION_KEY)))
        if len(self.posts) <= self.refusals:
            error = {"code": -32022, "message": "Unsupported protocol version", "data": {"supported": self.supported}}
            await self._send(send, 400, {"jsonrpc": "2.0", "id": request["id"], "error": error})
            return
        result: dict[str, Any] = {"resultType": "complete"}
        if request["method"] == "server/discover":
            result |= {"supportedVersions": self.supported, "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}}
        elif request["method"] == "tools/list":
            result |= {"tools": []}
        await self._send(send, 200, {"jsonrpc": "2.0", "id": request["id"], "result": result})

    @staticmethod
    async def _send(send: Any, status: int, body: dict[str, Any]) -> None:
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
        )
        await send({"type": "http.response.body", "body": json.dumps(body).encode()})


async def test_client_retries_once_with_the_version_the_server_names() -> None:
    server = RefusingServer(refusals=1, supported=["2026-07-28"])
    with app_in_thread(server) as running:
        async with connect_http(running.url, protocol_version="2026-07-28") as client:
            assert await client.list_all_tools() == []
            assert client.protocol_version == "2026-07-28"
    assert server.posts == [
        ("server/discover", "2026-07-28", "2026-07-28"),
        ("server/discover", "2026-07-28", "2026-07-28"),  # the retry, header and _meta alike
        ("tools/list", "2026-07-28", "2026-07-28"),
    ]


async def test_client_gives_up_after_a_second_refusal() -> None:
    server = RefusingServer(refusals=10, supported=["2026-07-28"])
    with app_in_thread(server) as running, pytest.raises(MCPError) as refused:
        async with connect_http(running.url, protocol_version="2026-07-28"):
            pass
    assert refused.value.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    assert [method for method, _, _ in server.posts] == ["server/discover"] * 2


async def test_client_does_not_retry_when_no_version_is_mutual() -> None:
    server = RefusingServer(refusals=10, supported=["2031-01-01"])
    with app_in_thread(server) as running, pytest.raises(MCPError) as refused:
        async with connect_http(running.url, protocol_version="2026-07-28"):
            pass
    assert refused.value.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION
    assert len(server.posts) == 1
