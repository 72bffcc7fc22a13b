"""The official MCP Python SDK (``mcp`` 2.3.0) as the client of ``plainmcp-everything`` over HTTP.

Three ways in, each against a real server process on 127.0.0.1 (``http_server.running_server``):

- ``streamable-legacy``: Streamable HTTP at ``/mcp`` with ``mcp.Client(..., mode="legacy")`` -- the
  initialize handshake, an ``Mcp-Session-Id`` session, a GET stream, server-to-client requests on the
  SSE response of the POST they belong to, and DELETE to end the session;
- ``streamable-modern``: Streamable HTTP at ``/mcp`` with ``mode="2026-07-28"`` (or ``"auto"``) --
  stateless POSTs, ``input_required`` rounds instead of server requests, ``subscriptions/listen``;
- ``sse``: the 2024-11-05 HTTP+SSE transport (``mcp.client.sse.sse_client``, ``--transport sse``):
  ``GET /sse`` announces the ``/messages`` endpoint, every answer travels on that one stream.

Every connection is recorded twice: the JSON-RPC messages the SDK exchanged (``sdk_modern.Wire``,
through taps on the transport's streams) and every HTTP exchange (``HttpRecorder``, an ``httpx2``
transport that keeps each request, its status and headers, and the response body as the SDK read
it). So a test can assert what the SDK's typed API returned, which messages crossed, and on which
HTTP request or stream each travelled. Expected values come from the MCP specification and the
fixture's declarations (servers/everything/README.md), not from the server's code.
"""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged

from tests.servers.everything.support import TOOLS

from .http_server import ServerProcess, running_server
from .sdk_modern import CLIENT_CAPABILITIES, LOG_LEVEL, MODERN, PROTOCOL_VERSION, SERVER_INFO
from .sdk_wire import TapRead, TapWrite, Wire

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.interop,
    # The SDK marks the legacy-only methods (subscribe, setLevel) deprecated as of 2026-07-28.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

LEGACY_HTTP = "streamable-legacy"
MODERN_HTTP = "streamable-modern"
SSE = "sse"
KINDS = [LEGACY_HTTP, MODERN_HTTP, SSE]
LEGACY_KINDS = [LEGACY_HTTP, SSE]

LEGACY = "2025-11-25"
#: Bound for one connection's whole life: connect, the test's exchanges, close.
SESSION_TIMEOUT = 60.0
#: Bound for an exchange that should be quick (the slowest fixture tool takes ~100 ms).
QUICK = 10.0
#: How long "nothing more arrives" is watched for.
QUIET = 0.5

SERVER_INFO_VALUE = {
    "name": "plainmcp-everything",
    "title": "Everything (MCP conformance fixture)",
    "version": "0.1.0",
    "description": "Every MCP feature, under the names the official conformance suite expects",
}
CALL_SERVER_INFO = {"name": "plainmcp-everything", "version": "0.1.0"}  # what a result other than discover carries
CAPABILITIES = {
    "logging": {},
    "completions": {},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
}
TASKS_V1 = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
INSTRUCTIONS = (
    "A conformance fixture: every tool, resource and prompt is named test_* or test://* after what it tests, "
    "and returns fixed content. Nothing here does real work."
)
TOOL_NAMES = TOOLS
SIMPLE_TEXT = "This is a simple text response for testing."
ERROR_TEXT = "This tool intentionally returns an error for testing"
STATIC_TEXT = "This is the content of the static text resource."
SIMPLE_PROMPT = "This is a simple prompt for testing."
LOG_MESSAGES = ["Tool execution started", "Tool processing data", "Tool execution completed"]
PROGRESS = [(value, 100.0, f"Completed step {value} of 100") for value in (0, 50, 100)]
PROGRESS_TEXT = "Progress test completed: 0, 50 and 100 of 100"
WATCHED = "test://watched-resource"
WATCHED_TEXT = "Watched resource content"
UPDATED = re.compile(r"Updated test://watched-resource to revision (\d+)")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------------------------------ HTTP recording


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The complete events of an SSE body (comments and keep-alives dropped), as dicts of their fields."""
    events = []
    for block in text.replace("\r\n", "\n").split("\n\n")[:-1]:  # the last piece is not terminated yet
        event: dict[str, Any] = {}
        data: list[str] = []
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            else:
                event[name] = value
        if event or data:
            event["data"] = "\n".join(data)
            events.append(event)
    return events


@dataclass
class Exchange:
    """One HTTP request the SDK made, and the response as far as the SDK read it."""

    method: str
    url: httpx2.URL
    headers: httpx2.Headers
    content: bytes
    status: int | None = None
    response_headers: httpx2.Headers | None = None
    body: bytearray = field(default_factory=bytearray)
    closed: bool = False

    @property
    def rpc(self) -> Any:
        """The JSON-RPC message the request carried (None for GET / DELETE)."""
        return json.loads(self.content) if self.content else None

    @property
    def content_type(self) -> str:
        assert self.response_headers is not None
        return self.response_headers.get("content-type", "").split(";")[0].strip()

    def events(self) -> list[dict[str, Any]]:
        assert self.content_type == "text/event-stream", self
        return parse_sse(self.body.decode("utf-8"))

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages of the response: its JSON body, or the data of its SSE message events."""
        if self.content_type == "application/json":
            return [json.loads(self.body)]
        if self.content_type == "text/event-stream":
            return [
                json.loads(e["data"]) for e in self.events() if e.get("event", "message") == "message" and e["data"]
            ]
        return []


