"""A legacy response stream that ends before its answer, over real HTTP on 127.0.0.1.

Regressions:

- the client resumed a dropped stream (GET + ``Last-Event-ID``, SEP-1699) only when the server had
  given it a session: against a legacy server without sessions that polls (a priming event, a
  ``retry:``, then the stream closed) the call waited for its whole timeout instead of resuming;
- a stream that ended before the answer with nothing to resume from (no event id, or the 2026-07-28
  revision, which has no resumption) left the call waiting for its timeout; it now fails at once.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest
from plainmcp import ErrorCode, MCPError
from plainmcp.http_client import connect_http

from tests.e2e.http_server import app_in_thread

pytestmark = pytest.mark.anyio

TOOL = {"name": "slow", "inputSchema": {"type": "object"}}
RETRY_MS = 300


class PollingServer:
    """An ASGI app for a sessionless legacy server (or, with ``modern``, a 2026-07-28 one) whose
    ``tools/call`` stream sends a priming event (``id`` when ``event_ids``, and ``retry:``) and closes;
    a GET with ``Last-Event-ID`` then carries the answer. Records (method, headers, when) per request."""

    def __init__(self, *, event_ids: bool = True, modern: bool = False) -> None:
        self.event_ids = event_ids
        self.modern = modern
        self.requests: list[tuple[str, dict[str, str], float]] = []
        self.pending: Any = None
        self.call_streamed_at = 0.0  # when the tools/call stream was closed

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/health":
            await _reply(send, 200, "application/json", b"{}")
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append((scope["method"], headers, time.monotonic()))
        if scope["method"] == "GET":
            if "last-event-id" not in headers or self.pending is None:
                await _reply(send, 405, "text/plain", b"")
                return
            answer = {"jsonrpc": "2.0", "id": self.pending, "result": {"content": [{"type": "text", "text": "late"}]}}
            await _reply(
                send, 200, "text/event-stream", f"id: e2\nevent: message\ndata: {json.dumps(answer)}\n\n".encode()
            )
            return
        body = b""
        while True:
            event = await receive()
            body += event.get("body", b"")
            if not event.get("more_body"):
                break
        request = json.loads(body)
        if "id" not in request:
            await _reply(send, 202, "text/plain", b"")
        elif request["method"] == "tools/call":
            self.pending = request["id"]
            priming = ("id: e1\n" if self.event_ids else "") + f"retry: {RETRY_MS}\ndata: \n\n"
            await _reply(send, 200, "text/event-stream", priming.encode())  # and the stream ends here
            self.call_streamed_at = time.monotonic()
        else:
            await _reply(send, 200, "application/json", json.dumps(_answer(request, self.modern)).encode())


def _answer(request: dict[str, Any], modern: bool) -> dict[str, Any]:
    if request["method"] == "initialize":
        result: dict[str, Any] = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {}}
    elif request["method"] == "server/discover":
        result = {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "serverInfo": {"name": "s"}}
    else:
        result = {"tools": [TOOL]}
    if modern:
        result["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


async def _reply(send: Any, status: int, content_type: str, body: bytes) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", content_type.encode())]})
    await send({"type": "http.response.body", "body": body})


async def test_http_client_resumes_a_sessionless_stream_after_the_retry_delay() -> None:
    server = PollingServer()
    with app_in_thread(server) as running:
        async with connect_http(running.url, protocol_version="2025-11-25") as client:
            result = await client.call_tool("slow", {}, timeout=10)
    assert result["content"] == [{"type": "text", "text": "late"}]
    (resume,) = [(headers, when) for method, headers, when in server.requests if method == "GET"]
    assert resume[0]["last-event-id"] == "e1"
    assert "mcp-session-id" not in resume[0]  # none was given
    assert resume[1] - server.call_streamed_at >= (RETRY_MS - 50) / 1000  # the server's retry: was waited for


@pytest.mark.parametrize(
    ("version", "event_ids"), [("2025-11-25", False), ("2026-07-28", True)], ids=["no-event-id", "modern"]
)
async def test_http_client_fails_a_call_whose_stream_ends_with_nothing_to_resume(version: str, event_ids: bool) -> None:
    server = PollingServer(event_ids=event_ids, modern=version == "2026-07-28")
    with app_in_thread(server) as running:
        async with connect_http(running.url, protocol_version=version, request_timeout=30) as client:
            with anyio.fail_after(5), pytest.raises(MCPError) as failed:  # not the 30 s request timeout
                await client.call_tool("slow", {})
    assert failed.value.code == ErrorCode.REQUEST_TIMEOUT
    assert "ended before the answer" in failed.value.message
    assert not [r for r in server.requests if r[0] == "GET"]  # nothing to resume from: no GET
