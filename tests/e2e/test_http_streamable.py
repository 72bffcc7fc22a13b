"""Streamable HTTP on the wire, both eras, against a real ``plainmcp_everything --transport http``.

Raw httpx requests, raw SSE parsing: every status code, header and body is checked as sent.
Tests that need a server definition of their own (slow tools, cancellation probes) serve an
``MCPApp`` in-process with uvicorn on a thread. Every wait is bounded.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import anyio
import httpx
import pytest
from plainmcp import Server
from plainmcp.http.app import MCPApp

from .http_server import (
    ACCEPT_BOTH,
    LATEST_LEGACY,
    MODERN,
    ServerProcess,
    SSEReader,
    ThreadedApp,
    alegacy_session,
    app_in_thread,
    async_client,
    base64_header,
    call_body,
    dumps,
    initialize_body,
    legacy_headers,
    legacy_session,
    modern_body,
    modern_headers,
    modern_text_result,
    open_stream,
    rpc,
    server_info_meta,
    server_process,
    sync_client,
    text_result,
)

SIMPLE_TEXT = "This is a simple text response for testing."
PROGRESS_DONE = "Progress test completed: 0, 50 and 100 of 100"
LOGGING_DONE = "Tool with logging executed successfully"
RECONNECTION_DONE = (
    "Reconnection test completed successfully. If you received this, "
    "the client properly reconnected after stream closure."
)
LOG_MESSAGES = ("Tool execution started", "Tool processing data", "Tool execution completed")
MAX_BODY = 4 * 1024 * 1024

MISSING_SESSION = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Bad Request: missing Mcp-Session-Id header"},
}
SESSION_NOT_FOUND = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Session not found: it ended or never existed; initialize again"},
}
NO_BATCHES = {
    "jsonrpc": "2.0",
    "id": None,
    "error": {"code": -32600, "message": "Invalid Request: batches are not supported in this protocol revision"},
}
PARSE_ERROR = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}

SSE_ACCEPT = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerProcess]:
    with server_process() as server:
        yield server


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with sync_client() as c:
        yield c


def progress(token: Any, value: int) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {
            "progressToken": token,
            "progress": value,
            "total": 100,
            "message": f"Completed step {value} of 100",
        },
    }


def log_message(text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": text}}


def assert_sse_headers(response: httpx.Response) -> None:
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    assert "no-cache" in response.headers["cache-control"]


def assert_priming(event: Any) -> None:
    """2025-11-25 priming event: an id to resume from, no data, and a retry interval."""
    assert event.id, event
    assert event.data == "", event
    assert event.event is None, event
    assert isinstance(event.retry, int) and event.retry > 0, event
    assert "retry" in event.fields and "id" in event.fields, event


def ids_unique(events: list[Any]) -> None:
    ids = [event.id for event in events]
    assert all(ids) and len(set(ids)) == len(ids), ids


# ================================================================================= legacy era


def test_initialize_mints_random_visible_ascii_session_ids(srv, client):
    ids = []
    for n in range(12):
        response = client.post(srv.url, content=dumps(initialize_body(n)), headers=legacy_headers(version=None))
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        body = response.json()
        assert body["id"] == n and body["jsonrpc"] == "2.0"
        assert body["result"]["protocolVersion"] == LATEST_LEGACY
        assert body["result"]["serverInfo"]["name"] == "plainmcp-everything"
        ids.append(response.headers["mcp-session-id"])
    assert len(set(ids)) == len(ids)
    for session_id in ids:
        assert len(session_id) >= 22, session_id  # >= 128 bits if base64-like
        assert all(0x21 <= ord(c) <= 0x7E for c in session_id), session_id
    # Random, not sequential: no two ids share a long prefix or suffix.
    for a in ids:
        for b in ids:
            if a != b:
                assert a[:8] != b[:8] and a[-8:] != b[-8:], (a, b)
    for session_id in ids:
        assert client.delete(srv.url, headers={"Mcp-Session-Id": session_id}).status_code == 204


def test_initialize_echoes_an_older_supported_version(srv, client):
    for version in ("2025-03-26", "2025-06-18", "2024-11-05"):
        response = client.post(
            srv.url, content=dumps(initialize_body(1, version)), headers=legacy_headers(version=None)
        )
        assert response.status_code == 200
        assert response.json()["result"]["protocolVersion"] == version
    # An unknown version is negotiated, not refused.
    response = client.post(
        srv.url, content=dumps(initialize_body(2, "1999-01-01")), headers=legacy_headers(version=None)
    )
    assert response.status_code == 200
    assert response.json()["result"]["protocolVersion"] == LATEST_LEGACY


def test_request_without_session_header_is_400(srv, client):
    response = client.post(srv.url, content=dumps(rpc(1, "tools/list")), headers=legacy_headers())
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    assert response.json() == MISSING_SESSION
    # A notification without a session is refused the same way.
    note = client.post(
        srv.url, content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers=legacy_headers()
    )
    assert note.status_code == 400
    assert note.json() == MISSING_SESSION


def test_unknown_session_is_404_for_post_get_and_delete(srv, client):
    bogus = "no-such-session-" + "x" * 20
    post = client.post(srv.url, content=dumps(rpc(1, "ping")), headers=legacy_headers(bogus))
    assert post.status_code == 404
    assert post.json() == SESSION_NOT_FOUND
    get = client.get(srv.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": bogus})
    assert get.status_code == 404
    assert get.json() == SESSION_NOT_FOUND
    delete = client.delete(srv.url, headers={"Mcp-Session-Id": bogus})
    assert delete.status_code == 404
    assert delete.json() == SESSION_NOT_FOUND


def test_delete_ends_the_session(srv, client):
    session_id = legacy_session(client, srv.url)
    assert client.post(srv.url, content=dumps(rpc(1, "ping")), headers=legacy_headers(session_id)).json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    response = client.delete(srv.url, headers={"Mcp-Session-Id": session_id, "MCP-Protocol-Version": LATEST_LEGACY})
    assert response.status_code == 204
    assert response.content == b""
    after = client.post(srv.url, content=dumps(rpc(2, "ping")), headers=legacy_headers(session_id))
    assert after.status_code == 404
    assert after.json() == SESSION_NOT_FOUND
    assert client.get(srv.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}).status_code == 404
    assert client.delete(srv.url, headers={"Mcp-Session-Id": session_id}).status_code == 404


def test_protocol_version_header(srv, client):
    session_id = legacy_session(client, srv.url)
    bad = client.post(srv.url, content=dumps(rpc(1, "ping")), headers=legacy_headers(session_id, "1999-01-01"))
    assert bad.status_code == 400
    assert bad.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Bad Request: unsupported MCP-Protocol-Version '1999-01-01'"},
    }
    # Missing: accepted (the server may assume 2025-03-26); the session still works.
    missing = client.post(srv.url, content=dumps(rpc(2, "ping")), headers=legacy_headers(session_id, None))
    assert missing.status_code == 200
    assert missing.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    # Any other supported legacy revision in the header is accepted too.
    other = client.post(srv.url, content=dumps(rpc(3, "ping")), headers=legacy_headers(session_id, "2025-03-26"))
    assert other.status_code == 200
    assert other.json() == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_accept_must_list_event_stream_and_json(srv, client):
    for accept in ("application/json", "text/event-stream", "text/html"):
        headers = legacy_headers(version=None)
        headers["Accept"] = accept
        response = client.post(srv.url, content=dumps(initialize_body()), headers=headers)
        assert response.status_code == 406, accept
        assert "mcp-session-id" not in response.headers
        assert response.json()["error"]["code"] == -32600


def test_content_type_must_be_json(srv, client):
    headers = legacy_headers(version=None)
    headers["Content-Type"] = "text/plain"
    response = client.post(srv.url, content=dumps(initialize_body()), headers=headers)
    assert response.status_code == 415
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Unsupported Media Type: send application/json"},
    }
    # Parameters on application/json are fine.
    headers["Content-Type"] = "application/json; charset=utf-8"
    ok = client.post(srv.url, content=dumps(initialize_body()), headers=headers)
    assert ok.status_code == 200
    client.delete(srv.url, headers={"Mcp-Session-Id": ok.headers["mcp-session-id"]})


def test_body_limit_is_4_mib(srv, client):
    session_id = legacy_session(client, srv.url)
    message = dumps(rpc(9, "ping", {"pad": "x" * (MAX_BODY - 60)}))
    exact = message + b" " * (MAX_BODY - len(message))
    assert len(exact) == MAX_BODY
    response = client.post(srv.url, content=exact, headers=legacy_headers(session_id))
    assert response.status_code == 200
    assert response.json() == {"jsonrpc": "2.0", "id": 9, "result": {}}
    over = client.post(srv.url, content=exact + b" ", headers=legacy_headers(session_id))
    assert over.status_code == 413
    assert over.json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": f"Request body exceeds {MAX_BODY} bytes"},
    }
    # Also for a brand-new client (no session yet).
    fresh = client.post(srv.url, content=exact + b" ", headers=legacy_headers(version=None))
    assert fresh.status_code == 413
    assert "mcp-session-id" not in fresh.headers


def test_invalid_json_is_400_parse_error(srv, client):
    session_id = legacy_session(client, srv.url)
    for body in (b'{"jsonrpc":"2.0","id":1,"method":', b"not json", b""):
        response = client.post(srv.url, content=body, headers=legacy_headers(session_id))
        assert response.status_code == 400, body
        assert response.json() == PARSE_ERROR
    # Without a session as well (the body is judged first).
    response = client.post(srv.url, content=b"{oops", headers=legacy_headers(version=None))
    assert response.status_code == 400
    assert response.json() == PARSE_ERROR


def test_posted_notification_and_response_get_202_without_body(srv, client):
    session_id = legacy_session(client, srv.url)
    note = client.post(
        srv.url,
        content=dumps({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        headers=legacy_headers(session_id),
    )
    assert note.status_code == 202
    assert note.content == b""
    assert note.headers.get("content-type") is None
    reply = client.post(
        srv.url, content=dumps({"jsonrpc": "2.0", "id": "server-1", "result": {}}), headers=legacy_headers(session_id)
    )
    assert reply.status_code == 202
    assert reply.content == b""
    error_reply = client.post(
        srv.url,
        content=dumps({"jsonrpc": "2.0", "id": "server-2", "error": {"code": -1, "message": "no"}}),
        headers=legacy_headers(session_id),
    )
    assert error_reply.status_code == 202
    assert error_reply.content == b""
    # The session goes on.
    assert client.post(srv.url, content=dumps(rpc(5, "ping")), headers=legacy_headers(session_id)).json() == {
        "jsonrpc": "2.0",
        "id": 5,
        "result": {},
    }


def test_plain_request_answers_json(srv, client):
    session_id = legacy_session(client, srv.url)
    response = client.post(srv.url, content=dumps(call_body(7, "test_simple_text")), headers=legacy_headers(session_id))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.headers["mcp-session-id"] == session_id
    assert response.json() == text_result(7, SIMPLE_TEXT)


@pytest.mark.anyio
async def test_progress_streams_sse_with_priming_event_first(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        body = call_body(3, "test_tool_with_progress", meta={"progressToken": "p-1"})
        async with open_stream(
            client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
        ) as response:
            assert_sse_headers(response)
            assert response.headers["mcp-session-id"] == session_id
            events = await SSEReader(response).rest()
    assert len(events) == 5, events
    assert_priming(events[0])
    assert [event.event for event in events[1:]] == ["message"] * 4
    assert [event.json() for event in events[1:]] == [
        progress("p-1", 0),
        progress("p-1", 50),
        progress("p-1", 100),
        text_result(3, PROGRESS_DONE),
    ]
    ids_unique(events)


@pytest.mark.anyio
async def test_logging_streams_sse_messages_then_result(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        body = call_body(4, "test_tool_with_logging")
        async with open_stream(
            client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
        ) as response:
            assert_sse_headers(response)
            events = await SSEReader(response).rest()
    assert_priming(events[0])
    assert [event.json() for event in events[1:]] == [
        *(log_message(text) for text in LOG_MESSAGES),
        text_result(4, LOGGING_DONE),
    ]


@pytest.mark.anyio
async def test_2025_03_26_session_has_no_priming_event(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url, "2025-03-26")
        body = call_body(3, "test_tool_with_progress", meta={"progressToken": 11})
        async with open_stream(
            client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id, "2025-03-26")
        ) as response:
            assert_sse_headers(response)
            events = await SSEReader(response).rest()
    assert [event.json() for event in events] == [
        progress(11, 0),
        progress(11, 50),
        progress(11, 100),
        text_result(3, PROGRESS_DONE),
    ]
    assert all(event.data for event in events)


def test_batch_rejected_in_2025_11_25(srv, client):
    session_id = legacy_session(client, srv.url)
    batch = [rpc(1, "ping"), call_body(2, "test_simple_text")]
    response = client.post(srv.url, content=dumps(batch), headers=legacy_headers(session_id))
    assert response.status_code == 400
    assert response.json() == NO_BATCHES
    # Nothing in it ran: the session has no pending answers and still works.
    assert client.post(srv.url, content=dumps(rpc(3, "ping")), headers=legacy_headers(session_id)).json() == {
        "jsonrpc": "2.0",
        "id": 3,
        "result": {},
    }


def test_batch_rejected_in_2025_06_18(srv, client):
    session_id = legacy_session(client, srv.url, "2025-06-18")
    response = client.post(srv.url, content=dumps([rpc(1, "ping")]), headers=legacy_headers(session_id, "2025-06-18"))
    assert response.status_code == 400
    assert response.json() == NO_BATCHES


def test_batch_answered_as_json_array_in_2025_03_26(srv, client):
    session_id = legacy_session(client, srv.url, "2025-03-26")
    headers = legacy_headers(session_id, "2025-03-26")
    batch = [
        rpc("a", "ping"),
        {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"},
        call_body("b", "test_simple_text"),
        call_body("c", "test_tool_with_progress", meta={"progressToken": "batch"}),
    ]
    response = client.post(srv.url, content=dumps(batch), headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    replies = response.json()
    assert isinstance(replies, list)
    assert sorted(replies, key=lambda r: r["id"]) == [
        {"jsonrpc": "2.0", "id": "a", "result": {}},
        text_result("b", SIMPLE_TEXT),
        text_result("c", PROGRESS_DONE),
    ]
    # Only notifications: nothing to answer.
    only_notes = client.post(
        srv.url, content=dumps([{"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}]), headers=headers
    )
    assert only_notes.status_code == 202
    assert only_notes.content == b""
    # An invalid member gets its own error reply, the valid ones their results.
    mixed = client.post(srv.url, content=dumps([{"jsonrpc": "2.0", "id": 9}, rpc(10, "ping")]), headers=headers)
    assert mixed.status_code == 200
    answers = {reply["id"]: reply for reply in mixed.json()}
    assert answers[10] == {"jsonrpc": "2.0", "id": 10, "result": {}}
    assert answers[9]["error"]["code"] == -32600


@pytest.mark.anyio
async def test_get_stream_receives_list_changed_and_nothing_else(srv):
    async with async_client() as client, async_client() as other:
        session_id = await alegacy_session(client, srv.url)
        other_session = await alegacy_session(other, srv.url)
        get_headers = {**SSE_ACCEPT, "Mcp-Session-Id": session_id, "MCP-Protocol-Version": LATEST_LEGACY}
        async with open_stream(client, "GET", srv.url, headers=get_headers) as stream:
            assert_sse_headers(stream)
            assert stream.headers["mcp-session-id"] == session_id
            reader = SSEReader(stream)
            assert_priming(await reader.next())
            # A request's own notifications stay on its own stream.
            body = call_body(1, "test_tool_with_progress", meta={"progressToken": "own"})
            async with open_stream(
                other, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
            ) as post:
                posted = await SSEReader(post).rest()
            assert [event.json()["method"] for event in posted[1:4]] == ["notifications/progress"] * 3
            # A list change made by this session, in another POST, arrives on the GET stream only.
            trigger = await other.post(
                srv.url, content=dumps(call_body(2, "test_trigger_tool_change")), headers=legacy_headers(session_id)
            )
            assert trigger.status_code == 200
            assert trigger.headers["content-type"] == "application/json"
            assert trigger.json()["result"]["content"][0]["text"] in (
                "Removed tool test_dynamic_tool",
                "Added tool test_dynamic_tool",
            )
            first = await reader.next()
            assert first.event == "message" and first.id
            assert first.json() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            # ... and one made by another session too.
            again = await other.post(
                srv.url, content=dumps(call_body(3, "test_trigger_tool_change")), headers=legacy_headers(other_session)
            )
            assert again.status_code == 200
            second = await reader.next()
            assert second.json() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            assert second.id != first.id
            await reader.assert_quiet(0.3)


@pytest.mark.anyio
async def test_second_get_stream_is_409(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        get_headers = {**SSE_ACCEPT, "Mcp-Session-Id": session_id}
        async with open_stream(client, "GET", srv.url, headers=get_headers) as stream:
            assert stream.status_code == 200
            assert_priming(await SSEReader(stream).next())
            second = await client.get(srv.url, headers=get_headers)
            assert second.status_code == 409
            assert second.json() == {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Conflict: a GET stream is already open"},
            }
        # Once the first is gone, a new GET is allowed (the server notices the disconnect).
        with anyio.fail_after(5):
            while True:
                async with open_stream(client, "GET", srv.url, headers=get_headers) as retry:
                    if retry.status_code == 200:
                        assert_priming(await SSEReader(retry).next())
                        break
                    assert retry.status_code == 409
                await anyio.sleep(0.05)


def test_get_requires_event_stream_accept(srv, client):
    session_id = legacy_session(client, srv.url)
    response = client.get(srv.url, headers={"Accept": "application/json", "Mcp-Session-Id": session_id})
    assert response.status_code == 406


@pytest.mark.anyio
async def test_reconnection_resumes_with_last_event_id(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        body = call_body(21, "test_reconnection")
        async with open_stream(
            client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
        ) as post:
            assert_sse_headers(post)
            events = await SSEReader(post).rest()
        # The server closed the stream right after the priming event.
        assert len(events) == 1, events
        assert_priming(events[0])
        last_id = events[0].id
        headers = {
            **SSE_ACCEPT,
            "Mcp-Session-Id": session_id,
            "MCP-Protocol-Version": LATEST_LEGACY,
            "Last-Event-ID": last_id,
        }
        async with open_stream(client, "GET", srv.url, headers=headers) as resumed:
            assert_sse_headers(resumed)
            replayed = await SSEReader(resumed).rest()
        messages = [event for event in replayed if event.data]
        assert [event.json() for event in messages] == [text_result(21, RECONNECTION_DONE)]
        assert all(event.id and event.id != last_id for event in messages)
        # Resuming after the result: nothing is delivered twice.
        headers["Last-Event-ID"] = messages[-1].id
        async with open_stream(client, "GET", srv.url, headers=headers) as again:
            assert again.status_code == 200
            tail = await SSEReader(again).rest()
        assert [event for event in tail if event.data] == []
        # The session still serves requests, and the GET stream is free.
        ping = await client.post(srv.url, content=dumps(rpc(22, "ping")), headers=legacy_headers(session_id))
        assert ping.json() == {"jsonrpc": "2.0", "id": 22, "result": {}}


@pytest.mark.anyio
async def test_dropped_post_stream_resumes_every_remaining_event_once(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        body = call_body(31, "test_tool_with_progress", meta={"progressToken": "drop"})
        async with open_stream(
            client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
        ) as post:
            reader = SSEReader(post)
            assert_priming(await reader.next())
            first = await reader.next()
            assert first.json() == progress("drop", 0)
        # The client closed the connection mid-call; the call goes on (legacy: not a cancel).
        headers = {**SSE_ACCEPT, "Mcp-Session-Id": session_id, "Last-Event-ID": first.id}
        async with open_stream(client, "GET", srv.url, headers=headers) as resumed:
            assert_sse_headers(resumed)
            events = await SSEReader(resumed).rest()
        messages = [event for event in events if event.data]
        assert [event.json() for event in messages] == [
            progress("drop", 50),
            progress("drop", 100),
            text_result(31, PROGRESS_DONE),
        ]
        ids_unique([first, *messages])


@pytest.mark.anyio
async def test_last_event_id_of_another_session_replays_nothing(srv):
    async with async_client() as client:
        owner = await alegacy_session(client, srv.url)
        intruder = await alegacy_session(client, srv.url)
        body = call_body(41, "test_reconnection")
        async with open_stream(client, "POST", srv.url, content=dumps(body), headers=legacy_headers(owner)) as post:
            (priming,) = await SSEReader(post).rest()
        headers = {**SSE_ACCEPT, "Mcp-Session-Id": intruder, "Last-Event-ID": priming.id}
        async with open_stream(client, "GET", srv.url, headers=headers) as stolen:
            assert stolen.status_code == 404
            await stolen.aread()
            assert RECONNECTION_DONE.encode() not in stolen.content
        # The owner still gets its result.
        headers["Mcp-Session-Id"] = owner
        async with open_stream(client, "GET", srv.url, headers=headers) as resumed:
            messages = [event.json() for event in await SSEReader(resumed).rest() if event.data]
        assert messages == [text_result(41, RECONNECTION_DONE)]


@pytest.mark.anyio
async def test_get_stream_resumes_with_last_event_id(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        headers = {**SSE_ACCEPT, "Mcp-Session-Id": session_id}
        async with open_stream(client, "GET", srv.url, headers=headers) as stream:
            priming = await SSEReader(stream).next()
            assert_priming(priming)
        # While no GET stream is open, a list change is kept for the resuming client.
        trigger = await client.post(
            srv.url, content=dumps(call_body(1, "test_trigger_tool_change")), headers=legacy_headers(session_id)
        )
        assert trigger.status_code == 200
        with anyio.fail_after(5):
            while True:  # until the server has noticed the first GET is gone
                async with open_stream(
                    client, "GET", srv.url, headers={**headers, "Last-Event-ID": priming.id}
                ) as resumed:
                    if resumed.status_code == 200:
                        reader = SSEReader(resumed)
                        events = [await reader.next(), await reader.next()]
                        break
                await anyio.sleep(0.05)
        assert_priming(events[0])
        assert events[1].json() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
        assert events[1].id != priming.id


@pytest.mark.anyio
async def test_delete_ends_an_open_get_stream(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        async with open_stream(client, "GET", srv.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}) as stream:
            reader = SSEReader(stream)
            assert_priming(await reader.next())
            deleted = await client.delete(srv.url, headers={"Mcp-Session-Id": session_id})
            assert deleted.status_code == 204
            assert await reader.rest(timeout=5) == []
            assert reader.ended


@pytest.mark.anyio
async def test_server_request_on_the_post_stream_and_posted_response(srv):
    async with async_client() as client, async_client() as other:
        init = initialize_body(0, LATEST_LEGACY)
        init["params"]["capabilities"] = {"sampling": {}}
        response = await client.post(srv.url, content=dumps(init), headers=legacy_headers(version=None))
        session_id = response.headers["mcp-session-id"]
        note = await client.post(
            srv.url,
            content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            headers=legacy_headers(session_id),
        )
        assert note.status_code == 202
        body = call_body(8, "test_sampling", {"prompt": "Say hi"})
        async with open_stream(
            client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
        ) as post:
            assert_sse_headers(post)
            reader = SSEReader(post)
            assert_priming(await reader.next())
            request = (await reader.next()).json()
            assert request["method"] == "sampling/createMessage"
            assert request["params"]["messages"] == [{"role": "user", "content": {"type": "text", "text": "Say hi"}}]
            answer = {
                "role": "assistant",
                "content": {"type": "text", "text": "hi!"},
                "model": "m",
                "stopReason": "endTurn",
            }
            posted = await other.post(
                srv.url,
                content=dumps({"jsonrpc": "2.0", "id": request["id"], "result": answer}),
                headers=legacy_headers(session_id),
            )
            assert posted.status_code == 202
            assert posted.content == b""
            rest = await reader.rest()
        assert [event.json() for event in rest] == [text_result(8, "LLM response: hi!")]


def test_reconnection_tool_keeps_its_stream_before_2025_11_25(srv, client):
    # Without priming events (2025-03-26) the server never ends a stream early: the answer comes whole.
    session_id = legacy_session(client, srv.url, "2025-03-26")
    response = client.post(
        srv.url, content=dumps(call_body(1, "test_reconnection")), headers=legacy_headers(session_id, "2025-03-26")
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == text_result(1, RECONNECTION_DONE)


def test_other_http_methods_are_405(srv, client):
    for method in ("PUT", "PATCH"):
        response = client.request(method, srv.url, content=b"{}", headers=legacy_headers())
        assert response.status_code == 405
        assert response.headers["allow"] == "GET, POST, DELETE"


@pytest.mark.anyio
async def test_concurrent_requests_of_one_session_keep_their_own_streams(srv):
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        results: dict[str, list[Any]] = {}

        async def call(request_id: str) -> None:
            body = call_body(request_id, "test_tool_with_progress", meta={"progressToken": f"tok-{request_id}"})
            async with open_stream(
                client, "POST", srv.url, content=dumps(body), headers=legacy_headers(session_id)
            ) as post:
                results[request_id] = [event.json() for event in await SSEReader(post).rest() if event.data]

        async with anyio.create_task_group() as group:
            for request_id in ("a", "b", "c"):
                group.start_soon(call, request_id)
    for request_id in ("a", "b", "c"):
        token = f"tok-{request_id}"
        assert results[request_id] == [
            progress(token, 0),
            progress(token, 50),
            progress(token, 100),
            text_result(request_id, PROGRESS_DONE),
        ]


@pytest.mark.anyio
async def test_duplicate_in_flight_id_does_not_hijack_the_original_request(srv):
    """A client reusing the id of a request still in flight gets an error; the original request
    must still get its notifications and its result on its own POST stream (and a response must
    never appear on the GET stream)."""
    async with async_client() as client:
        session_id = await alegacy_session(client, srv.url)
        get_headers = {**SSE_ACCEPT, "Mcp-Session-Id": session_id}
        async with open_stream(client, "GET", srv.url, headers=get_headers) as standalone:
            get_reader = SSEReader(standalone)
            assert_priming(await get_reader.next())
            original = call_body(1, "test_tool_with_progress", meta={"progressToken": "first"})
            async with open_stream(
                client, "POST", srv.url, content=dumps(original), headers=legacy_headers(session_id)
            ) as post:
                reader = SSEReader(post)
                assert_priming(await reader.next())
                assert (await reader.next()).json() == progress("first", 0)
                duplicate = call_body(1, "test_simple_text")
                refused = await client.post(srv.url, content=dumps(duplicate), headers=legacy_headers(session_id))
                assert refused.json() == {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "error": {"code": -32600, "message": "Invalid Request: id already in use"},
                }
                rest = [event.json() for event in await reader.rest(timeout=5)]
            assert rest == [progress("first", 50), progress("first", 100), text_result(1, PROGRESS_DONE)]
            await get_reader.assert_quiet(0.3)


# ================================================================================= modern era


def post_modern(client: httpx.Client, url: str, body: dict[str, Any], **headers: str | None) -> httpx.Response:
    response = client.post(url, content=dumps(body), headers=modern_headers(body, **headers))
    assert "mcp-session-id" not in response.headers, "a 2026-07-28 request must never get a session"
    return response


def error_body(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def test_modern_call_answers_json_with_result_type_and_server_info(srv, client):
    body = modern_body(1, "tools/call", {"name": "test_simple_text", "arguments": {}})
    response = post_modern(client, srv.url, body)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json() == modern_text_result(1, SIMPLE_TEXT)


def test_modern_discover_and_list(srv, client):
    discover = post_modern(client, srv.url, modern_body("d", "server/discover"))
    assert discover.status_code == 200
    result = discover.json()["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"][0] == MODERN
    assert result["capabilities"]["tools"] == {"listChanged": True}
    assert result["_meta"] == server_info_meta(full=True)
    assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
    assert result["cacheScope"] in ("public", "private")
    tools = post_modern(client, srv.url, modern_body("t", "tools/list"))
    assert tools.status_code == 200
    listed = tools.json()["result"]
    assert listed["resultType"] == "complete" and listed["_meta"] == server_info_meta()
    assert "ttlMs" in listed and "cacheScope" in listed
    assert "test_simple_text" in {tool["name"] for tool in listed["tools"]}


def test_modern_resource_read_with_name_header(srv, client):
    body = modern_body(2, "resources/read", {"uri": "test://static-text"})
    response = post_modern(client, srv.url, body)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["contents"] == [
        {
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    ]
    assert result["resultType"] == "complete"
    # The same with the Base64 sentinel form of the header.
    encoded = post_modern(client, srv.url, body, Mcp_Name=base64_header("test://static-text"))
    assert encoded.status_code == 200
    assert encoded.json() == response.json()


@pytest.mark.parametrize(
    ("method", "params", "override"),
    [
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Method": None}),
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Method": "tools/list"}),
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Method": "TOOLS/CALL"}),
        ("tools/list", {}, {"Mcp_Method": "tools/call"}),
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Name": None}),
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Name": "test_error_handling"}),
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Name": "TEST_SIMPLE_TEXT"}),
        (
            "tools/call",
            {"name": "test_simple_text", "arguments": {}},
            {"Mcp_Name": base64_header("test_error_handling")},
        ),
        ("tools/call", {"name": "test_simple_text", "arguments": {}}, {"Mcp_Name": "=?base64?not base64!?="}),
        ("prompts/get", {"name": "test_simple_prompt"}, {"Mcp_Name": None}),
        ("resources/read", {"uri": "test://static-text"}, {"Mcp_Name": "test://static-binary"}),
        ("resources/read", {"uri": "test://static-text"}, {"Mcp_Name": None}),
        ("tools/list", {}, {"MCP_Protocol_Version": None}),
        ("tools/list", {}, {"MCP_Protocol_Version": LATEST_LEGACY}),
    ],
)
def test_modern_header_mismatch_is_400_32020(srv, client, method, params, override):
    body = modern_body(5, method, params)
    response = post_modern(client, srv.url, body, **override)
    assert response.status_code == 400
    assert response.headers["content-type"] == "application/json"
    payload = response.json()
    assert payload["id"] == 5 and payload["jsonrpc"] == "2.0"
    assert payload["error"]["code"] == -32020, payload
    assert payload["error"]["message"].startswith("Header mismatch: "), payload


def test_modern_base64_name_header_decoding_to_body_value(srv, client):
    body = modern_body(7, "tools/call", {"name": "test_simple_text", "arguments": {}})
    response = post_modern(client, srv.url, body, Mcp_Name=base64_header("test_simple_text"))
    assert response.status_code == 200
    assert response.json() == modern_text_result(7, SIMPLE_TEXT)
    # A non-ASCII name can only travel encoded: the header check passes and the unknown tool is -32602.
    unknown = modern_body(8, "tools/call", {"name": "outil-é-世界", "arguments": {}})
    response = post_modern(client, srv.url, unknown)
    assert modern_headers(unknown)["Mcp-Name"].startswith("=?base64?")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


def test_modern_unsupported_version_is_400_32022(srv, client):
    body = modern_body(9, "tools/list", meta={"io.modelcontextprotocol/protocolVersion": "v999.0.0"})
    response = post_modern(client, srv.url, body)  # the header mirrors the body: v999.0.0
    assert response.status_code == 400
    payload = response.json()
    assert payload["id"] == 9
    assert payload["error"]["code"] == -32022
    assert payload["error"]["message"] == "Unsupported protocol version"
    assert payload["error"]["data"]["requested"] == "v999.0.0"
    supported = payload["error"]["data"]["supported"]
    assert MODERN in supported
    discover = post_modern(client, srv.url, modern_body("d", "server/discover")).json()["result"]
    assert supported == discover["supportedVersions"]
    # Body v999.0.0 under a 2026-07-28 header: the header check comes first.
    mismatch = post_modern(client, srv.url, body, MCP_Protocol_Version=MODERN)
    assert mismatch.status_code == 400
    assert mismatch.json()["error"]["code"] == -32020


def test_modern_missing_envelope_fields_are_400_32602(srv, client):
    body = modern_body(10, "tools/list")
    del body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    response = post_modern(client, srv.url, body)
    assert response.status_code == 400
    assert response.json() == error_body(
        10, -32602, "params._meta is missing io.modelcontextprotocol/clientCapabilities"
    )
    # The modern header with no envelope at all.
    bare = rpc(11, "tools/list", {})
    response = client.post(srv.url, content=dumps(bare), headers=modern_headers(bare, MCP_Protocol_Version=MODERN))
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602
    assert "mcp-session-id" not in response.headers
    # A bad log level is -32602 too.
    leveled = modern_body(12, "tools/list", meta={"io.modelcontextprotocol/logLevel": "loud"})
    response = post_modern(client, srv.url, leveled)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("ping", {}),
        (
            "initialize",
            {"protocolVersion": LATEST_LEGACY, "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}},
        ),
        ("logging/setLevel", {"level": "debug"}),
        ("resources/subscribe", {"uri": "test://static-text"}),
        ("resources/unsubscribe", {"uri": "test://static-text"}),
        ("unknown/method", {}),
    ],
)
def test_modern_removed_or_unknown_method_is_404_32601(srv, client, method, params):
    body = modern_body(13, method, params)
    response = post_modern(client, srv.url, body)
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    payload = response.json()
    assert payload["id"] == 13
    assert payload["error"]["code"] == -32601


def test_modern_get_and_delete_are_405(srv, client):
    for headers in (
        {**SSE_ACCEPT, "MCP-Protocol-Version": MODERN},
        {**SSE_ACCEPT, "MCP-Protocol-Version": MODERN, "Mcp-Session-Id": "whatever"},
    ):
        get = client.get(srv.url, headers=headers)
        assert get.status_code == 405
        assert get.headers["allow"] == "POST"
        delete = client.delete(srv.url, headers=headers)
        assert delete.status_code == 405
        assert delete.headers["allow"] == "POST"


def test_modern_unknown_resource_is_400_32602_with_uri(srv, client):
    uri = "test://nonexistent-resource-for-conformance-testing"
    response = post_modern(client, srv.url, modern_body(14, "resources/read", {"uri": uri}))
    assert response.status_code == 400
    payload = response.json()
    assert payload["error"]["code"] == -32602
    assert payload["error"]["data"] == {"uri": uri}


def test_modern_missing_capability_is_400_32021(srv, client):
    body = modern_body(15, "tools/call", {"name": "test_missing_capability", "arguments": {}})
    response = post_modern(client, srv.url, body)
    assert response.status_code == 400
    payload = response.json()
    assert payload["id"] == 15
    assert payload["error"]["code"] == -32021
    assert payload["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}
    # With the capability declared, the server asks for the input instead (200).
    capable = modern_body(
        16,
        "tools/call",
        {"name": "test_missing_capability", "arguments": {}},
        meta={"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
    )
    response = post_modern(client, srv.url, capable)
    assert response.status_code == 200
    assert response.json()["result"]["resultType"] == "input_required"


def test_modern_request_never_gets_a_session(srv, client):
    # Even when it carries an Mcp-Session-Id (ignored) or a Last-Event-ID.
    body = modern_body(17, "tools/call", {"name": "test_simple_text", "arguments": {}})
    response = post_modern(client, srv.url, body, Mcp_Session_Id="made-up", Last_Event_ID="x-1")
    assert response.status_code == 200
    assert response.json() == modern_text_result(17, SIMPLE_TEXT)
    # A modern notification: 202, no body, no session.
    note = client.post(
        srv.url,
        content=dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
        headers={"Accept": ACCEPT_BOTH, "Content-Type": "application/json", "MCP-Protocol-Version": MODERN},
    )
    assert note.status_code == 202
    assert note.content == b""
    assert "mcp-session-id" not in note.headers


def test_modern_posted_response_is_rejected(srv, client):
    # 2026-07-28 clients never send responses.
    response = client.post(
        srv.url,
        content=dumps({"jsonrpc": "2.0", "id": 1, "result": {}}),
        headers={"Accept": ACCEPT_BOTH, "Content-Type": "application/json", "MCP-Protocol-Version": MODERN},
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32600
    assert "mcp-session-id" not in response.headers


def test_modern_batch_is_rejected(srv, client):
    batch = [modern_body(1, "tools/list"), modern_body(2, "tools/list")]
    response = client.post(
        srv.url,
        content=dumps(batch),
        headers={
            "Accept": ACCEPT_BOTH,
            "Content-Type": "application/json",
            "MCP-Protocol-Version": MODERN,
            "Mcp-Method": "tools/list",
        },
    )
    assert response.status_code == 400
    assert "mcp-session-id" not in response.headers


@pytest.mark.anyio
async def test_modern_progress_streams_only_this_requests_notifications(srv):
    async def call(client: httpx.AsyncClient, request_id: Any, token: Any, out: dict[Any, Any]) -> None:
        body = modern_body(
            request_id,
            "tools/call",
            {"name": "test_tool_with_progress", "arguments": {}},
            meta={"progressToken": token},
        )
        async with open_stream(client, "POST", srv.url, content=dumps(body), headers=modern_headers(body)) as response:
            assert_sse_headers(response)
            assert "mcp-session-id" not in response.headers
            out[request_id] = await SSEReader(response).rest()

    results: dict[Any, Any] = {}
    async with async_client() as client, anyio.create_task_group() as group:
        group.start_soon(call, client, "x", "tok-x", results)
        group.start_soon(call, client, 77, 77, results)
        group.start_soon(call, client, "y", "tok-y", results)
    for request_id, token in (("x", "tok-x"), (77, 77), ("y", "tok-y")):
        messages = [event.json() for event in results[request_id]]
        assert messages[:3] == [progress(token, 0), progress(token, 50), progress(token, 100)]
        assert messages[3] == {
            "jsonrpc": "2.0",
            "id": request_id,
            "result": {
                "content": [{"type": "text", "text": PROGRESS_DONE}],
                "resultType": "complete",
                "_meta": server_info_meta(),
            },
        }
        assert len(messages) == 4
        assert all(event.event == "message" and event.data for event in results[request_id])


@pytest.mark.anyio
async def test_modern_logging_only_when_asked(srv):
    async with async_client() as client:
        asked = modern_body(
            1,
            "tools/call",
            {"name": "test_tool_with_logging", "arguments": {}},
            meta={"io.modelcontextprotocol/logLevel": "info"},
        )
        async with open_stream(
            client, "POST", srv.url, content=dumps(asked), headers=modern_headers(asked)
        ) as response:
            assert_sse_headers(response)
            events = await SSEReader(response).rest()
        assert [event.json() for event in events] == [
            *(log_message(text) for text in LOG_MESSAGES),
            modern_text_result(1, LOGGING_DONE),
        ]
        # No logLevel: no messages at all, so a plain JSON answer.
        silent = modern_body(2, "tools/call", {"name": "test_tool_with_logging", "arguments": {}})
        response = await client.post(srv.url, content=dumps(silent), headers=modern_headers(silent))
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        assert response.json() == modern_text_result(2, LOGGING_DONE)
        # The threshold filters: warning and above only.
        warned = modern_body(
            3,
            "tools/call",
            {"name": "test_logging_tool", "arguments": {}},
            meta={"io.modelcontextprotocol/logLevel": "warning"},
        )
        async with open_stream(
            client, "POST", srv.url, content=dumps(warned), headers=modern_headers(warned)
        ) as response:
            events = await SSEReader(response).rest()
        assert [event.json() for event in events] == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {
                    "level": "warning",
                    "data": "warning message from test_logging_tool",
                    "logger": "plainmcp-everything",
                },
            },
            modern_text_result(3, "Logged at debug, info and warning"),
        ]


def ack(subscription_id: Any, notifications: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": {
            "_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id},
            "notifications": notifications,
        },
    }


def list_changed(kind: str, subscription_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": f"notifications/{kind}/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": subscription_id}},
    }


async def trigger(client: httpx.AsyncClient, url: str, tool: str = "test_trigger_tool_change") -> None:
    body = modern_body("trigger", "tools/call", {"name": tool, "arguments": {}})
    response = await client.post(url, content=dumps(body), headers=modern_headers(body))
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert response.json()["result"]["resultType"] == "complete"


@pytest.mark.anyio
async def test_modern_listen_acknowledges_then_delivers_list_changed(srv):
    async with async_client() as client, async_client() as other:
        body = modern_body("L1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with open_stream(client, "POST", srv.url, content=dumps(body), headers=modern_headers(body)) as listen:
            assert_sse_headers(listen)
            assert "mcp-session-id" not in listen.headers
            reader = SSEReader(listen)
            assert (await reader.next()).json() == ack("L1", {"toolsListChanged": True})
            await trigger(other, srv.url)
            assert (await reader.next()).json() == list_changed("tools", "L1")
            # A prompt change was not asked for; a second tool change was.
            await trigger(other, srv.url, "test_trigger_prompt_change")
            await trigger(other, srv.url)
            assert (await reader.next()).json() == list_changed("tools", "L1")
            await reader.assert_quiet(0.3)


@pytest.mark.anyio
async def test_modern_listen_filter_and_numeric_id(srv):
    async with async_client() as client, async_client() as other:
        body = modern_body(424242, "subscriptions/listen", {"notifications": {"promptsListChanged": True}})
        async with open_stream(client, "POST", srv.url, content=dumps(body), headers=modern_headers(body)) as listen:
            reader = SSEReader(listen)
            assert (await reader.next()).json() == ack(424242, {"promptsListChanged": True})
            await trigger(other, srv.url)  # tools: not subscribed
            await reader.assert_quiet(0.4)
            await trigger(other, srv.url, "test_trigger_prompt_change")
            assert (await reader.next()).json() == list_changed("prompts", 424242)


@pytest.mark.anyio
async def test_modern_closed_listen_leaves_server_responsive(srv):
    async with async_client() as client:
        for n in range(5):
            body = modern_body(f"L{n}", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            async with open_stream(
                client, "POST", srv.url, content=dumps(body), headers=modern_headers(body)
            ) as listen:
                assert (await SSEReader(listen).next()).json()["method"] == "notifications/subscriptions/acknowledged"
        started = time.monotonic()
        await trigger(client, srv.url)
        await trigger(client, srv.url)
        assert time.monotonic() - started < 2.0
    assert "Traceback" not in srv.log()


# ==================================================================== in-process (own servers)


class Probe:
    """What the in-process tools saw, shared across threads."""

    def __init__(self) -> None:
        self.started = threading.Event()
        self.cancelled = threading.Event()
        self.completed = threading.Event()


def probe_server(probe: Probe, ticks: int = 10) -> Server:
    server = Server("e2e-probe", "0.0.1")

    @server.tool()
    async def slow(ctx, args):
        """Reports progress once, then waits a minute (unless cancelled)"""
        probe.started.set()
        await ctx.report_progress(1, 2, "started")
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            probe.cancelled.set()
            raise
        probe.completed.set()
        return "slow done"

    @server.tool()
    async def ticker(ctx, args):
        """Reports progress 1..ticks, 40 ms apart"""
        for n in range(1, ticks + 1):
            await ctx.report_progress(n, ticks)
            await anyio.sleep(0.04)
        return "ticked"

    @server.tool()
    async def quick(ctx, args):
        """Answers at once"""
        return "quick"

    return server


@pytest.fixture
def probe_app() -> Iterator[tuple[ThreadedApp, Probe, Server]]:
    probe = Probe()
    server = probe_server(probe)
    with app_in_thread(MCPApp(server, keepalive_seconds=0.2)) as app:
        yield app, probe, server


def wait_for(predicate: Any, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.mark.anyio
async def test_modern_closing_a_slow_call_stream_cancels_it(probe_app):
    app, probe, _server = probe_app
    async with async_client() as client:
        body = modern_body("s1", "tools/call", {"name": "slow", "arguments": {}}, meta={"progressToken": "slow"})
        async with open_stream(client, "POST", app.url, content=dumps(body), headers=modern_headers(body)) as response:
            assert_sse_headers(response)
            first = await SSEReader(response).next()
            assert first.json() == {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": "slow", "progress": 1, "total": 2, "message": "started"},
            }
        # The client closed the stream: the handler is cancelled, never completes.
        assert await anyio.to_thread.run_sync(probe.cancelled.wait, 5.0), "the slow call was not cancelled"
        assert not probe.completed.is_set()
        quick = modern_body("q", "tools/call", {"name": "quick", "arguments": {}})
        with anyio.fail_after(3):
            response = await client.post(app.url, content=dumps(quick), headers=modern_headers(quick))
        assert response.status_code == 200
        assert response.json()["result"]["content"] == [{"type": "text", "text": "quick"}]


@pytest.mark.anyio
async def test_modern_closing_listen_ends_the_subscription(probe_app):
    app, _probe, server = probe_app
    baseline = len(server.bus)
    async with async_client() as client:
        body = modern_body("L", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        async with open_stream(client, "POST", app.url, content=dumps(body), headers=modern_headers(body)) as listen:
            reader = SSEReader(listen)
            assert (await reader.next()).json() == ack("L", {"toolsListChanged": True})
            assert len(server.bus) > baseline
            # Idle: keep-alive comments only.
            await reader.assert_quiet(0.7)
            assert reader.comments, "no keep-alive comment on an idle listen stream"
        assert await anyio.to_thread.run_sync(wait_for, lambda: len(server.bus) == baseline), "listen still attached"


@pytest.mark.anyio
async def test_legacy_disconnect_is_not_cancellation_and_resume_gets_the_rest(probe_app):
    app, probe, _server = probe_app
    async with async_client() as client:
        session_id = await alegacy_session(client, app.url)
        body = call_body(1, "ticker", meta={"progressToken": "t"})
        async with open_stream(
            client, "POST", app.url, content=dumps(body), headers=legacy_headers(session_id)
        ) as post:
            reader = SSEReader(post)
            assert_priming(await reader.next())
            seen = [await reader.next(), await reader.next()]
        assert [event.json()["params"]["progress"] for event in seen] == [1, 2]
        await anyio.sleep(0.15)  # some events are produced while nobody listens
        headers = {**SSE_ACCEPT, "Mcp-Session-Id": session_id, "Last-Event-ID": seen[-1].id}
        async with open_stream(client, "GET", app.url, headers=headers) as resumed:
            events = [event for event in await SSEReader(resumed).rest() if event.data]
        messages = [event.json() for event in events]
        assert [message["params"]["progress"] for message in messages[:-1]] == list(range(3, 11))
        assert messages[-1] == text_result(1, "ticked")
        ids_unique([*seen, *events])

        # A slow call whose stream is dropped keeps running.
        slow = call_body(2, "slow", meta={"progressToken": "s"})
        async with open_stream(
            client, "POST", app.url, content=dumps(slow), headers=legacy_headers(session_id)
        ) as post:
            reader = SSEReader(post)
            assert_priming(await reader.next())
            assert (await reader.next()).json()["method"] == "notifications/progress"
        await anyio.sleep(0.5)
        assert probe.started.is_set() and not probe.cancelled.is_set()


@pytest.mark.anyio
async def test_legacy_get_stream_keep_alive(probe_app):
    app, _probe, _server = probe_app
    async with async_client() as client:
        session_id = await alegacy_session(client, app.url)
        async with open_stream(client, "GET", app.url, headers={**SSE_ACCEPT, "Mcp-Session-Id": session_id}) as stream:
            reader = SSEReader(stream)
            assert_priming(await reader.next())
            await reader.assert_quiet(0.7)
            assert reader.comments, "no keep-alive comment on an idle GET stream"


@pytest.mark.anyio
async def test_modern_client_disconnect_before_any_response_cancels_the_call(probe_app):
    """2026-07-28 cancellation page: "The server MUST treat a client disconnect as cancellation of
    that request" -- also before the server has chosen between JSON and SSE (no progress token
    here, so nothing is written until the result)."""
    app, probe, _server = probe_app
    body = modern_body("s2", "tools/call", {"name": "slow", "arguments": {}})
    async with async_client() as client, anyio.create_task_group() as group:
        group.start_soon(lambda: client.post(app.url, content=dumps(body), headers=modern_headers(body)))
        assert await anyio.to_thread.run_sync(probe.started.wait, 5.0)
        group.cancel_scope.cancel()  # abandons the POST: httpx closes the connection
    assert await anyio.to_thread.run_sync(probe.cancelled.wait, 5.0), "the abandoned call was not cancelled"
    assert not probe.completed.is_set()


def test_legacy_sessions_limit_and_idle_expiry():
    probe = Probe()
    app = MCPApp(probe_server(probe), max_sessions=2, session_idle_seconds=0.6)
    with app_in_thread(app) as served, sync_client() as client:
        first = legacy_session(client, served.url)
        second = legacy_session(client, served.url)
        third = client.post(served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
        assert third.status_code == 503
        assert "mcp-session-id" not in third.headers
        assert third.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32603, "message": "Too many sessions; try again later"},
        }
        # Ending one frees a place.
        assert client.delete(served.url, headers={"Mcp-Session-Id": first}).status_code == 204
        fresh = legacy_session(client, served.url)
        # An idle session is ended (then 404); one kept in use lives on. (Any request to a
        # session counts as use, so the idle one is not touched while we wait.)
        deadline = time.monotonic() + 1.8  # idle limit 0.6 s, checked every 0.3 s
        while time.monotonic() < deadline:
            kept = client.post(served.url, content=dumps(rpc(1, "ping")), headers=legacy_headers(fresh))
            assert kept.status_code == 200
            time.sleep(0.1)
        idle = client.post(served.url, content=dumps(rpc(1, "ping")), headers=legacy_headers(second))
        assert idle.status_code == 404
        assert client.post(served.url, content=dumps(rpc(2, "ping")), headers=legacy_headers(fresh)).status_code == 200


@pytest.mark.anyio
async def test_modern_listen_ends_with_a_result_on_server_shutdown():
    """A server closing a listen stream gracefully SHOULD answer the listen request
    (``resultType: complete`` with the subscription id) before ending the stream."""
    with server_process() as server:
        async with async_client() as client:
            body = modern_body("bye", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            async with open_stream(
                client, "POST", server.url, content=dumps(body), headers=modern_headers(body)
            ) as listen:
                reader = SSEReader(listen)
                assert (await reader.next()).json() == ack("bye", {"toolsListChanged": True})
                server.process.send_signal(signal.SIGTERM)
                try:
                    events = await reader.rest(timeout=8)
                except httpx.HTTPError as error:
                    raise AssertionError(f"the listen stream was cut off, not closed: {error!r}") from None
        assert [event.json() for event in events] == [
            {
                "jsonrpc": "2.0",
                "id": "bye",
                "result": {
                    "resultType": "complete",
                    "_meta": {"io.modelcontextprotocol/subscriptionId": "bye", **server_info_meta()},
                },
            }
        ]


# ============================================================================== load (bounded)


LOAD = 200


@pytest.mark.anyio
async def test_load_concurrent_legacy_sessions(srv):
    limits = httpx.Limits(max_connections=LOAD, max_keepalive_connections=LOAD)
    failures: list[str] = []

    async def one(client: httpx.AsyncClient, n: int) -> None:
        init = await client.post(srv.url, content=dumps(initialize_body(f"i{n}")), headers=legacy_headers(version=None))
        if init.status_code != 200 or init.json()["id"] != f"i{n}":
            failures.append(f"{n}: init {init.status_code} {init.text[:200]}")
            return
        session_id = init.headers["mcp-session-id"]
        args = {"name": f"client-{n}", "email": f"c{n}@example.com"}
        call = await client.post(
            srv.url, content=dumps(call_body(n, "json_schema_2020_12_tool", args)), headers=legacy_headers(session_id)
        )
        expected = text_result(n, f"JSON Schema 2020-12 tool called with: {json.dumps(args, separators=(',', ':'))}")
        if call.status_code != 200 or call.json() != expected or call.headers.get("mcp-session-id") != session_id:
            failures.append(f"{n}: call {call.status_code} {call.text[:200]}")
            return
        simple = await client.post(
            srv.url, content=dumps(call_body(f"s{n}", "test_simple_text")), headers=legacy_headers(session_id)
        )
        if simple.json() != text_result(f"s{n}", SIMPLE_TEXT):
            failures.append(f"{n}: simple {simple.text[:200]}")
        await client.delete(srv.url, headers={"Mcp-Session-Id": session_id})

    async with async_client(limits=limits, timeout=httpx.Timeout(30.0)) as client:
        with anyio.fail_after(120):  # a hang guard, not a speed test: speed is measured in bench/
            async with anyio.create_task_group() as group:
                for n in range(LOAD):
                    group.start_soon(one, client, n)
    assert failures == []


@pytest.mark.anyio
async def test_load_concurrent_modern_calls(srv):
    limits = httpx.Limits(max_connections=LOAD, max_keepalive_connections=LOAD)
    failures: list[str] = []

    async def one(client: httpx.AsyncClient, n: int) -> None:
        args = {"name": f"modern-{n}", "email": f"m{n}@example.com"}
        body = modern_body(n, "tools/call", {"name": "json_schema_2020_12_tool", "arguments": args})
        response = await client.post(srv.url, content=dumps(body), headers=modern_headers(body))
        expected = modern_text_result(
            n, f"JSON Schema 2020-12 tool called with: {json.dumps(args, separators=(',', ':'))}"
        )
        if response.status_code != 200 or response.json() != expected or "mcp-session-id" in response.headers:
            failures.append(f"{n}: {response.status_code} {response.text[:200]}")

    async with async_client(limits=limits, timeout=httpx.Timeout(30.0)) as client:
        with anyio.fail_after(120):  # a hang guard, not a speed test: speed is measured in bench/
            async with anyio.create_task_group() as group:
                for n in range(LOAD):
                    group.start_soon(one, client, n)
    assert failures == []