class _TeeStream(httpx2.AsyncByteStream):
    def __init__(self, inner: httpx2.AsyncByteStream, exchange: Exchange) -> None:
        self._inner = inner
        self._exchange = exchange

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._exchange.body.extend(chunk)
            yield chunk

    async def aclose(self) -> None:
        self._exchange.closed = True
        await self._inner.aclose()


class HttpRecorder(httpx2.AsyncBaseTransport):
    """An ``httpx2`` transport (no proxies) that records every exchange, in order."""

    def __init__(self) -> None:
        self._inner = httpx2.AsyncHTTPTransport(trust_env=False)
        self.exchanges: list[Exchange] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        exchange = Exchange(request.method, request.url, request.headers, request.content)
        self.exchanges.append(exchange)
        response = await self._inner.handle_async_request(request)
        exchange.status = response.status_code
        exchange.response_headers = response.headers
        response.stream = _TeeStream(response.stream, exchange)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()

    def client(self, **options: Any) -> httpx2.AsyncClient:
        options.setdefault("timeout", httpx2.Timeout(30.0, read=300.0))
        return httpx2.AsyncClient(transport=self, trust_env=False, **options)

    def with_method(self, method: str) -> list[Exchange]:
        return [e for e in self.exchanges if e.method == method]

    def posts_of(self, rpc_method: str) -> list[Exchange]:
        """The POSTs that carried a request or notification of ``rpc_method``."""
        return [e for e in self.with_method("POST") if isinstance(e.rpc, dict) and e.rpc.get("method") == rpc_method]

    def post_of(self, request: dict[str, Any]) -> Exchange:
        """The one POST that carried this JSON-RPC request."""
        (exchange,) = [e for e in self.with_method("POST") if e.rpc == request]
        return exchange

    def carrying(self, predicate: Callable[[dict[str, Any]], bool]) -> list[Exchange]:
        """The exchanges whose response carried a message matching ``predicate``."""
        return [e for e in self.exchanges if e.response_headers is not None and any(map(predicate, e.messages()))]


# ------------------------------------------------------------------------------------ connecting


class Tapped:
    """A ``mcp.client.Transport`` around another one, recording both object streams in ``wire``."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def __aenter__(self) -> tuple[TapRead, TapWrite]:
        read_stream, write_stream = await self._inner.__aenter__()
        return TapRead(read_stream, self._wire), TapWrite(write_stream, self._wire)

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        return await self._inner.__aexit__(*exc_info)


@dataclass
class Conn:
    kind: str
    server: ServerProcess
    client: Client
    wire: Wire
    http: HttpRecorder
    sse_session_ids: list[str]

    @property
    def session(self) -> Any:
        return self.client.session

    @property
    def legacy(self) -> bool:
        return self.kind in LEGACY_KINDS

    def session_id(self) -> str:
        """The legacy session's id: the Mcp-Session-Id minted at initialize, or the SSE endpoint's."""
        if self.kind == SSE:
            (session_id,) = self.sse_session_ids
            return session_id
        (init,) = self.http.posts_of("initialize")
        assert init.response_headers is not None
        return init.response_headers["mcp-session-id"]

    def carrier_of(self, message: dict[str, Any]) -> Exchange:
        """The one HTTP exchange whose response carried ``message`` (an inbound JSON-RPC message)."""
        (exchange,) = self.http.carrying(lambda m: m == message)
        return exchange

    async def wait_for_get_stream(self) -> Exchange:
        """Legacy Streamable HTTP: the SDK opens the GET stream after ``notifications/initialized``;
        wait (bounded) until the server has primed it, so publications from now on reach it."""
        with anyio.fail_after(QUICK):
            while True:
                gets = [e for e in self.http.with_method("GET") if e.status == 200 and b"retry:" in e.body]
                if gets:
                    (stream,) = gets
                    return stream
                await anyio.sleep(0.02)


@asynccontextmanager
async def connect(kind: str, server: ServerProcess, *, mode: str | None = None, **options: Any) -> AsyncIterator[Conn]:
    """Connect the SDK's ``mcp.Client`` by ``kind``, recorded on both levels; bounded by SESSION_TIMEOUT.

    The SDK's response cache is off (tests assert on the wire, where a cached answer would not be).
    """
    wire = Wire()
    recorder = HttpRecorder()
    session_ids: list[str] = []
    options.setdefault("cache", None)
    with anyio.fail_after(SESSION_TIMEOUT):
        async with AsyncExitStack() as stack:
            if kind == SSE:

                def factory(headers=None, timeout=None, auth=None):
                    return recorder.client(headers=headers, timeout=timeout, auth=auth)

                transport = sse_client(
                    server.sse_url,
                    timeout=QUICK,
                    sse_read_timeout=SESSION_TIMEOUT,
                    httpx_client_factory=factory,
                    on_session_created=session_ids.append,
                )
                mode = mode or "legacy"
            else:
                http = await stack.enter_async_context(recorder.client())
                transport = streamable_http_client(server.mcp_url, http_client=http)
                mode = mode or ("legacy" if kind == LEGACY_HTTP else MODERN)
            client = Client(Tapped(transport, wire), mode=mode, message_handler=wire.on_message, **options)
            async with client:
                yield Conn(kind, server, client, wire, recorder, session_ids)


@pytest.fixture(scope="module")
def http_server():
    with running_server("http") as server:
        yield server
        server.assert_healthy()  # nothing a test did crashed it
        server.assert_clean_log()


@pytest.fixture(scope="module")
def sse_server():
    with running_server("sse") as server:
        yield server
        server.assert_healthy()
        server.assert_clean_log()


@pytest.fixture(params=KINDS)
def kind(request) -> str:
    return request.param


@pytest.fixture
def server(kind, request) -> ServerProcess:
    return request.getfixturevalue("sse_server" if kind == SSE else "http_server")


# ------------------------------------------------------------------------------------ helpers


def dump(model: Any) -> Any:
    """A typed SDK value as it came off the wire (aliases, only the fields that were set)."""
    if isinstance(model, list):
        return [dump(item) for item in model]
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True)


def only_text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


def server_requests(wire: Wire) -> list[dict[str, Any]]:
    return [m for m in wire.inbound if "method" in m and "id" in m]


def expected_result(conn: Conn, result: dict[str, Any]) -> dict[str, Any]:
    """A result as the server must send it in the connection's era (2026-07-28 adds resultType and serverInfo)."""
    if conn.legacy:
        return result
    return {**result, "resultType": "complete", "_meta": {SERVER_INFO: CALL_SERVER_INFO}}


