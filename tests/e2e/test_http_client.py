"""The HTTP client's own behaviour (``plainmcp.http_client.connect_http``), against real servers.

Sessions: the client DELETEs its session on close; when the server forgets the session it starts a new
one by itself (and a GET stream for it); ``notifications/initialized`` is taken before the first request.
Transport choice: ``transport="auto"`` and the fallback to HTTP+SSE, and the error when a URL speaks
neither. Then what a server sees of the client: cancellation (2026-07-28: closing the response stream),
custom headers on every request, the ``Mcp-Name`` header in its base64 form, and a legacy stream resumed
with ``Last-Event-ID`` without losing or repeating a progress report.

The everything server runs as a real process (``tests.interop.http_server``); servers of the tests' own
run in-process with uvicorn on a thread, behind ASGI middleware that records every request (method, path,
headers, body) and the status it got. Every wait is bounded."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import pytest
import uvicorn
from plainmcp import MCPError, Server
from plainmcp.http.app import MCPApp
from plainmcp.http_client import connect_http
from plainmcp_everything import Config, build_server

from tests.interop.http_server import HOST, running_server

pytestmark = pytest.mark.anyio

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
#: Bound for one exchange that should be quick.
QUICK = 5.0
#: Bound for a whole connection (connect, the test's calls, close).
CONNECTION = 30.0
ACCEPT_BOTH = "application/json, text/event-stream"


# --------------------------------------------------------------------------------------------- harness


@dataclass
class Seen:
    """One HTTP request as the server received it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytearray = field(default_factory=bytearray)
    status: int | None = None

    def json(self) -> Any:
        return json.loads(bytes(self.body)) if self.body else None


