"""The 2024-11-05 HTTP+SSE transport on the wire: ``GET /sse`` and the POST endpoint it names.

A real ``plainmcp_everything`` process (``--transport http``, which serves these endpoints next to
``/mcp``, and ``--transport sse``, which serves only them); raw httpx, raw SSE. Every wait bounded.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from .http_server import (
    ServerProcess,
    SSEReader,
    async_client,
    call_body,
    dumps,
    initialize_body,
    legacy_headers,
    open_stream,
    rpc,
    server_process,
    sync_client,
    text_result,
)

SIMPLE_TEXT = "This is a simple text response for testing."
SESSION_NOT_FOUND = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Session not found"}}
MAX_BODY = 4 * 1024 * 1024

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerProcess]:
    with server_process() as server:
        yield server


@pytest.fixture(scope="module")
def sse_only() -> Iterator[ServerProcess]:
    with server_process(transport="sse") as server:
        yield server


class SSESession:
    """One open ``GET /sse`` stream and the endpoint it announced."""

    def __init__(self, client: httpx.AsyncClient, base_url: str, response: httpx.Response, endpoint: str) -> None:
        self.client = client
        self.base_url = base_url
        self.response = response
        self.reader = SSEReader(response)
        self.endpoint = endpoint

    @property
    def post_url(self) -> str:
        return self.base_url + self.endpoint

    async def post(self, message: Any, **headers: str) -> httpx.Response:
        return await self.client.post(
            self.post_url, content=dumps(message), headers={"Content-Type": "application/json", **headers}
        )

    async def send(self, message: Any) -> None:
        response = await self.post(message)
        assert response.status_code == 202, response.text
        assert response.text == "Accepted"
        assert response.headers["content-type"] == "text/plain"

    async def message(self) -> Any:
        event = await self.reader.next()
        assert event.event == "message", event
        return event.json()

    async def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        body = initialize_body(0, "2024-11-05")
        if capabilities is not None:
            body["params"]["capabilities"] = capabilities
        await self.send(body)
        reply = await self.message()
        assert reply["id"] == 0 and reply["result"]["protocolVersion"] == "2024-11-05", reply
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply


@asynccontextmanager
async def sse_session(client: httpx.AsyncClient, base_url: str) -> AsyncIterator[SSESession]:
    async with open_stream(client, "GET", f"{base_url}/sse", headers={"Accept": "text/event-stream"}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-accel-buffering"] == "no"
        assert "mcp-session-id" not in response.headers
        session = SSESession(client, base_url, response, "")
        first = await session.reader.next()
        assert first.event == "endpoint", first
        session.endpoint = first.data
        yield session


def session_id_of(endpoint: str) -> str:
    path, _, query = endpoint.partition("?")
    assert path == "/messages", endpoint
    key, _, value = query.partition("=")
    assert key == "session_id" and value, endpoint
    return value


async def test_endpoint_event_names_a_relative_url_with_a_random_session(srv):
    ids = []
    async with async_client() as client:
        for _ in range(5):
            async with sse_session(client, srv.base_url) as session:
                assert session.endpoint.startswith("/") and not session.endpoint.startswith("//")
                session_id = session_id_of(session.endpoint)
                assert len(session_id) >= 22 and all(0x21 <= ord(c) <= 0x7E for c in session_id)
                ids.append(session_id)
    assert len(set(ids)) == len(ids)


async def test_post_is_accepted_and_answered_on_the_stream(srv):
    async with async_client() as client, sse_session(client, srv.base_url) as session:
        init = await session.initialize()
        assert init["result"]["serverInfo"]["name"] == "plainmcp-everything"
        await session.send(call_body(1, "test_simple_text"))
        assert await session.message() == text_result(1, SIMPLE_TEXT)
        await session.send(rpc("p", "ping"))
        assert await session.message() == {"jsonrpc": "2.0", "id": "p", "result": {}}
        # Notifications before the result, on the same stream.
        await session.send(call_body(2, "test_tool_with_progress", meta={"progressToken": "sse"}))
        messages = [await session.message() for _ in range(4)]
        assert [m["params"]["progress"] for m in messages[:3]] == [0, 50, 100]
        assert all(m["params"]["progressToken"] == "sse" for m in messages[:3])
        assert messages[3] == text_result(2, "Progress test completed: 0, 50 and 100 of 100")
        await session.reader.assert_quiet(0.2)


async def test_server_request_and_posted_response(srv):
    async with async_client() as client, sse_session(client, srv.base_url) as session:
        await session.initialize({"sampling": {}})
        await session.send(call_body(3, "test_sampling", {"prompt": "Say hi"}))
        request = await session.message()
        assert request["method"] == "sampling/createMessage"
        assert request["params"]["maxTokens"] == 100
        assert request["params"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "Say hi"}}]
        answer = {
            "role": "assistant",
            "content": {"type": "text", "text": "hi!"},
            "model": "m",
            "stopReason": "endTurn",
        }
        await session.send({"jsonrpc": "2.0", "id": request["id"], "result": answer})
        assert await session.message() == text_result(3, "LLM response: hi!")


async def test_invalid_messages(srv):
    async with async_client() as client, sse_session(client, srv.base_url) as session:
        await session.initialize()
        bad = await client.post(session.post_url, content=b"{nope", headers={"Content-Type": "application/json"})
        assert bad.status_code == 400
        assert bad.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        text = await client.post(
            session.post_url, content=dumps(rpc(1, "ping")), headers={"Content-Type": "text/plain"}
        )
        assert text.status_code == 415
        big = await client.post(
            session.post_url, content=b" " * (MAX_BODY + 1), headers={"Content-Type": "application/json"}
        )
        assert big.status_code == 413
        # A well-formed but invalid message is answered on the stream.
        await session.send({"jsonrpc": "2.0", "id": 5})
        reply = await session.message()
        assert reply["id"] == 5 and reply["error"]["code"] == -32600
        # And the session goes on.
        await session.send(rpc(6, "ping"))
        assert await session.message() == {"jsonrpc": "2.0", "id": 6, "result": {}}


async def test_unknown_session_is_404(srv):
    async with async_client() as client:
        for url in (
            f"{srv.base_url}/messages?session_id=nope",
            f"{srv.base_url}/messages?session_id=",
            f"{srv.base_url}/messages",
            f"{srv.base_url}/messages?sessionId=nope",
        ):
            response = await client.post(
                url, content=dumps(rpc(1, "ping")), headers={"Content-Type": "application/json"}
            )
            assert response.status_code == 404, url
            assert response.json() == SESSION_NOT_FOUND


async def test_session_is_404_after_the_stream_closes(srv):
    async with async_client() as client:
        async with sse_session(client, srv.base_url) as session:
            await session.initialize()
            post_url = session.post_url
        # The client went away: the server notices and forgets the session.
        with anyio.fail_after(5):
            while True:
                response = await client.post(
                    post_url, content=dumps(rpc(1, "ping")), headers={"Content-Type": "application/json"}
                )
                if response.status_code == 404:
                    break
                assert response.status_code == 202
                await anyio.sleep(0.05)
        assert response.json() == SESSION_NOT_FOUND


async def test_sessions_do_not_cross(srv):
    async def one(client: httpx.AsyncClient, n: int, failures: list[str]) -> None:
        async with sse_session(client, srv.base_url) as session:
            await session.initialize()
            args = {"name": f"sse-{n}", "email": f"s{n}@example.com"}
            await session.send(call_body(1, "json_schema_2020_12_tool", args))  # every session uses id 1
            expected = text_result(
                1, f"JSON Schema 2020-12 tool called with: {json.dumps(args, separators=(',', ':'))}"
            )
            got = await session.message()
            if got != expected:
                failures.append(f"{n}: {got}")

    failures: list[str] = []
    limits = httpx.Limits(max_connections=100)
    async with async_client(limits=limits) as client:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as group:
                for n in range(30):
                    group.start_soon(one, client, n, failures)
    assert failures == []


async def test_wrong_methods_are_405(srv):
    async with async_client() as client:
        post_sse = await client.post(f"{srv.base_url}/sse", content=b"{}", headers={"Content-Type": "application/json"})
        assert post_sse.status_code == 405
        assert post_sse.headers["allow"] == "GET"
        get_messages = await client.get(f"{srv.base_url}/messages")
        assert get_messages.status_code == 405
        assert get_messages.headers["allow"] == "POST"


async def test_sse_only_transport_serves_sse_but_not_mcp(sse_only):
    async with async_client() as client:
        async with sse_session(client, sse_only.base_url) as session:
            await session.initialize()
            await session.send(call_body(1, "test_simple_text"))
            assert await session.message() == text_result(1, SIMPLE_TEXT)
        init = await client.post(sse_only.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
        assert init.status_code == 404
        assert "mcp-session-id" not in init.headers
        get = await client.get(sse_only.url, headers={"Accept": "text/event-stream"})
        assert get.status_code == 404
        health = await client.get(f"{sse_only.base_url}/health")
        assert health.status_code == 200


def test_both_transports_on_one_http_server(srv):
    """``--transport http`` serves /mcp and the old endpoints side by side."""
    with sync_client() as client:
        init = client.post(srv.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
        assert init.status_code == 200
        assert init.headers["mcp-session-id"]
        with client.stream("GET", f"{srv.base_url}/sse", headers={"Accept": "text/event-stream"}) as response:
            assert response.status_code == 200
            lines = response.iter_lines()
            assert next(lines) == "event: endpoint"
            assert next(lines).startswith("data: /messages?session_id=")