async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams):
    sampling.asked.append(params)
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"answer to {params.messages[0].content.text}"),
        model="test-model",
        stop_reason="endTurn",
    )


sampling.asked = []


async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
    elicitation.asked.append(params)
    fields = {"username": "ada", "email": "ada@example.com", "name": "Ada", "color": "green"}
    wanted = params.requested_schema["properties"]
    return types.ElicitResult(action="accept", content={key: fields[key] for key in wanted if key in fields})


elicitation.asked = []


@pytest.fixture(autouse=True)
def _fresh_callbacks():
    sampling.asked.clear()
    elicitation.asked.clear()


def assert_legacy_http_traffic(conn: Conn) -> None:
    """Streamable HTTP, legacy: initialize minted the session; every later request names it and the version."""
    first = conn.http.exchanges[0]
    assert (first.method, first.rpc["method"], first.status) == ("POST", "initialize", 200)
    assert "mcp-session-id" not in first.headers
    session_id = conn.session_id()
    assert session_id
    for exchange in conn.http.exchanges[1:]:
        assert exchange.headers["mcp-session-id"] == session_id, exchange
        assert exchange.headers["mcp-protocol-version"] == LEGACY, exchange
    (initialized,) = conn.http.posts_of("notifications/initialized")
    assert initialized.status == 202 and initialized.body == b""


def assert_modern_http_traffic(conn: Conn) -> None:
    """Streamable HTTP, 2026-07-28: POSTs only, each naming the version; no session anywhere."""
    assert conn.http.exchanges, "no HTTP traffic"
    for exchange in conn.http.exchanges:
        assert exchange.method == "POST", exchange
        assert exchange.headers["mcp-protocol-version"] == MODERN, exchange
        assert exchange.rpc["params"]["_meta"][PROTOCOL_VERSION] == MODERN, exchange
        assert "mcp-session-id" not in exchange.headers, exchange
        assert exchange.response_headers is not None and "mcp-session-id" not in exchange.response_headers
        assert exchange.status == 200, exchange


def assert_sse_traffic(conn: Conn) -> None:
    """HTTP+SSE: one GET /sse whose first event names the endpoint; every message POSTed there, 202."""
    stream = conn.http.exchanges[0]
    assert (stream.method, stream.url.path, stream.status, stream.content_type) == (
        "GET",
        "/sse",
        200,
        "text/event-stream",
    )
    first = stream.events()[0]
    assert first == {"event": "endpoint", "data": f"/messages?session_id={conn.session_id()}"}
    assert conn.http.with_method("GET") == [stream]
    posts = conn.http.with_method("POST")
    assert posts, "nothing was POSTed"
    for post in posts:
        assert (post.url.path, post.url.params["session_id"]) == ("/messages", conn.session_id()), post
        assert post.status == 202, post


def assert_traffic(conn: Conn) -> None:
    {LEGACY_HTTP: assert_legacy_http_traffic, MODERN_HTTP: assert_modern_http_traffic, SSE: assert_sse_traffic}[
        conn.kind
    ](conn)


# ------------------------------------------------------------------------------------ every transport