class Recording:
    """ASGI middleware: records every HTTP request (and the status it got) before the app sees it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[Seen] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            key = name.decode("latin-1").lower()
            headers[key] = f"{headers[key]}, {value.decode('latin-1')}" if key in headers else value.decode("latin-1")
        entry = Seen(scope["method"], scope["path"], scope["query_string"].decode("latin-1"), headers)
        self.seen.append(entry)

        async def recorded_receive() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                entry.body += message.get("body", b"")
            return message

        async def recorded_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                entry.status = message["status"]
            await send(message)

        await self.app(scope, recorded_receive, recorded_send)

    def mcp(self) -> list[Seen]:
        """The requests to the MCP endpoints (not /health)."""
        return [entry for entry in self.seen if entry.path != "/health"]


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve an ASGI app with uvicorn, on a thread of its own and a free loopback port, for the block;
    yields the base URL. (The app runs on that thread's event loop: tests signal across with
    ``threading.Event``.)"""
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY only on sockets whose proto says TCP (with 0,
    # Nagle's algorithm would hold back small SSE events for the peer's delayed ACK).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="on", log_config=None, access_log=False, timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.01)
        yield f"http://{HOST}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop"


@dataclass
class Sent:
    method: str
    url: httpx.URL
    headers: httpx.Headers
    body: bytes
    status: int

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@pytest.fixture
def sent(monkeypatch) -> list[Sent]:
    """Every request our client's httpx sends during the test (for the subprocess servers), with its status."""
    requests: list[Sent] = []
    original = httpx.AsyncClient.send

    async def send(self, request, **options):
        response = await original(self, request, **options)
        requests.append(Sent(request.method, request.url, request.headers, request.content, response.status_code))
        return response

    monkeypatch.setattr(httpx.AsyncClient, "send", send)
    return requests


async def wait_until(condition: Any, what: str, timeout: float = QUICK) -> None:
    with anyio.move_on_after(timeout):
        while not condition():
            await anyio.sleep(0.01)
        return
    raise AssertionError(f"waited {timeout} s for {what}")


async def answer(awaitable: Any, what: str, timeout: float = QUICK) -> Any:
    """``await awaitable``, failing the test (clearly) when it takes longer than ``timeout``."""
    with anyio.move_on_after(timeout):
        return await awaitable
    raise AssertionError(f"no answer to {what} within {timeout} s")


def leaf_errors(error: BaseException) -> list[BaseException]:
    """The errors inside (possibly nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaf_errors(inner)]
    return [error]


def only_text(result: dict[str, Any]) -> str:
    (block,) = result["content"]
    assert block["type"] == "text", block
    return block["text"]


def legacy_headers(session_id: str) -> dict[str, str]:
    return {
        "accept": ACCEPT_BOTH,
        "content-type": "application/json",
        "mcp-session-id": session_id,
        "mcp-protocol-version": LEGACY,
    }


PING = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "ping"})


# ------------------------------------------------------------------------------------------ sessions


async def test_close_deletes_the_session(sent):
    with running_server("http") as server:
        async with httpx.AsyncClient(timeout=QUICK, trust_env=False) as raw:
            with anyio.fail_after(CONNECTION):
                async with connect_http(server.mcp_url, protocol_version=LEGACY) as client:
                    session_id = client.http_transport.session_id
                    assert session_id
                    alive = await raw.post(server.mcp_url, content=PING, headers=legacy_headers(session_id))
                    assert (alive.status_code, alive.json()) == (200, {"jsonrpc": "2.0", "id": 99, "result": {}})
            (delete,) = [request for request in sent if request.method == "DELETE"]
            assert (delete.headers["mcp-session-id"], delete.status) == (session_id, 204)
            after = await raw.post(server.mcp_url, content=PING, headers=legacy_headers(session_id))
            assert after.status_code == 404
            get = await raw.get(server.mcp_url, headers={**legacy_headers(session_id), "accept": "text/event-stream"})
            assert get.status_code == 404
        server.assert_clean_log()


async def _initialized(sent: list[Sent]) -> None:
    """Wait until the server accepted notifications/initialized (the client posts it in the background)."""
    await wait_until(
        lambda: any((r.json() or {}).get("method") == "notifications/initialized" and r.status == 202 for r in sent),
        "the server to accept notifications/initialized",
    )


async def test_forgotten_session_is_initialized_again_transparently(sent):
    with running_server("http") as server:
        async with httpx.AsyncClient(timeout=QUICK, trust_env=False) as raw:
            with anyio.fail_after(CONNECTION):
                async with connect_http(server.mcp_url, protocol_version=LEGACY) as client:
                    await _initialized(sent)
                    old = client.http_transport.session_id
                    forgotten = await raw.delete(server.mcp_url, headers=legacy_headers(old))
                    assert forgotten.status_code == 204
                    del sent[:]
                    result = await answer(client.call_tool("test_simple_text", {}), "the call after the session ended")
                    assert only_text(result) == "This is a simple text response for testing."
                    new = client.http_transport.session_id
                    assert new and new != old
                    posts = [
                        (r.json().get("method"), r.headers.get("mcp-session-id"), r.status)
                        for r in sent
                        if r.method == "POST"
                    ]
                    assert posts == [
                        ("tools/call", old, 404),
                        ("initialize", None, 200),
                        ("notifications/initialized", new, 202),
                        ("tools/call", new, 200),
                    ] or posts == [  # the notification's POST may finish after the retried call's
                        ("tools/call", old, 404),
                        ("initialize", None, 200),
                        ("tools/call", new, 200),
                        ("notifications/initialized", new, 202),
                    ]
                    alive = await raw.post(server.mcp_url, content=PING, headers=legacy_headers(new))
                    assert alive.status_code == 200
                    with anyio.fail_after(QUICK):
                        assert len(await client.list_all_tools()) == 38
            assert (await raw.post(server.mcp_url, content=PING, headers=legacy_headers(new))).status_code == 404
        server.assert_clean_log()


async def test_after_initializing_again_the_session_stream_is_reopened(sent):
    """The new session gets a GET stream of its own: server notifications (a list change here) still arrive."""
    notifications: list[str] = []
    with running_server("http") as server:
        async with httpx.AsyncClient(timeout=QUICK, trust_env=False) as raw:
            with anyio.fail_after(CONNECTION):
                async with connect_http(
                    server.mcp_url, protocol_version=LEGACY, on_notification=lambda n: notifications.append(n.method)
                ) as client:
                    await _initialized(sent)
                    old = client.http_transport.session_id
                    assert (await raw.delete(server.mcp_url, headers=legacy_headers(old))).status_code == 204
                    del sent[:]
                    await answer(client.ping(), "the ping that finds the session gone")
                    new = client.http_transport.session_id
                    assert new not in (None, old)
                    await _initialized(sent)  # the new session is ready: it gets list changes from now on
                    changed = await answer(client.call_tool("test_trigger_tool_change", {}), "the trigger")
                    assert only_text(changed) == "Removed tool test_dynamic_tool"
                    await wait_until(
                        lambda: "notifications/tools/list_changed" in notifications,
                        "the new session's list change (on its GET stream)",
                    )
                    gets = [r for r in sent if r.method == "GET" and r.headers.get("mcp-session-id") == new]
                    assert gets and all(r.status == 200 for r in gets)


class DelayInitialized:
    """ASGI middleware: holds back every POST of ``notifications/initialized`` for a while (a slow path
    through the network), and records the order in which the app gets the posted messages."""

    def __init__(self, app: Any, delay: float = 0.3) -> None:
        self.app = app
        self.delay = delay
        self.order: list[str | None] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        method = json.loads(body).get("method") if body.startswith(b"{") else None
        if method == "notifications/initialized":
            await anyio.sleep(self.delay)
        self.order.append(method)
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


@pytest.mark.parametrize("path", ["/mcp", "/sse"], ids=["streamable", "sse"])
async def test_initialized_reaches_the_server_before_the_first_request(path):
    """Each message is its own POST, so the client must not post its first request before the server has
    taken notifications/initialized: until then the session is not ready, and what the server publishes
    in between (a list change here) is not sent to it."""
    app = DelayInitialized(MCPApp(build_server(Config())))
    notifications: list[str] = []
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(
                f"{base}{path}", protocol_version=LEGACY, on_notification=lambda n: notifications.append(n.method)
            ) as client:
                changed = await answer(client.call_tool("test_trigger_tool_change", {}), "the first call")
                assert only_text(changed) == "Removed tool test_dynamic_tool"
                await wait_until(lambda: "notifications/tools/list_changed" in notifications, "the list change")
    assert app.order[:3] == ["initialize", "notifications/initialized", "tools/call"]


async def test_forgotten_session_noticed_by_a_notification_is_initialized_again(sent):
    """The first message after the server forgot the session is a notification (its POST gets 404): the
    next request must still reach a (new) session, not go out without one."""
    with running_server("http") as server:
        async with httpx.AsyncClient(timeout=QUICK, trust_env=False) as raw:
            with anyio.fail_after(CONNECTION):
                async with connect_http(server.mcp_url, protocol_version=LEGACY, roots=[]) as client:
                    await _initialized(sent)
                    old = client.http_transport.session_id
                    assert (await raw.delete(server.mcp_url, headers=legacy_headers(old))).status_code == 204
                    await client.set_roots([{"uri": "file:///tmp", "name": "tmp"}])
                    await wait_until(
                        lambda: any((r.json() or {}).get("method") == "notifications/roots/list_changed" for r in sent),
                        "the POST of notifications/roots/list_changed",
                    )
                    result = await answer(
                        client.call_tool("test_simple_text", {}), "the first call after the notification got 404"
                    )
                    assert only_text(result) == "This is a simple text response for testing."
                    assert client.http_transport.session_id not in (None, old)
            assert not [r for r in sent if r.method == "POST" and r.status == 400]


# ---------------------------------------------------------------------------------- transport choice


async def test_auto_with_an_sse_url_speaks_http_sse_without_probing(sent):
    with running_server("sse") as server:
        with anyio.fail_after(CONNECTION):
            async with connect_http(server.sse_url) as client:
                assert not hasattr(client, "http_transport")  # not the Streamable HTTP path
                assert client.protocol_version == LEGACY
                with anyio.fail_after(QUICK):
                    assert only_text(await client.call_tool("test_simple_text", {})) == (
                        "This is a simple text response for testing."
                    )
        assert [(r.method, r.url.path) for r in sent][:2] == [("GET", "/sse"), ("POST", "/messages")]
        assert {(r.method, r.url.path, r.status) for r in sent} == {("GET", "/sse", 200), ("POST", "/messages", 202)}
        server.assert_clean_log()


async def test_auto_falls_back_to_http_sse_at_the_same_url(sent):
    """A server that serves HTTP+SSE at a URL not ending in /sse: the first POST gets 405 (no JSON-RPC
    error), so the client opens the SSE stream at that same URL."""
    app = Recording(MCPApp(build_server(Config()), streamable=False, sse_path="/events"))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/events", protocol_version=LEGACY) as client:
                assert not hasattr(client, "http_transport")
                with anyio.fail_after(QUICK):
                    tools = await client.list_all_tools()
                    assert len(tools) == 38
                    assert only_text(await client.call_tool("test_simple_text", {})) == (
                        "This is a simple text response for testing."
                    )
    requests = [(entry.method, entry.path, entry.status) for entry in app.mcp()]
    assert requests[:3] == [("POST", "/events", 405), ("GET", "/events", 200), ("POST", "/messages", 202)]
    assert set(requests[2:]) == {("POST", "/messages", 202)}
    assert sent[0].json()["method"] == "initialize"  # the probe was the initialize POST


@pytest.mark.parametrize("path", ["", "/mcp"])
async def test_auto_without_sse_at_the_url_fails_clearly(sent, path):
    """An SSE-only server, given its base URL or /mcp: POST gets 404, so HTTP+SSE is tried at the same URL,
    which is 404 too. The error names the URL and the status; nothing else is tried."""
    with running_server("sse") as server:
        url = server.url(path)
        with pytest.raises((ConnectionError, BaseExceptionGroup)) as caught, anyio.fail_after(CONNECTION):
            async with connect_http(url):
                pass
        (error,) = leaf_errors(caught.value)
        assert isinstance(error, ConnectionError)
        assert str(error) == f"GET {url}: HTTP 404"
        assert [(r.method, str(r.url), r.status) for r in sent] == [("POST", url, 404), ("GET", url, 404)]


async def test_explicit_streamable_does_not_fall_back(sent):
    with running_server("sse") as server:
        with pytest.raises((MCPError, BaseExceptionGroup)) as caught, anyio.fail_after(CONNECTION):
            async with connect_http(server.mcp_url, transport="streamable"):
                pass
        (error,) = leaf_errors(caught.value)
        assert isinstance(error, MCPError)
        assert error.data == {"httpStatus": 404}
        assert [(r.method, r.url.path, r.status) for r in sent] == [("POST", "/mcp", 404)]


async def test_explicit_sse_is_used_whatever_the_url(sent):
    app = Recording(MCPApp(build_server(Config()), streamable=False, sse_path="/events"))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/events", transport="sse") as client:
                with anyio.fail_after(QUICK):
                    await client.ping()
    assert [entry.method for entry in app.mcp()][:1] == ["GET"]  # no probing POST
    assert {(entry.method, entry.path) for entry in app.mcp()} == {("GET", "/events"), ("POST", "/messages")}


# ------------------------------------------------------------------------------------------ cancellation


def slow_server() -> tuple[Server, dict[str, threading.Event]]:
    """A server whose ``slow`` tool tells the test (across threads) that it started and was cancelled."""
    server = Server("slow", "1.0.0")
    events = {"started": threading.Event(), "cancelled": threading.Event()}

    @server.tool()
    async def slow(ctx, args):
        """Waits a long time unless cancelled."""
        events["started"].set()
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            events["cancelled"].set()
            raise
        return "finished"

    @server.tool()
    async def quick(ctx, args):
        """Answers at once."""
        return "quick"

    return server, events


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_cancelling_the_caller_cancels_the_call_on_the_server(era):
    """Cancel the task that awaits a slow call: the server's handler is cancelled (2026-07-28: the client
    closes the call's response stream, the revision's signal; legacy: notifications/cancelled), and the
    client goes on working."""
    server, events = slow_server()
    app = Recording(MCPApp(server))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/mcp", protocol_version=era) as client:
                outcome: list[Any] = []

                async def caller() -> None:
                    outcome.append(await client.call_tool("slow", {}))

                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(caller)
                    await wait_until(events["started"].is_set, "the slow tool to start")
                    task_group.cancel_scope.cancel()
                assert outcome == []
                await wait_until(events["cancelled"].is_set, "the server to cancel the slow call")
                with anyio.fail_after(QUICK):
                    assert only_text(await client.call_tool("quick", {})) == "quick"
                    assert [tool["name"] for tool in await client.list_all_tools()] == ["slow", "quick"]
    bodies = [(entry.json() or {}).get("method") for entry in app.mcp() if entry.method == "POST"]
    # (Legacy: the cancelled call's own POST stays open, unanswered, until the session ends; not checked.)
    others = [entry for entry in app.mcp() if (entry.json() or {}).get("params", {}).get("name") != "slow"]
    assert all(entry.status is not None and entry.status < 400 for entry in others), [
        (entry.method, (entry.json() or {}).get("method"), entry.status) for entry in app.mcp()
    ]
    if era == MODERN:
        # Closing the stream is the whole signal: no notification is posted (there is no session for it).
        assert "notifications/cancelled" not in bodies
    else:
        assert bodies.count("notifications/cancelled") == 1


# --------------------------------------------------------------------------------------------- headers

CUSTOM = {"Authorization": "Bearer s3cret-token", "X-Request-Source": "plainmcp-tests"}


@pytest.mark.parametrize(
    ("era", "path"),
    [(LEGACY, "/mcp"), (MODERN, "/mcp"), (LEGACY, "/sse")],
    ids=["streamable-legacy", "streamable-modern", "sse"],
)
async def test_custom_headers_are_sent_on_every_request(era, path):
    """Every request the client makes carries the caller's headers: posts, the session's GET stream, the
    resuming GET, the answer to a server request, the DELETE; and the SSE stream and its posts."""
    app = Recording(MCPApp(build_server(Config()), retry_ms=50))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(
                f"{base}{path}",
                protocol_version=era,
                headers=CUSTOM,
                sampling=_sample,
            ) as client:
                with anyio.fail_after(QUICK):
                    assert len(await client.list_all_tools()) == 38
                    sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
                    assert only_text(sampled) == "LLM response: Paris."
                    reconnected = await client.call_tool("test_reconnection", {})
                    assert only_text(reconnected).startswith("Reconnection test completed successfully.")
    seen = app.mcp()
    for entry in seen:
        assert entry.headers.get("authorization") == CUSTOM["Authorization"], (entry.method, entry.path)
        assert entry.headers.get("x-request-source") == CUSTOM["X-Request-Source"], (entry.method, entry.path)
    kinds = {(entry.method, entry.path, "last-event-id" in entry.headers) for entry in seen}
    answers = [entry for entry in seen if entry.method == "POST" and "method" not in (entry.json() or {})]
    if path == "/sse":
        assert kinds == {("GET", "/sse", False), ("POST", "/messages", False)}
        assert len(answers) == 1  # the sampling answer
    elif era == LEGACY:
        assert kinds == {
            ("POST", "/mcp", False),
            ("GET", "/mcp", False),
            ("GET", "/mcp", True),
            ("DELETE", "/mcp", False),
        }
        assert len(answers) == 1
    else:
        assert kinds == {("POST", "/mcp", False)}  # stateless: no GET stream, no DELETE
        assert answers == []
        assert not any("mcp-session-id" in entry.headers for entry in seen)


async def _sample(params: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": {"type": "text", "text": "Paris."}, "model": "test-model"}


# ----------------------------------------------------------------------------------------- Mcp-Name

CAFE_URI = "note://café/Grüße?q=ü"
PROMPT_NAME = "grüße"


def sentinel(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def names_server() -> Server:
    server = Server("names", "1.0.0")

    @server.resource(CAFE_URI, "cafe", mime_type="text/plain")
    async def cafe(ctx, uri):
        """A resource whose URI is not ASCII."""
        return f"read {uri}"

    @server.prompt(PROMPT_NAME)
    async def greeting(ctx, arguments):
        """A prompt whose name is not ASCII."""
        return "Grüß Gott"

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    async def echo(ctx, args):
        """Echoes its text."""
        return args["text"]

    return server


@pytest.mark.parametrize("era", [MODERN, LEGACY])
async def test_mcp_name_header_uses_the_base64_form_for_non_ascii_values(era):
    """2026-07-28 mirrors the tool name, the prompt name and the resource URI in Mcp-Name: plain ASCII as
    it is, anything else as ``=?base64?...?=``; the server decodes it and accepts the request. A tool's
    arguments are never mirrored. Legacy requests carry no Mcp-Name at all."""
    app = Recording(MCPApp(names_server()))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/mcp", protocol_version=era) as client:
                with anyio.fail_after(QUICK):
                    read = await client.read_resource(CAFE_URI)
                    prompt = await client.get_prompt(PROMPT_NAME)
                    echoed = await client.call_tool("echo", {"text": "naïve ☕"})
    assert read["contents"] == [{"uri": CAFE_URI, "mimeType": "text/plain", "text": f"read {CAFE_URI}"}]
    assert prompt["messages"] == [{"role": "user", "content": {"type": "text", "text": "Grüß Gott"}}]
    assert only_text(echoed) == "naïve ☕"
    named = {
        (entry.json() or {}).get("method"): entry
        for entry in app.mcp()
        if entry.method == "POST"
        and (entry.json() or {}).get("method") in ("resources/read", "prompts/get", "tools/call")
    }
    assert all(entry.status == 200 for entry in named.values())
    if era == MODERN:
        assert named["resources/read"].headers["mcp-name"] == sentinel(CAFE_URI)
        assert named["prompts/get"].headers["mcp-name"] == sentinel(PROMPT_NAME)
        assert named["tools/call"].headers["mcp-name"] == "echo"
        assert {method: entry.headers["mcp-method"] for method, entry in named.items()} == {
            method: method for method in named
        }
    else:
        assert not any("mcp-name" in entry.headers or "mcp-method" in entry.headers for entry in app.mcp())


# ------------------------------------------------------------------------------------------ resumption

STEPS = 30
#: Far enough apart that the client is back (20 ms advised retry) before the next close.
CLOSE_AFTER = (4, 12, 20, 28)
STEP_SECONDS = 0.015


def countdown_server() -> Server:
    server = Server("countdown", "1.0.0")

    @server.tool()
    async def count(ctx, args):
        """Reports progress STEPS times; the server ends the call's SSE stream now and then."""
        for step in range(1, STEPS + 1):
            await ctx.report_progress(step, STEPS, f"step {step}")
            if step in CLOSE_AFTER:
                assert ctx.close_sse_stream()
            await anyio.sleep(STEP_SECONDS)
        return "counted"

    return server


async def test_a_resumed_legacy_stream_loses_and_repeats_no_progress_report():
    """The server ends the call's stream four times mid-call (SSE polling); reports keep coming while the
    client is away. The client resumes each time with Last-Event-ID and sees every report exactly once,
    in order, then the result."""
    app = Recording(MCPApp(countdown_server(), retry_ms=20))
    reports: list[tuple[Any, ...]] = []
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/mcp", protocol_version=LEGACY) as client:
                with anyio.fail_after(QUICK):
                    result = await client.call_tool("count", {}, on_progress=lambda *report: reports.append(report))
    assert only_text(result) == "counted"
    assert reports == [(step, STEPS, f"step {step}") for step in range(1, STEPS + 1)]
    resumes = [entry for entry in app.mcp() if entry.method == "GET" and "last-event-id" in entry.headers]
    assert len(resumes) == len(CLOSE_AFTER)
    assert all(entry.status == 200 for entry in resumes)
    ids = [entry.headers["last-event-id"].rpartition("-") for entry in resumes]
    assert len({key for key, _, _ in ids}) == 1  # all the same stream
    positions = [int(seq) for _, _, seq in ids]
    assert positions == sorted(positions) and len(set(positions)) == len(positions)