async def test_connect_negotiates_the_era_and_describes_the_server(kind, server):
    mode = "auto" if kind == MODERN_HTTP else None  # the modern client probes with server/discover
    async with connect(kind, server, mode=mode) as conn:
        client = conn.client
        assert client.protocol_version == (LEGACY if conn.legacy else MODERN)
        assert dump(client.server_info) == SERVER_INFO_VALUE
        # Tasks: the v1 capability in a 2025-11-25 initialize, the extension in server/discover.
        tasks = {"tasks": TASKS_V1} if conn.legacy else {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        assert dump(client.server_capabilities) == {**CAPABILITIES, **tasks}
        assert client.instructions == INSTRUCTIONS
        with anyio.fail_after(QUICK):
            assert only_text(await client.call_tool("test_simple_text", {})) == SIMPLE_TEXT

        if conn.legacy:
            assert conn.session.initialize_result is not None
            assert [m["method"] for m in conn.wire.outbound[:2]] == ["initialize", "notifications/initialized"]
            assert conn.wire.outbound[0]["params"]["protocolVersion"] == LEGACY
            (response,) = conn.wire.responses_to(conn.wire.outbound[0]["id"])
            assert response["result"]["protocolVersion"] == LEGACY
            assert response["result"]["serverInfo"] == SERVER_INFO_VALUE
        else:
            assert conn.session.initialize_result is None
            assert conn.wire.outbound_with("initialize") == []
            (probe,) = conn.wire.outbound_with("server/discover")
            (response,) = conn.wire.responses_to(probe["id"])
            assert response["result"]["supportedVersions"][0] == MODERN
            assert LEGACY in response["result"]["supportedVersions"]
            assert response["result"]["capabilities"] == {**CAPABILITIES, **tasks}
            assert response["result"]["_meta"] == {SERVER_INFO: SERVER_INFO_VALUE}
            # The probe is a plain POST answered with JSON.
            discover = conn.http.post_of(probe)
            assert (discover.status, discover.content_type) == (200, "application/json")
        assert_traffic(conn)


async def test_tools_list_and_call(kind, server):
    async with connect(kind, server) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.client.list_tools()
            result = await conn.client.call_tool("test_simple_text", {})
            failed = await conn.client.call_tool("test_error_handling", {})
        # Exactly these, each once (a trigger test may have moved test_dynamic_tool to the end).
        assert sorted(tool.name for tool in listed.tools) == sorted(TOOL_NAMES)
        assert listed.next_cursor is None
        assert all(tool.description and tool.input_schema["type"] == "object" for tool in listed.tools)

        assert dump(result.content) == [{"type": "text", "text": SIMPLE_TEXT}]
        assert result.is_error is False
        (call, _) = [m for m in conn.wire.outbound_with("tools/call")]
        assert call["params"]["name"] == "test_simple_text"
        (response,) = conn.wire.responses_to(call["id"])
        assert response["result"] == expected_result(conn, {"content": [{"type": "text", "text": SIMPLE_TEXT}]})

        assert failed.is_error is True
        assert only_text(failed) == ERROR_TEXT
        assert_traffic(conn)


async def test_progress_reaches_the_progress_callback(kind, server):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(kind, server) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert only_text(result) == PROGRESS_TEXT
        await conn.wire.wait_for(lambda: len(seen) >= 3)
        assert seen == PROGRESS

        (call,) = conn.wire.outbound_with("tools/call")
        token = call["params"]["_meta"]["progressToken"]
        notifications = conn.wire.inbound_with("notifications/progress")
        assert [m["params"] for m in notifications] == [
            {"progressToken": token, "progress": value, "total": 100, "message": message}
            for value, _, message in PROGRESS
        ]
        # On the stream of the call itself, before its response.
        (response,) = conn.wire.responses_to(call["id"])
        carrier = conn.carrier_of(response)
        assert all(conn.carrier_of(m) is carrier for m in notifications)
        on_carrier = carrier.messages()
        assert max(on_carrier.index(m) for m in notifications) < on_carrier.index(response)
        if conn.kind != SSE:
            assert carrier is conn.http.post_of(call)
            assert carrier.content_type == "text/event-stream"

        # Without a progress token, no progress.
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("test_tool_with_progress", {})) == PROGRESS_TEXT
        assert len(conn.wire.inbound_with("notifications/progress")) == 3
        assert_traffic(conn)


async def test_logging_reaches_the_logging_callback(kind, server):
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    # Legacy: logging/setLevel governs the session; 2026-07-28: the request's logLevel opts in.
    options = {} if kind in LEGACY_KINDS else {"log_level": "info"}
    async with connect(kind, server, logging_callback=on_log, **options) as conn:
        with anyio.fail_after(QUICK):
            if conn.legacy:
                await conn.client.set_logging_level("info")
            result = await conn.client.call_tool("test_tool_with_logging", {})
        assert only_text(result) == "Tool with logging executed successfully"
        await conn.wire.wait_for(lambda: len(received) >= 3)
        assert [(p.level, p.data) for p in received] == [("info", text) for text in LOG_MESSAGES]

        (call,) = conn.wire.outbound_with("tools/call")
        if not conn.legacy:
            assert call["params"]["_meta"][LOG_LEVEL] == "info"
        messages = conn.wire.inbound_with("notifications/message")
        assert [m["params"] for m in messages] == [{"level": "info", "data": text} for text in LOG_MESSAGES]
        (response,) = conn.wire.responses_to(call["id"])
        carrier = conn.carrier_of(response)
        assert all(conn.carrier_of(m) is carrier for m in messages)

        # Above the messages' level (legacy: setLevel warning; modern: no opt-in), nothing is sent.
        with anyio.fail_after(QUICK):
            if conn.legacy:
                await conn.client.set_logging_level("warning")
                await conn.client.call_tool("test_tool_with_logging", {})
            else:
                await conn.client.call_tool("test_tool_with_logging", {}, meta={LOG_LEVEL: "warning"})
        await anyio.sleep(QUIET)
        assert len(conn.wire.inbound_with("notifications/message")) == 3
        assert len(received) == 3
        assert_traffic(conn)


async def test_resources_read(kind, server):
    async with connect(kind, server) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.client.list_resources()
            text = await conn.client.read_resource("test://static-text")
            binary = await conn.client.read_resource("test://static-binary")
            template = await conn.client.read_resource("test://template/123/data")
        assert [r.uri for r in listed.resources] == [
            "test://static-text",
            "test://static-binary",
            WATCHED,
            "test://dynamic-resource",
        ]
        assert dump(text.contents) == [{"uri": "test://static-text", "mimeType": "text/plain", "text": STATIC_TEXT}]
        (blob,) = binary.contents
        assert isinstance(blob, types.BlobResourceContents)
        assert (blob.uri, blob.mime_type) == ("test://static-binary", "image/png")
        png = base64.b64decode(blob.blob, validate=True)
        assert png.startswith(PNG_SIGNATURE)
        assert png[12:16] == b"IHDR" and struct.unpack(">II", png[16:24]) == (1, 1)
        (declared,) = [r for r in listed.resources if r.uri == "test://static-binary"]
        assert declared.size == len(png)
        assert dump(template.contents) == [
            {
                "uri": "test://template/123/data",
                "mimeType": "application/json",
                "text": '{"id":"123","templateTest":true,"data":"Data for ID: 123"}',
            }
        ]
        assert_traffic(conn)


async def test_prompts_get(kind, server):
    async with connect(kind, server) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.client.list_prompts()
            simple = await conn.client.get_prompt("test_simple_prompt")
            with_args = await conn.client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
        assert [p.name for p in listed.prompts] == [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
            "test_dynamic_prompt",
        ]
        assert simple.description == "A simple prompt without arguments"
        assert dump(simple.messages) == [{"role": "user", "content": {"type": "text", "text": SIMPLE_PROMPT}}]
        (request,) = [m for m in conn.wire.outbound_with("prompts/get") if m["params"]["name"] == "test_simple_prompt"]
        (response,) = conn.wire.responses_to(request["id"])
        assert response["result"] == expected_result(
            conn,
            {
                "description": "A simple prompt without arguments",
                "messages": [{"role": "user", "content": {"type": "text", "text": SIMPLE_PROMPT}}],
            },
        )
        assert dump(with_args.messages) == [
            {
                "role": "user",
                "content": {"type": "text", "text": "Prompt with arguments: arg1='hello', arg2='world'"},
            }
        ]
        assert_traffic(conn)


SAMPLING_REQUEST = {
    "method": "sampling/createMessage",
    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 100},
}
SAMPLING_ANSWER = {
    "role": "assistant",
    "content": {"type": "text", "text": "answer to 2+2?"},
    "model": "test-model",
    "stopReason": "endTurn",
}


def assert_server_asked(conn: Conn, call: dict[str, Any], asked: dict[str, Any], answer: dict[str, Any]) -> None:
    """How the server got its input, per era.

    Legacy: one request of the server's, on the stream of the call it serves (Streamable HTTP: that
    POST's SSE response; HTTP+SSE: the one stream), answered by a POST of the client's (202).
    2026-07-28: never a server request; the call is answered ``input_required`` and retried with the
    answer and the sealed state.
    """
    if conn.legacy:
        (request,) = server_requests(conn.wire)
        assert {"method": request["method"], "params": request["params"]} == asked
        (reply,) = [m for m in conn.wire.outbound if "method" not in m and m.get("id") == request["id"]]
        assert reply["result"] == answer
        carrier = conn.carrier_of(request)
        (response,) = conn.wire.responses_to(call["id"])
        assert conn.carrier_of(response) is carrier
        if conn.kind == LEGACY_HTTP:
            assert carrier is conn.http.post_of(call)
            assert carrier.content_type == "text/event-stream"
        else:
            assert (carrier.method, carrier.url.path) == ("GET", "/sse")
        reply_post = conn.http.post_of(reply)
        assert reply_post.status == 202
        messages = carrier.messages()
        assert messages.index(request) < messages.index(response)
    else:
        assert server_requests(conn.wire) == []
        first, retry = [
            m for m in conn.wire.outbound_with("tools/call") if m["params"]["name"] == call["params"]["name"]
        ]
        assert first["id"] != retry["id"]
        (required,) = conn.wire.responses_to(first["id"])
        key = next(iter(required["result"]["inputRequests"]))
        assert required["result"]["resultType"] == "input_required"
        assert required["result"]["inputRequests"] == {key: asked}
        state = required["result"]["requestState"]
        assert isinstance(state, str) and state
        assert retry["params"]["inputResponses"] == {key: answer}
        assert retry["params"]["requestState"] == state
        assert retry["params"]["arguments"] == first["params"]["arguments"]


async def test_sampling_through_the_sdk_callback(kind, server):
    async with connect(kind, server, sampling_callback=sampling) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("test_sampling", {"prompt": "2+2?"})
        assert result.is_error is False
        assert only_text(result) == "LLM response: answer to 2+2?"
        (params,) = sampling.asked
        assert params.max_tokens == 100
        assert dump(params.messages) == [{"role": "user", "content": {"type": "text", "text": "2+2?"}}]
        (call, *_) = conn.wire.outbound_with("tools/call")
        if conn.legacy:
            (init,) = conn.wire.outbound_with("initialize")
            assert init["params"]["capabilities"]["sampling"] == {}
        else:
            assert call["params"]["_meta"][CLIENT_CAPABILITIES] == {"sampling": {}}
        assert_server_asked(conn, call, SAMPLING_REQUEST, SAMPLING_ANSWER)
        assert_traffic(conn)


async def test_elicitation_through_the_sdk_callback(kind, server):
    async with connect(kind, server, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("test_elicitation", {"message": "Who are you?"})
        assert result.is_error is False
        assert only_text(result) == 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
        (params,) = elicitation.asked
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.message == "Who are you?"
        schema = {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        }
        assert params.requested_schema == schema
        (call, *_) = conn.wire.outbound_with("tools/call")
        asked = conn.wire.inbound_with("elicitation/create") or [
            m["result"]["inputRequests"][key]
            for m in conn.wire.inbound
            if m.get("result", {}).get("resultType") == "input_required"
            for key in m["result"]["inputRequests"]
        ]
        (request,) = asked
        mode = request["params"].get("mode")
        assert mode in (None, "form")  # "form" is the default mode (2025-11-25); either spelling is the form
        assert_server_asked(
            conn,
            call,
            {
                "method": "elicitation/create",
                "params": {**({"mode": mode} if mode else {}), "message": "Who are you?", "requestedSchema": schema},
            },
            {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}},
        )
        assert_traffic(conn)


RECONNECTION_TEXT = (
    "Reconnection test completed successfully. If you received this, "
    "the client properly reconnected after stream closure."
)


async def test_reconnection_after_the_server_closes_the_stream(kind, server):
    """SEP-1699: over legacy Streamable HTTP the server ends the call's SSE stream after its priming event
    (an id and a retry interval); the SDK resumes with a GET carrying Last-Event-ID, and the result comes
    on that stream. Elsewhere there is no stream to close, and the call simply answers."""
    async with connect(kind, server) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("test_reconnection", {})
        assert only_text(result) == RECONNECTION_TEXT
        (call,) = conn.wire.outbound_with("tools/call")
        (response,) = conn.wire.responses_to(call["id"])
        assert response["result"] == expected_result(conn, {"content": [{"type": "text", "text": RECONNECTION_TEXT}]})
        if kind == LEGACY_HTTP:
            post = conn.http.post_of(call)
            assert (post.status, post.content_type) == (200, "text/event-stream")
            (priming,) = post.events()  # the stream ended after its priming event
            assert priming["data"] == "" and priming["id"] and int(priming["retry"]) > 0
            (resumed,) = [e for e in conn.http.with_method("GET") if e.headers.get("last-event-id") == priming["id"]]
            assert (resumed.status, resumed.content_type) == (200, "text/event-stream")
            assert conn.carrier_of(response) is resumed
        elif kind == MODERN_HTTP:
            assert conn.carrier_of(response) is conn.http.post_of(call)
            assert conn.http.with_method("GET") == []
        else:
            assert conn.carrier_of(response) is conn.http.exchanges[0]  # the one /sse stream
        assert_traffic(conn)


# ------------------------------------------------------------------------------------ subscriptions


@pytest.mark.parametrize("kind", LEGACY_KINDS)
async def test_legacy_subscribe_delivers_updates_on_the_session_stream(kind, server):
    """resources/subscribe, then an update: notifications/resources/updated arrives on the session's own
    stream (Streamable HTTP: the GET stream, not the POST of the tool that caused it; HTTP+SSE: the one
    stream). After resources/unsubscribe, nothing more."""
    async with connect(kind, server) as conn:
        stream = await conn.wait_for_get_stream() if kind == LEGACY_HTTP else conn.http.exchanges[0]
        with anyio.fail_after(QUICK):
            assert dump(await conn.client.subscribe_resource(WATCHED)) == {}
            trigger = only_text(await conn.client.call_tool("test_trigger_resource_update", {}))
        revision = int(UPDATED.fullmatch(trigger)[1])
        updated = await conn.wire.wait_for(lambda: conn.wire.inbound_with("notifications/resources/updated"))
        assert updated == [{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": WATCHED}}]
        assert conn.carrier_of(updated[0]) is stream
        notified = [m for m in conn.wire.surfaced if isinstance(m, types.ResourceUpdatedNotification)]
        assert [n.params.uri for n in notified] == [WATCHED]
        with anyio.fail_after(QUICK):
            read = await conn.client.read_resource(WATCHED)
        assert dump(read.contents) == [
            {"uri": WATCHED, "mimeType": "text/plain", "text": f"{WATCHED_TEXT} (revision {revision})"}
        ]

        # After resources/unsubscribe an update is not sent. A list change reaches an initialized session
        # on the same stream, unasked; the stream is ordered, so once the list changes are in, an update
        # published before them would be too.
        with anyio.fail_after(QUICK):
            assert dump(await conn.client.unsubscribe_resource(WATCHED)) == {}
            await conn.client.call_tool("test_trigger_resource_update", {})
            assert (
                only_text(await conn.client.call_tool("test_trigger_tool_change", {}))
                == "Removed tool test_dynamic_tool"
            )
            assert "test_dynamic_tool" not in [t.name for t in (await conn.client.list_tools()).tools]
            assert (
                only_text(await conn.client.call_tool("test_trigger_tool_change", {})) == "Added tool test_dynamic_tool"
            )
            assert sorted(t.name for t in (await conn.client.list_tools()).tools) == sorted(TOOL_NAMES)
        changed = await conn.wire.wait_for(
            lambda: len(found := conn.wire.inbound_with("notifications/tools/list_changed")) >= 2 and found
        )
        assert changed == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}] * 2
        assert conn.carrier_of(changed[0]) is stream
        assert conn.wire.inbound_with("notifications/resources/updated") == updated
        assert [m["method"] for m in stream.messages() if "method" in m] == [
            "notifications/resources/updated",
            "notifications/tools/list_changed",
            "notifications/tools/list_changed",
        ]
        assert_traffic(conn)


async def test_modern_listen_streams_changes_until_closed(http_server):
    async with connect(MODERN_HTTP, http_server) as conn:
        with anyio.fail_after(QUICK):
            async with conn.client.listen(resource_subscriptions=[WATCHED], tools_list_changed=True) as subscription:
                assert subscription.honored.resource_subscriptions == [WATCHED]
                assert subscription.honored.tools_list_changed is True
                sid = subscription.subscription_id
                trigger = only_text(await conn.client.call_tool("test_trigger_resource_update", {}))
                assert await subscription.__anext__() == ResourceUpdated(uri=WATCHED)
                await conn.client.call_tool("test_trigger_tool_change", {})
                assert await subscription.__anext__() == ToolsListChanged()
                await conn.client.call_tool("test_trigger_tool_change", {})  # put test_dynamic_tool back
                assert await subscription.__anext__() == ToolsListChanged()
                read = await conn.client.read_resource(WATCHED)
        revision = int(UPDATED.fullmatch(trigger)[1])
        assert dump(read.contents) == [
            {"uri": WATCHED, "mimeType": "text/plain", "text": f"{WATCHED_TEXT} (revision {revision})"}
        ]

        (listen,) = conn.wire.outbound_with("subscriptions/listen")
        assert listen["id"] == sid
        assert listen["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": [WATCHED]}
        carrier = conn.http.post_of(listen)
        assert carrier.content_type == "text/event-stream"
        tag = {"io.modelcontextprotocol/subscriptionId": sid}
        assert carrier.messages() == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {
                    "_meta": tag,
                    "notifications": {"toolsListChanged": True, "resourceSubscriptions": [WATCHED]},
                },
            },
            {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": WATCHED, "_meta": tag}},
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": tag}},
            {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": tag}},
        ]
        # Leaving listen() closes the stream: that is the cancellation in 2026-07-28 (no notification POSTed).
        with anyio.fail_after(QUICK):
            while not carrier.closed:
                await anyio.sleep(0.02)
        assert conn.http.posts_of("notifications/cancelled") == []
        assert_traffic(conn)


async def test_modern_multi_round_input(http_server):
    async with connect(MODERN_HTTP, http_server, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("test_input_required_result_multi_round", {})
        assert only_text(result) == "Multi-round complete for Ada who likes green"
        calls = conn.wire.outbound_with("tools/call")
        assert len(calls) == 3
        results = [conn.wire.responses_to(c["id"])[0]["result"] for c in calls]
        assert [r["resultType"] for r in results] == ["input_required", "input_required", "complete"]
        assert [list(r["inputRequests"]) for r in results[:2]] == [["step1"], ["step2"]]
        assert results[0]["requestState"] != results[1]["requestState"]
        assert [c["params"].get("requestState") for c in calls] == [
            None,
            results[0]["requestState"],
            results[1]["requestState"],
        ]
        assert server_requests(conn.wire) == []
        assert_traffic(conn)


# ------------------------------------------------------------------------------------ session lifecycle


async def test_legacy_session_ends_with_delete_then_404(http_server):
    async with connect(LEGACY_HTTP, http_server) as conn:
        await conn.wait_for_get_stream()
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("test_simple_text", {})) == SIMPLE_TEXT
        session_id = conn.session_id()
        assert conn.http.with_method("DELETE") == []
    # Closing the SDK client ended the session with DELETE.
    (delete,) = conn.http.with_method("DELETE")
    assert delete is conn.http.exchanges[-1]
    assert delete.headers["mcp-session-id"] == session_id
    assert delete.headers["mcp-protocol-version"] == LEGACY
    assert delete.status in (200, 204)  # the spec names no status for a successful DELETE; 2xx is success

    # From now on, the session id is unknown: 404 for every method (spec: start over with initialize).
    headers = {
        "mcp-session-id": session_id,
        "mcp-protocol-version": LEGACY,
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
    }
    request = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
    with httpx.Client(timeout=QUICK, trust_env=False) as http:
        assert http.post(http_server.mcp_url, json=request, headers=headers).status_code == 404
        assert http.get(http_server.mcp_url, headers={**headers, "accept": "text/event-stream"}).status_code == 404
        assert http.delete(http_server.mcp_url, headers=headers).status_code == 404
        # A new initialize still opens a new session (the server is fine).
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
        }
        fresh = http.post(
            http_server.mcp_url, json=init, headers={k: v for k, v in headers.items() if k != "mcp-session-id"}
        )
        assert fresh.status_code == 200 and fresh.headers["mcp-session-id"] not in ("", session_id)
        assert http.delete(
            http_server.mcp_url, headers={**headers, "mcp-session-id": fresh.headers["mcp-session-id"]}
        ).status_code in (200, 204)


async def test_sse_session_ends_with_its_stream(sse_server):
    async with connect(SSE, sse_server) as conn:
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("test_simple_text", {})) == SIMPLE_TEXT
        session_id = conn.session_id()
        url = sse_server.url(f"/messages?session_id={session_id}")
        ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
        async with httpx.AsyncClient(timeout=QUICK, trust_env=False) as http:
            # While the stream is open the endpoint accepts messages (the answer goes to the stream).
            assert (await http.post(url, json=ping)).status_code == 202
            assert (await http.post(sse_server.url("/messages?session_id=unknown"), json=ping)).status_code == 404
        await conn.wire.wait_for(lambda: conn.wire.responses_to(99))
    # The SDK closed the stream: the session is gone, its endpoint answers 404 (once the server noticed).
    async with httpx.AsyncClient(timeout=QUICK, trust_env=False) as http:
        with anyio.fail_after(QUICK):
            while (status := (await http.post(url, json=ping)).status_code) == 202:
                await anyio.sleep(0.05)
        assert status == 404


async def test_modern_has_no_session_to_end(http_server):
    async with connect(MODERN_HTTP, http_server) as conn:
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("test_simple_text", {})) == SIMPLE_TEXT
    assert conn.http.with_method("DELETE") == [] and conn.http.with_method("GET") == []
    assert_modern_http_traffic(conn)
    # No GET stream and no sessions in 2026-07-28: GET and DELETE are not allowed.
    headers = {"mcp-protocol-version": MODERN, "accept": "text/event-stream"}
    with httpx.Client(timeout=QUICK, trust_env=False) as http:
        assert http.get(http_server.mcp_url, headers=headers).status_code == 405
        assert http.delete(http_server.mcp_url, headers=headers).status_code == 405


# ------------------------------------------------------------------------------------ plain URLs


@pytest.mark.parametrize("mode", ["legacy", MODERN, "auto"])
async def test_client_with_a_plain_url(http_server, mode):
    """``mcp.Client("http://.../mcp", mode=...)``: the SDK's own Streamable HTTP set-up, untouched."""
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(http_server.mcp_url, mode=mode, cache=None) as client:
            assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
            with anyio.fail_after(QUICK):
                assert only_text(await client.call_tool("test_simple_text", {})) == SIMPLE_TEXT
                read = await client.read_resource("test://static-text")
                prompt = await client.get_prompt("test_simple_prompt")
            assert dump(read.contents) == [{"uri": "test://static-text", "mimeType": "text/plain", "text": STATIC_TEXT}]
            assert dump(prompt.messages) == [{"role": "user", "content": {"type": "text", "text": SIMPLE_PROMPT}}]


async def test_sse_endpoints_of_the_http_transport_too(http_server):
    """``--transport http`` serves the HTTP+SSE endpoints as well, for old clients."""
    async with connect(SSE, http_server, sampling_callback=sampling) as conn:
        assert conn.client.protocol_version == LEGACY
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("test_simple_text", {})) == SIMPLE_TEXT
            assert (
                only_text(await conn.client.call_tool("test_sampling", {"prompt": "2+2?"}))
                == "LLM response: answer to 2+2?"
            )
        (call,) = [m for m in conn.wire.outbound_with("tools/call") if m["params"]["name"] == "test_sampling"]
        assert_server_asked(conn, call, SAMPLING_REQUEST, SAMPLING_ANSWER)
        assert_sse_traffic(conn)


def test_sse_transport_serves_no_streamable_endpoint(sse_server):
    with httpx.Client(timeout=QUICK, trust_env=False) as http:
        response = http.post(
            sse_server.url("/mcp"),
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"accept": "application/json, text/event-stream"},
        )
    assert response.status_code == 404
