"""The official MCP Python SDK (``mcp`` 2.3.0) as the client in the 2026-07-28 ("modern") era, over
stdio, against the plainmcp feature server.

The SDK drives everything through its own API -- ``mcp.Client`` pinned to ``mode="2026-07-28"`` or
probing with ``mode="auto"``, ``ClientSession.discover()``, ``Client.listen()``, the input_required
driver with its sampling / elicitation / roots callbacks, ``log_level`` -- and every exchange is also
checked on the recorded JSON-RPC traffic (``sdk_modern.Wire``), so a silent fallback to the legacy
era, a missing ``resultType`` or an unrequested notification cannot pass unnoticed. The SDK's result
models are strict (pydantic, per protocol revision): every typed result the SDK hands back is an
interoperability check in its own right, and ``test_every_modern_message_fits_the_sdk_schema``
validates each recorded message against the SDK's 2026-07-28 surface explicitly.

Expectations come from the 2026-07-28 specification and the fixture's declarations, not from the
server's code.
"""

from __future__ import annotations

import base64
import json
import logging
import tempfile
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import MCPError
from mcp.client.session import ClientRequestContext, ClientSession
from mcp.client.subscriptions import ResourceUpdated, ToolsListChanged
from mcp_types import methods as wire_methods
from pydantic import BaseModel

from .sdk_modern import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    MODERN,
    PROTOCOL_VERSION,
    SERVER_INFO,
    SUBSCRIPTION_ID,
    Connected,
    TappedStdio,
    Wire,
    connect,
)

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.interop,
    # The SDK marks the legacy-only methods (ping, setLevel, subscribe, roots) deprecated as of 2026-07-28.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

#: Bound for a single exchange that should be instant.
QUICK = 5.0

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082"
)
PNG_B64 = base64.b64encode(PNG_1X1).decode("ascii")

TOOL_NAMES = {
    "echo",
    "add",
    "broken_output",
    "fail",
    "crash",
    "sleep",
    "progress",
    "log",
    "mixed",
    "ask_model",
    "ask_user",
    "roots",
    "touch",
    "add_tool",
}

SERVER_INFO_VALUE = {
    "name": "feature-server",
    "version": "1.2.3",
    "title": "Feature server",
    "description": "One of everything",
    "websiteUrl": "https://example.invalid/feature-server",
}
CALL_SERVER_INFO = {"name": "feature-server", "version": "1.2.3"}  # what a result other than discover carries
SUPPORTED_VERSIONS = ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
CAPABILITIES = {
    "logging": {},
    "completions": {},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
}
#: The envelope the SDK stamps when it has no callbacks: version, its default clientInfo, no capabilities.
BARE_ENVELOPE = {
    PROTOCOL_VERSION: MODERN,
    CLIENT_INFO: {"name": "mcp", "version": "0.1.0"},
    CLIENT_CAPABILITIES: {},
}
LIST_METHODS = {"tools/list", "prompts/list", "resources/list", "resources/templates/list"}


def dump(model: BaseModel | list) -> Any:
    """A typed SDK value as it came off the wire (aliases; no defaults the SDK filled in, no None)."""
    if isinstance(model, list):
        return [dump(item) for item in model]
    return model.model_dump(by_alias=True, mode="json", exclude_none=True, exclude_unset=True)


def only_text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


def server_requests(wire: Wire) -> list[dict[str, Any]]:
    """Requests the server wrote (a modern server must never write one)."""
    return [m for m in wire.inbound if "method" in m and "id" in m]


def assert_complete(response: dict[str, Any], *, cacheable: bool = False, ttl_ms: int | None = None) -> dict:
    """A modern success response: resultType complete, serverInfo in _meta, cache hints iff cacheable."""
    assert "error" not in response, response
    result = response["result"]
    assert result["resultType"] == "complete", result
    # server/discover names the whole server; every other result its name and version only.
    assert result["_meta"][SERVER_INFO] == (SERVER_INFO_VALUE if "supportedVersions" in result else CALL_SERVER_INFO)
    if cacheable:
        assert result["cacheScope"] == "private"
        assert result["ttlMs"] == ttl_ms
    else:
        assert "ttlMs" not in result and "cacheScope" not in result, result
    return result


def assert_modern_request(request: dict[str, Any], **envelope: Any) -> None:
    """The SDK stamped the 2026-07-28 envelope on the request (and never the legacy handshake)."""
    meta = request["params"]["_meta"]
    expected = {**BARE_ENVELOPE, **envelope}
    for key, value in expected.items():
        assert meta[key] == value, (key, meta)


def assert_modern_era(conn: Connected) -> None:
    """The connection really is 2026-07-28: negotiated so, every request enveloped, no initialize."""
    assert conn.client.protocol_version == MODERN
    assert conn.session.initialize_result is None
    assert conn.wire.outbound_with("initialize") == []
    assert conn.wire.outbound_with("notifications/initialized") == []
    for request in conn.wire.requests():
        assert request["params"]["_meta"][PROTOCOL_VERSION] == MODERN, request


# ------------------------------------------------------------------------------- era selection


async def test_pinned_mode_speaks_modern_without_a_probe(feature_server_command):
    """``mode="2026-07-28"``: no discover, no initialize; every request carries the envelope."""
    async with connect(feature_server_command, mode=MODERN) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.client.list_tools()
        assert {tool.name for tool in listed.tools} == TOOL_NAMES
        assert listed.result_type == "complete"
        assert (listed.ttl_ms, listed.cache_scope) == (60000, "private")
        assert listed.meta == {SERVER_INFO: CALL_SERVER_INFO}

        assert_modern_era(conn)
        assert conn.wire.outbound_with("server/discover") == []
        (request,) = conn.wire.requests()
        assert request["method"] == "tools/list"
        assert request["params"] == {"_meta": BARE_ENVELOPE}
        assert_complete(conn.wire.response_to(request), cacheable=True, ttl_ms=60000)


async def test_auto_mode_settles_on_modern_after_one_discover(feature_server_command):
    """``mode="auto"`` probes ``server/discover``; a legacy fallback would show as initialize on the wire."""
    async with connect(feature_server_command, mode="auto") as conn:
        assert_modern_era(conn)
        assert conn.session.discover_result is not None
        (probe,) = conn.wire.requests()
        assert probe["method"] == "server/discover"
        assert probe["params"] == {"_meta": BARE_ENVELOPE}
        assert_complete(conn.wire.response_to(probe), cacheable=True, ttl_ms=60000)

        # What the SDK learned from the probe is what the server said.
        assert conn.client.server_info is not None
        assert dump(conn.client.server_info) == SERVER_INFO_VALUE
        assert conn.client.instructions == "Use echo to test."
        assert dump(conn.client.server_capabilities) == CAPABILITIES

        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("echo", {"text": "after auto"})
        assert only_text(result) == "after auto"
        assert_modern_era(conn)
        assert len(conn.wire.outbound_with("server/discover")) == 1


async def test_discover_through_the_low_level_session(feature_server_command):
    """``ClientSession.discover()`` sends one probe and adopts the DiscoverResult it parses."""
    wire = Wire()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stderr, anyio.fail_after(30):
        async with TappedStdio(feature_server_command, wire, stderr) as (read, write):
            async with ClientSession(read, write) as session:
                with anyio.fail_after(QUICK):
                    result = await session.discover()
                assert session.protocol_version == MODERN
                assert result.result_type == "complete"
                assert result.supported_versions == SUPPORTED_VERSIONS
                assert dump(result.capabilities) == CAPABILITIES
                assert result.instructions == "Use echo to test."
                assert (result.ttl_ms, result.cache_scope) == (60000, "private")
                assert result.meta == {SERVER_INFO: SERVER_INFO_VALUE}
                assert session.server_info is not None and dump(session.server_info) == SERVER_INFO_VALUE

                (request,) = wire.requests()
                assert request["method"] == "server/discover"
                response = wire.response_to(request)
                # Exactly the spec's DiscoverResult fields: no body-level serverInfo/protocolVersion.
                assert response["result"] == {
                    "resultType": "complete",
                    "supportedVersions": SUPPORTED_VERSIONS,
                    "capabilities": CAPABILITIES,
                    "instructions": "Use echo to test.",
                    "ttlMs": 60000,
                    "cacheScope": "private",
                    "_meta": {SERVER_INFO: SERVER_INFO_VALUE},
                }

                # After adopting, the session stamps the modern envelope on what follows.
                with anyio.fail_after(QUICK):
                    listed = await session.list_prompts()
                assert [prompt.name for prompt in listed.prompts] == ["write", "simple"]
                assert_modern_request(wire.outbound_with("prompts/list")[0])


async def test_unsupported_version_names_the_supported_ones(feature_server_command):
    """A probe at a version the server lacks: -32022 with data {supported, requested} (the SDK's
    ``send_discover`` stamps the version it is given)."""
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.send_discover("2099-01-01")
        assert caught.value.error.code == -32022
        assert caught.value.error.data == {"supported": SUPPORTED_VERSIONS, "requested": "2099-01-01"}
        # and the SDK parses it as the spec's UnsupportedProtocolVersionError data
        data = types.UnsupportedProtocolVersionErrorData.model_validate(caught.value.error.data)
        assert MODERN in data.supported


@pytest.mark.parametrize(
    ("method", "call"),
    [
        ("ping", lambda s: s.send_ping()),
        ("logging/setLevel", lambda s: s.set_logging_level("info")),
        ("resources/subscribe", lambda s: s.subscribe_resource("test://static")),
        ("resources/unsubscribe", lambda s: s.unsubscribe_resource("test://static")),
        (
            "initialize",
            lambda s: s.send_request(
                types.InitializeRequest(
                    params=types.InitializeRequestParams(
                        protocol_version="2025-11-25",
                        capabilities=types.ClientCapabilities(),
                        client_info=types.Implementation(name="x", version="1"),
                    )
                ),
                types.InitializeResult,
            ),
        ),
    ],
)
async def test_removed_methods_are_method_not_found(feature_server_command, method, call):
    """On a modern session the SDK stamps the envelope on these too; 2026-07-28 removed them: -32601."""
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await call(conn.session)
        assert caught.value.error.code == -32601
        (request,) = conn.wire.outbound_with(method)
        assert_modern_request(request)
        assert conn.wire.response_to(request)["error"]["code"] == -32601
        # and the connection carries on, still modern (the SDK's "initialize" above was enveloped too)
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("echo", {"text": "still"})) == "still"
        assert conn.client.protocol_version == MODERN
        for sent in conn.wire.requests():
            assert_modern_request(sent)


# ---------------------------------------------------------------------------------------- tools


async def test_tools_list_names_schemas_and_cache_hints(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.client.list_tools()
            again = await conn.client.list_tools()
        assert listed.next_cursor is None
        names = [tool.name for tool in listed.tools]
        assert sorted(names) == sorted(TOOL_NAMES) and len(names) == len(set(names))
        # Deterministic order (2026-07-28: tools SHOULD be listed in a stable order).
        assert [tool.name for tool in again.tools] == names
        tools = {tool.name: tool for tool in listed.tools}
        assert dump(tools["echo"]) == {
            "name": "echo",
            "description": "Return the text unchanged.",
            "inputSchema": {
                "type": "object",
                "properties": {"text": {"type": "string", "minLength": 1}},
                "required": ["text"],
                "additionalProperties": False,
            },
            "annotations": {"readOnlyHint": True},
        }
        assert dump(tools["add"]) == {
            "name": "add",
            "title": "Add two numbers",
            "description": "Add a and b.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
            "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]},
        }
        assert tools["fail"].input_schema == {"type": "object", "additionalProperties": False}
        for request in conn.wire.outbound_with("tools/list"):
            result = assert_complete(conn.wire.response_to(request), cacheable=True, ttl_ms=60000)
            assert set(result) == {"tools", "resultType", "ttlMs", "cacheScope", "_meta"}


async def test_tools_list_pagination_keeps_the_cache_hints_on_every_page(feature_server_command):
    async with connect([*feature_server_command, "3"]) as conn:
        pages: list[list[str]] = []
        cursor = None
        with anyio.fail_after(QUICK):
            while True:
                page = await conn.client.list_tools(cursor=cursor)
                pages.append([tool.name for tool in page.tools])
                assert (page.ttl_ms, page.cache_scope) == (60000, "private")
                cursor = page.next_cursor
                if cursor is None:
                    break
                assert len(pages) < 10, pages
        assert [len(page) for page in pages] == [3, 3, 3, 3, 2]
        assert sorted(name for page in pages for name in page) == sorted(TOOL_NAMES)
        requests = conn.wire.outbound_with("tools/list")
        assert "cursor" not in requests[0]["params"]
        assert all(isinstance(r["params"]["cursor"], str) for r in requests[1:])
        for request in requests:
            assert_complete(conn.wire.response_to(request), cacheable=True, ttl_ms=60000)

        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.list_tools(cursor="not-a-cursor")
        assert caught.value.error.code == -32602


async def test_call_echo_and_structured_add(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            echoed = await conn.client.call_tool("echo", {"text": "hello, world ü"})
            added = await conn.client.call_tool("add", {"a": 1, "b": 2})
            halves = await conn.client.call_tool("add", {"a": 0.5, "b": -2})
        assert echoed.result_type == "complete"
        assert echoed.is_error is False
        assert echoed.structured_content is None
        assert dump(echoed.content) == [{"type": "text", "text": "hello, world ü"}]
        assert echoed.meta == {SERVER_INFO: CALL_SERVER_INFO}

        assert added.is_error is False
        assert added.structured_content == {"sum": 3}
        assert json.loads(only_text(added)) == {"sum": 3}  # the SHOULD: structured content mirrored as text
        assert halves.structured_content == {"sum": -1.5}

        calls = conn.wire.outbound_with("tools/call")
        assert [c["params"]["name"] for c in calls] == ["echo", "add", "add"]
        assert calls[0]["params"] == {"name": "echo", "arguments": {"text": "hello, world ü"}, "_meta": BARE_ENVELOPE}
        assert conn.wire.response_to(calls[0])["result"] == {
            "content": [{"type": "text", "text": "hello, world ü"}],
            "resultType": "complete",
            "_meta": {SERVER_INFO: CALL_SERVER_INFO},
        }
        add_result = assert_complete(conn.wire.response_to(calls[1]))
        assert add_result["structuredContent"] == {"sum": 3}
        assert "isError" not in add_result or add_result["isError"] is False


async def test_mixed_content_blocks(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("mixed", {})
        assert [type(block) for block in result.content] == [
            types.TextContent,
            types.ImageContent,
            types.AudioContent,
            types.ResourceLink,
            types.EmbeddedResource,
        ]
        assert dump(result.content) == [
            {"type": "text", "text": "hello"},
            {"type": "image", "data": PNG_B64, "mimeType": "image/png"},
            {"type": "audio", "data": base64.b64encode(b"RIFF").decode("ascii"), "mimeType": "audio/wav"},
            {"type": "resource_link", "uri": "test://static", "name": "static", "mimeType": "text/plain"},
            {"type": "resource", "resource": {"uri": "test://embedded", "text": "inside", "mimeType": "text/plain"}},
        ]


async def test_tool_errors_are_is_error_results(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            failed = await conn.client.call_tool("fail", {})
            invalid = await conn.client.call_tool("echo", {})
        assert failed.is_error is True
        assert failed.result_type == "complete"
        assert dump(failed.content) == [{"type": "text", "text": "The widget is out of stock; try another widget."}]
        assert invalid.is_error is True
        message = only_text(invalid)
        assert "echo" in message and "text" in message
        for request in conn.wire.outbound_with("tools/call"):
            result = assert_complete(conn.wire.response_to(request))
            assert result["isError"] is True


async def test_unknown_tool_is_invalid_params(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.call_tool("no_such_tool", {})
        assert caught.value.error.code == -32602
        assert "no_such_tool" in caught.value.error.message
        (request,) = conn.wire.outbound_with("tools/call")
        assert "result" not in conn.wire.response_to(request)


@pytest.mark.parametrize("tool", ["crash", "broken_output"])
async def test_bugs_are_a_generic_internal_error(feature_server_command, tool):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.call_tool(tool, {})
        assert caught.value.error.code == -32603
        assert caught.value.error.message == "Internal error"
        everything = json.dumps(conn.wire.inbound)
        assert "secret" not in everything and "id_rsa" not in everything and "RuntimeError" not in everything
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("echo", {"text": "alive"})) == "alive"


async def test_concurrent_calls_are_correlated(feature_server_command):
    results: dict[int, str] = {}
    async with connect(feature_server_command) as conn:

        async def call(n: int) -> None:
            results[n] = only_text(await conn.client.call_tool("echo", {"text": f"message {n}"}))

        with anyio.fail_after(QUICK):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(conn.client.call_tool, "sleep", {"seconds": 0.5})
                for n in range(20):
                    task_group.start_soon(call, n)
    assert results == {n: f"message {n}" for n in range(20)}


# ------------------------------------------------------------------------------------ resources


async def test_resources_list_and_templates_list(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            resources = await conn.client.list_resources()
            templates = await conn.client.list_resource_templates()
        assert {str(r.uri): dump(r) for r in resources.resources} == {
            "test://static": {
                "uri": "test://static",
                "name": "static",
                "description": "A static text",
                "mimeType": "text/plain",
            },
            "test://binary": {"uri": "test://binary", "name": "binary", "mimeType": "image/png"},
        }
        assert dump(templates.resource_templates) == [
            {
                "uriTemplate": "test://items/{id}",
                "name": "item",
                "description": "An item by id.",
                "mimeType": "application/json",
            }
        ]
        for method in ("resources/list", "resources/templates/list"):
            request, response = conn.wire.last_exchange(method)
            assert_complete(response, cacheable=True, ttl_ms=60000)


async def test_read_text_blob_and_template_resources(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            text = await conn.client.read_resource("test://static")
            blob = await conn.client.read_resource("test://binary")
            item = await conn.client.read_resource("test://items/apple")
        assert dump(text.contents) == [{"uri": "test://static", "mimeType": "text/plain", "text": "static text"}]
        assert isinstance(text.contents[0], types.TextResourceContents)
        (contents,) = blob.contents
        assert isinstance(contents, types.BlobResourceContents)
        assert dump(contents) == {"uri": "test://binary", "mimeType": "image/png", "blob": PNG_B64}
        assert base64.b64decode(contents.blob) == PNG_1X1
        assert dump(item.contents) == [
            {"uri": "test://items/apple", "mimeType": "application/json", "text": '{"id": "apple"}'}
        ]
        for result in (text, blob, item):
            assert (result.result_type, result.ttl_ms, result.cache_scope) == ("complete", 0, "private")
        for request in conn.wire.outbound_with("resources/read"):
            assert_complete(conn.wire.response_to(request), cacheable=True, ttl_ms=0)


@pytest.mark.parametrize("uri", ["test://nowhere", "test://items/missing"])
async def test_unknown_resource_is_invalid_params_naming_the_uri(feature_server_command, uri):
    """2026-07-28: resource not found MUST be -32602 (not -32002), data.uri SHOULD name it."""
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.read_resource(uri)
        assert caught.value.error.code == -32602
        assert caught.value.error.data == {"uri": uri}
        (request,) = conn.wire.outbound_with("resources/read")
        response = conn.wire.response_to(request)
        assert "result" not in response
        assert response["error"]["code"] == -32602


# -------------------------------------------------------------------------------------- prompts


async def test_prompts_list_and_get(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.client.list_prompts()
            written = await conn.client.get_prompt("write", {"topic": "rust", "tone": "cheerful"})
            neutral = await conn.client.get_prompt("write", {"topic": "python"})
            simple = await conn.client.get_prompt("simple")
        assert dump(listed.prompts) == [
            {
                "name": "write",
                "description": "Write about a topic.",
                "arguments": [
                    {"name": "topic", "description": "What to write about", "required": True},
                    {"name": "tone", "description": "How to sound"},
                ],
            },
            {"name": "simple", "description": "A prompt without arguments."},
        ]
        assert (listed.ttl_ms, listed.cache_scope) == (60000, "private")
        assert written.description == "Write about a topic."
        assert dump(written.messages) == [
            {"role": "user", "content": {"type": "text", "text": "Write about rust in a cheerful tone."}},
            {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
        ]
        assert dump(neutral.messages)[0]["content"]["text"] == "Write about python in a neutral tone."
        assert dump(simple.messages) == [{"role": "user", "content": {"type": "text", "text": "Say hello."}}]
        request, response = conn.wire.last_exchange("prompts/list")
        assert_complete(response, cacheable=True, ttl_ms=60000)
        for request in conn.wire.outbound_with("prompts/get"):
            assert_complete(conn.wire.response_to(request))


@pytest.mark.parametrize(("name", "arguments"), [("write", {"tone": "dry"}), ("no_such_prompt", None)])
async def test_prompt_errors_are_invalid_params(feature_server_command, name, arguments):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.get_prompt(name, arguments)
        assert caught.value.error.code == -32602
        assert ("topic" if name == "write" else name) in caught.value.error.message


# ----------------------------------------------------------------------------------- completion


async def test_completion_of_prompt_argument_and_template_variable(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            topic = await conn.client.complete(
                types.PromptReference(type="ref/prompt", name="write"), {"name": "topic", "value": "py"}
            )
            item = await conn.client.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://items/{id}"),
                {"name": "id", "value": "ap"},
            )
            nothing = await conn.client.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://items/{id}"),
                {"name": "id", "value": "zz"},
            )
        assert topic.completion.values == ["python", "pytest"]
        assert item.completion.values == ["apple", "apricot"]
        assert nothing.completion.values == []
        for result in (topic, item, nothing):
            assert result.result_type == "complete"
            assert result.completion.has_more in (None, False)
        for request in conn.wire.outbound_with("completion/complete"):
            assert_complete(conn.wire.response_to(request))


# --------------------------------------------------------------- input_required (multi round trip)


def _sampling_answer(text: str):
    async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams):
        sampling.asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=text),
            model="test-model",
            stop_reason="endTurn",
        )

    sampling.asked = []
    return sampling


def _assert_two_rounds(wire: Wire, tool: str, arguments: dict, key: str, input_request: dict, input_response: dict):
    """On the wire: call → input_required{key: request} + sealed state → retry (new id, same call,
    inputResponses{key}, the state byte-exact) → complete. The server wrote no request of its own."""
    first, retry = (c for c in wire.outbound_with("tools/call") if c["params"]["name"] == tool)
    assert first["id"] != retry["id"]
    assert "inputResponses" not in first["params"] and "requestState" not in first["params"]
    required = wire.response_to(first)["result"]
    assert required["resultType"] == "input_required"
    assert required["inputRequests"] == {key: input_request}
    assert isinstance(required["requestState"], str) and required["requestState"]
    assert "ttlMs" not in required and "cacheScope" not in required  # input_required carries no cache hints
    assert retry["params"]["name"] == tool
    assert retry["params"]["arguments"] == arguments
    assert retry["params"]["inputResponses"] == {key: input_response}
    assert retry["params"]["requestState"] == required["requestState"]
    assert_complete(wire.response_to(retry))
    assert server_requests(wire) == []


async def test_sampling_through_input_required(feature_server_command):
    sampling = _sampling_answer("42")
    async with connect(feature_server_command, sampling_callback=sampling) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("ask_model", {"prompt": "What is six times seven?"})
        assert result.is_error is False
        assert result.result_type == "complete"
        assert only_text(result) == "model said: 42"
        (params,) = sampling.asked
        assert params.max_tokens == 50
        assert dump(params.messages) == [
            {"role": "user", "content": {"type": "text", "text": "What is six times seven?"}}
        ]
        assert_modern_request(conn.wire.outbound_with("tools/call")[0], **{CLIENT_CAPABILITIES: {"sampling": {}}})
        _assert_two_rounds(
            conn.wire,
            "ask_model",
            {"prompt": "What is six times seven?"},
            "sampling-1",
            {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text", "text": "What is six times seven?"}}],
                    "maxTokens": 50,
                },
            },
            {
                "role": "assistant",
                "content": {"type": "text", "text": "42"},
                "model": "test-model",
                "stopReason": "endTurn",
            },
        )


async def test_elicitation_through_input_required(feature_server_command):
    asked: list[types.ElicitRequestParams] = []

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with connect(feature_server_command, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("ask_user", {})
        assert only_text(result) == "accept: {'name': 'Ada'}"
        (params,) = asked
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.message == "Your name?"
        schema = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        assert params.requested_schema == schema
        _assert_two_rounds(
            conn.wire,
            "ask_user",
            {},
            "elicitation-1",
            {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": "Your name?", "requestedSchema": schema},
            },
            {"action": "accept", "content": {"name": "Ada"}},
        )


async def test_elicitation_decline_through_input_required(feature_server_command):
    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
        return types.ElicitResult(action="decline")

    async with connect(feature_server_command, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("ask_user", {})
        assert only_text(result) == "decline: None"


async def test_roots_through_input_required(feature_server_command):
    async def list_roots(context: ClientRequestContext):
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/a")])

    async with connect(feature_server_command, list_roots_callback=list_roots) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("roots", {})
        assert result.is_error is False
        assert only_text(result) == "file:///tmp/a"
        _assert_two_rounds(
            conn.wire,
            "roots",
            {},
            "roots-1",
            {"method": "roots/list", "params": {}},
            {"roots": [{"uri": "file:///tmp/a"}]},
        )


@pytest.mark.parametrize(
    ("tool", "arguments", "capability", "callbacks"),
    [
        ("ask_model", {"prompt": "hi"}, "sampling", {}),
        # Another capability declared is not enough: the one the tool needs is missing.
        ("ask_user", {}, "elicitation", {"sampling_callback": _sampling_answer("x")}),
        ("roots", {}, "roots", {}),
    ],
)
async def test_missing_client_capability_is_32021(feature_server_command, tool, arguments, capability, callbacks):
    """Without the callback the SDK declares no capability; the server MUST answer -32021 with
    data.requiredCapabilities as a ClientCapabilities object -- and never ask for the input."""
    async with connect(feature_server_command, **callbacks) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.call_tool(tool, arguments)
        assert caught.value.error.code == -32021
        assert caught.value.error.data == {"requiredCapabilities": {capability: {}}}
        (request,) = conn.wire.outbound_with("tools/call")
        assert capability not in request["params"]["_meta"][CLIENT_CAPABILITIES]
        response = conn.wire.response_to(request)
        assert "result" not in response
        assert server_requests(conn.wire) == []


async def test_input_required_state_is_sealed_and_bound(feature_server_command):
    """Driving the rounds by hand (``allow_input_required=True``): a tampered requestState, or one
    replayed on another call, is rejected; an answer under an unknown key is re-asked; extra keys are
    ignored."""
    sampling = _sampling_answer("42")
    elicitation_answer = types.ElicitResult(action="accept", content={"name": "Ada"})
    async with connect(feature_server_command, sampling_callback=sampling) as conn:
        session = conn.session
        with anyio.fail_after(QUICK):
            first = await session.call_tool("ask_model", {"prompt": "A"}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests or {}) == ["sampling-1"]
        state = first.request_state
        assert isinstance(state, str)
        answer = types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="42"), model="m", stop_reason="endTurn"
        )

        flipped = ("B" if state[0] != "B" else "C") + state[1:]  # one payload character changed
        for bad_state, prompt in ((state + "x", "A"), (flipped, "A"), (state, "B")):  # last: replayed elsewhere
            with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
                await session.call_tool(
                    "ask_model",
                    {"prompt": prompt},
                    input_responses={"sampling-1": answer},
                    request_state=bad_state,
                    allow_input_required=True,
                )
            assert caught.value.error.code == -32602, (bad_state, prompt)

        with anyio.fail_after(QUICK):
            done = await session.call_tool(
                "ask_model",
                {"prompt": "A"},
                input_responses={"sampling-1": answer},
                request_state=state,
                allow_input_required=True,
            )
        assert isinstance(done, types.CallToolResult)
        assert only_text(done) == "model said: 42"

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
        return elicitation_answer

    async with connect(feature_server_command, elicitation_callback=elicitation) as conn:
        session = conn.session
        with anyio.fail_after(QUICK):
            # No state, an answer under a key the server never asked for: asked again, not an error.
            again = await session.call_tool(
                "ask_user", {}, input_responses={"wrong_key": elicitation_answer}, allow_input_required=True
            )
            assert isinstance(again, types.InputRequiredResult)
            assert list(again.input_requests or {}) == ["elicitation-1"]
            # The right key plus an unknown one: the unknown one is ignored.
            done = await session.call_tool(
                "ask_user",
                {},
                input_responses={"elicitation-1": elicitation_answer, "extra": elicitation_answer},
                allow_input_required=True,
            )
        assert isinstance(done, types.CallToolResult)
        assert only_text(done) == "accept: {'name': 'Ada'}"


# -------------------------------------------------------------------------------------- logging


@pytest.mark.parametrize(
    ("log_level", "levels"),
    [
        ("debug", ["debug", "info", "warning", "error"]),
        ("warning", ["warning", "error"]),
        ("error", ["error"]),
        ("critical", []),
    ],
)
async def test_log_level_opts_in_to_messages_at_or_above_it(feature_server_command, log_level, levels):
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with connect(feature_server_command, log_level=log_level, logging_callback=on_log) as conn:
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("log", {})) == "logged"
        await conn.wire.wait_for(lambda: len(received) >= len(levels))
        (request,) = conn.wire.outbound_with("tools/call")
        assert_modern_request(request, **{LOG_LEVEL: log_level})
        on_wire = conn.wire.inbound_with("notifications/message")
        assert [m["params"] for m in on_wire] == [
            {"level": level, "logger": "feature", "data": {"level": level}} for level in levels
        ]
        # Messages precede the response they belong to.
        response_at = next(i for i, m in enumerate(conn.wire.inbound) if m.get("id") == request["id"])
        assert all(conn.wire.inbound.index(m) < response_at for m in on_wire)
        assert [(p.level, p.logger, p.data) for p in received] == [
            (level, "feature", {"level": level}) for level in levels
        ]


async def test_no_log_level_means_no_messages(feature_server_command):
    """A logging callback alone is no opt-in: without logLevel the server MUST NOT send messages."""
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with connect(feature_server_command, logging_callback=on_log) as conn:
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("log", {})) == "logged"
            # a later exchange: anything the first call logged would have arrived before it
            assert only_text(await conn.client.call_tool("echo", {"text": "x"})) == "x"
        (request, _) = conn.wire.outbound_with("tools/call")
        assert LOG_LEVEL not in request["params"]["_meta"]
        assert conn.wire.inbound_with("notifications/message") == []
        assert received == []

        # A per-request opt-in (the envelope key in this request's _meta) applies to that request only.
        with anyio.fail_after(QUICK):
            await conn.client.call_tool("log", {}, meta={LOG_LEVEL: "error"})
            await conn.client.call_tool("log", {})
        assert [m["params"]["level"] for m in conn.wire.inbound_with("notifications/message")] == ["error"]

        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.call_tool("log", {}, meta={LOG_LEVEL: "loud"})
        assert caught.value.error.code == -32602


# ------------------------------------------------------------------------------------- progress


async def test_progress_reaches_the_progress_callback(feature_server_command):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
        assert only_text(result) == "done 3"
        await conn.wire.wait_for(lambda: len(seen) >= 3)
        assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]
        (request,) = conn.wire.outbound_with("tools/call")
        token = request["params"]["_meta"]["progressToken"]
        assert_modern_request(request)
        on_wire = conn.wire.inbound_with("notifications/progress")
        assert [m["params"] for m in on_wire] == [
            {"progressToken": token, "progress": n, "total": 3, "message": f"step {n}"} for n in (1, 2, 3)
        ]
        response_at = next(i for i, m in enumerate(conn.wire.inbound) if m.get("id") == request["id"])
        assert all(conn.wire.inbound.index(m) < response_at for m in on_wire)

        # Without a token, no progress.
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("progress", {"steps": 2})) == "done 2"
        assert len(conn.wire.inbound_with("notifications/progress")) == 3


# --------------------------------------------------------------------------------- cancellation


async def test_cancelled_call_is_never_answered_and_the_connection_carries_on(feature_server_command):
    async with connect(feature_server_command) as conn:
        outcome: list[object] = []

        async def call() -> None:
            try:
                outcome.append(await conn.client.call_tool("sleep", {"seconds": 1.5}))
            except BaseException as exc:  # recorded for the assertion below
                outcome.append(exc)
                raise

        started = anyio.current_time()
        with anyio.fail_after(QUICK):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(call)
                request = await conn.wire.wait_for(lambda: next(iter(conn.wire.outbound_with("tools/call")), None))
                await anyio.sleep(0.3)  # let the server start the handler
                task_group.cancel_scope.cancel()
        assert len(outcome) == 1 and isinstance(outcome[0], anyio.get_cancelled_exc_class()), outcome
        assert_modern_request(request)

        # The SDK told the server (stdio: notifications/cancelled naming the request).
        cancels = await conn.wire.wait_for(lambda: conn.wire.outbound_with("notifications/cancelled"))
        assert [c["params"]["requestId"] for c in cancels] == [request["id"]]
        with anyio.fail_after(2):
            assert only_text(await conn.client.call_tool("echo", {"text": "after cancel"})) == "after cancel"
        # Past the moment the handler would have answered "slept": still no response for it.
        await anyio.sleep(max(0.0, started + 2.5 - anyio.current_time()))
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("echo", {"text": "later"})) == "later"
        assert conn.wire.responses_to(request["id"]) == []


# ---------------------------------------------------------------------- subscriptions/listen


def _tagged(wire: Wire, method: str, subscription_id: Any) -> list[dict[str, Any]]:
    return [
        m
        for m in wire.inbound_with(method)
        if (m.get("params") or {}).get("_meta", {}).get(SUBSCRIPTION_ID) == subscription_id
    ]


def _cancels_of(wire: Wire, request_id: Any) -> list[dict[str, Any]]:
    return [c for c in wire.outbound_with("notifications/cancelled") if c["params"]["requestId"] == request_id]


async def test_listen_tools_list_changed_after_add_tool(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            before = await conn.client.list_tools()
        assert "late" not in {tool.name for tool in before.tools}
        with anyio.fail_after(QUICK):
            async with conn.client.listen(tools_list_changed=True) as subscription:
                assert subscription.honored.tools_list_changed is True
                assert subscription.honored.resource_subscriptions is None
                sid = subscription.subscription_id
                assert only_text(await conn.client.call_tool("add_tool", {})) == "added"
                event = await subscription.__anext__()
                assert event == ToolsListChanged()
                after = await conn.client.list_tools()
        assert {tool.name for tool in after.tools} == TOOL_NAMES | {"late"}
        with anyio.fail_after(QUICK):
            assert only_text(await conn.client.call_tool("late", {})) == "late"

        (listen,) = conn.wire.outbound_with("subscriptions/listen")
        assert listen["id"] == sid
        assert listen["params"]["notifications"] == {"toolsListChanged": True}
        assert_modern_request(listen)
        # The ack is the first message for the subscription and names the agreed subset.
        tagged = [m for m in conn.wire.inbound if (m.get("params") or {}).get("_meta", {}).get(SUBSCRIPTION_ID) == sid]
        assert tagged[0] == {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {SUBSCRIPTION_ID: sid}, "notifications": {"toolsListChanged": True}},
        }
        assert tagged[1:] == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {"_meta": {SUBSCRIPTION_ID: sid}},
            }
        ]
        # Every list_changed on the wire belongs to the subscription (none went out untagged).
        assert conn.wire.inbound_with("notifications/tools/list_changed") == tagged[1:]


async def test_listen_resource_updates_only_for_subscribed_uris(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            async with conn.client.listen(resource_subscriptions=["test://static"]) as subscription:
                assert subscription.honored.resource_subscriptions == ["test://static"]
                assert subscription.honored.tools_list_changed is None
                sid = subscription.subscription_id
                assert only_text(await conn.client.call_tool("touch", {"uri": "test://binary"})) == "touched"
                assert only_text(await conn.client.call_tool("touch", {"uri": "test://static"})) == "touched"
                # A tools change was not asked for on this stream.
                assert only_text(await conn.client.call_tool("add_tool", {})) == "added"
                event = await subscription.__anext__()
                assert event == ResourceUpdated(uri="test://static")
                # Nothing else is pending: the server publishes before it answers, so it would be here.
                with anyio.move_on_after(0.3):
                    extra = await subscription.__anext__()
                    pytest.fail(f"unexpected event {extra!r}")
        updates = conn.wire.inbound_with("notifications/resources/updated")
        assert updates == [
            {
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": {"uri": "test://static", "_meta": {SUBSCRIPTION_ID: sid}},
            }
        ]
        assert conn.wire.inbound_with("notifications/tools/list_changed") == []
        (ack,) = conn.wire.inbound_with("notifications/subscriptions/acknowledged")
        assert ack["params"] == {
            "_meta": {SUBSCRIPTION_ID: sid},
            "notifications": {"resourceSubscriptions": ["test://static"]},
        }


async def test_concurrent_listens_are_demultiplexed_and_end_on_cancel(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            async with conn.client.listen(tools_list_changed=True) as tools_stream:
                async with conn.client.listen(
                    prompts_list_changed=True, resources_list_changed=True, resource_subscriptions=["test://static"]
                ) as other_stream:
                    assert other_stream.honored.prompts_list_changed is True
                    assert other_stream.honored.resources_list_changed is True
                    await conn.client.call_tool("add_tool", {})
                    await conn.client.call_tool("touch", {"uri": "test://static"})
                    assert await tools_stream.__anext__() == ToolsListChanged()
                    assert await other_stream.__anext__() == ResourceUpdated(uri="test://static")
                # other_stream is closed: the SDK cancelled it (wait for the cancel to be written).
                await conn.wire.wait_for(lambda: _cancels_of(conn.wire, other_stream.subscription_id))
                await conn.client.call_tool("touch", {"uri": "test://static"})
                await conn.client.call_tool("add_tool", {})
                assert await tools_stream.__anext__() == ToolsListChanged()
            # Both closed: nothing more is delivered for either.
            await conn.wire.wait_for(lambda: _cancels_of(conn.wire, tools_stream.subscription_id))
            await conn.client.call_tool("add_tool", {})
            await conn.client.call_tool("touch", {"uri": "test://static"})
            assert only_text(await conn.client.call_tool("echo", {"text": "x"})) == "x"

        tools_id, other_id = tools_stream.subscription_id, other_stream.subscription_id
        assert tools_id != other_id
        assert len(_tagged(conn.wire, "notifications/tools/list_changed", tools_id)) == 2
        assert _tagged(conn.wire, "notifications/tools/list_changed", other_id) == []
        assert len(_tagged(conn.wire, "notifications/resources/updated", other_id)) == 1
        assert _tagged(conn.wire, "notifications/resources/updated", tools_id) == []
        # No untagged change notification leaked onto the connection.
        for method in ("notifications/tools/list_changed", "notifications/resources/updated"):
            for message in conn.wire.inbound_with(method):
                assert message["params"]["_meta"][SUBSCRIPTION_ID] in (tools_id, other_id)
        # The SDK ended each stream with notifications/cancelled; the server then sends nothing for it.
        cancelled = [c["params"]["requestId"] for c in conn.wire.outbound_with("notifications/cancelled")]
        assert sorted(cancelled) == sorted([tools_id, other_id])
        assert conn.wire.responses_to(tools_id) == [] and conn.wire.responses_to(other_id) == []


async def test_no_change_notifications_without_a_listen(feature_server_command):
    """2026-07-28: change notifications ride listen streams only; unrequested types MUST NOT be sent."""
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            await conn.client.call_tool("add_tool", {})
            await conn.client.call_tool("touch", {"uri": "test://static"})
            assert only_text(await conn.client.call_tool("echo", {"text": "x"})) == "x"
        notifications = [m["method"] for m in conn.wire.inbound if "method" in m]
        assert notifications == []


async def test_the_sdk_response_cache_follows_the_servers_hints(feature_server_command):
    """With the SDK's default cache on: tools/list (ttlMs 60000) is served from the cache until a
    listen event evicts it; resources/read (ttlMs 0) always goes to the server."""
    from mcp.client.caching import CacheConfig

    async with connect(feature_server_command, cache=CacheConfig()) as conn:
        with anyio.fail_after(QUICK):
            first = await conn.client.list_tools()
            cached = await conn.client.list_tools()
        assert [t.name for t in cached.tools] == [t.name for t in first.tools]
        assert len(conn.wire.outbound_with("tools/list")) == 1
        with anyio.fail_after(QUICK):
            await conn.client.read_resource("test://static")
            await conn.client.read_resource("test://static")
        assert len(conn.wire.outbound_with("resources/read")) == 2

        with anyio.fail_after(QUICK):
            async with conn.client.listen(tools_list_changed=True) as subscription:
                await conn.client.call_tool("add_tool", {})
                assert await subscription.__anext__() == ToolsListChanged()
                refreshed = await conn.client.list_tools()
        assert len(conn.wire.outbound_with("tools/list")) == 2
        assert {tool.name for tool in refreshed.tools} == TOOL_NAMES | {"late"}


async def test_listen_graceful_close_on_stdin_eof_is_a_valid_listen_result(feature_server_command):
    """On stdin EOF the server ends an open listen with the spec's final result
    ``{resultType: complete, _meta: {subscriptionId}}`` (the SDK's stdio transport cannot show this:
    it stops reading before it closes stdin), which the SDK's 2026-07-28 model accepts."""
    envelope = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}
    listen = {
        "jsonrpc": "2.0",
        "id": "L1",
        "method": "subscriptions/listen",
        "params": {"_meta": envelope, "notifications": {"toolsListChanged": True}},
    }
    with anyio.fail_after(15):
        async with await anyio.open_process(feature_server_command, stderr=None) as process:
            assert process.stdin is not None and process.stdout is not None
            await process.stdin.send((json.dumps(listen) + "\n").encode())
            buffer = b""
            while b"\n" not in buffer:
                buffer += await process.stdout.receive()
            ack = json.loads(buffer.split(b"\n", 1)[0])
            buffer = buffer.split(b"\n", 1)[1]
            await process.stdin.aclose()
            async for chunk in process.stdout:
                buffer += chunk
            await process.wait()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    wire_methods.parse_server_notification(ack["method"], MODERN, ack["params"])
    lines = [json.loads(line) for line in buffer.decode().splitlines() if line.strip()]
    assert len(lines) == 1, lines
    (final,) = lines
    assert final["id"] == "L1"
    assert final["result"]["resultType"] == "complete"
    assert final["result"]["_meta"][SUBSCRIPTION_ID] == "L1"
    wire_methods.validate_server_result("subscriptions/listen", MODERN, final["result"])


# --------------------------------------------------------------------- strict result models


async def test_every_modern_message_fits_the_sdk_schema(feature_server_command, caplog):
    """Drive every modern method through the SDK, then validate each recorded result and
    notification against the SDK's 2026-07-28 wire surface (required fields: resultType, cache
    hints on cacheable results, ...). The SDK also logs any notification it fails to validate."""
    sampling = _sampling_answer("42")

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def list_roots(context: ClientRequestContext):
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/a")])

    caplog.set_level(logging.DEBUG)
    async with connect(
        feature_server_command,
        mode="auto",
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=list_roots,
        log_level="debug",
    ) as conn:
        client = conn.client
        with anyio.fail_after(15):
            await client.list_tools()
            await client.list_prompts()
            await client.list_resources()
            await client.list_resource_templates()
            await client.read_resource("test://static")
            await client.read_resource("test://binary")
            await client.read_resource("test://items/pear")
            await client.get_prompt("write", {"topic": "x"})
            await client.complete(
                types.PromptReference(type="ref/prompt", name="write"), {"name": "topic", "value": "p"}
            )
            for tool, arguments in [
                ("echo", {"text": "x"}),
                ("add", {"a": 1, "b": 2}),
                ("fail", {}),
                ("mixed", {}),
                ("log", {}),
                ("ask_model", {"prompt": "p"}),
                ("ask_user", {}),
                ("roots", {}),
            ]:
                await client.call_tool(tool, arguments)
            await client.call_tool("progress", {"steps": 2}, progress_callback=_ignore_progress)
            async with client.listen(tools_list_changed=True, resource_subscriptions=["test://static"]) as sub:
                await client.call_tool("touch", {"uri": "test://static"})
                await client.call_tool("add_tool", {})
                assert await sub.__anext__() == ResourceUpdated(uri="test://static")
                assert await sub.__anext__() == ToolsListChanged()
        assert_modern_era(conn)

        methods = {request["id"]: request["method"] for request in conn.wire.requests()}
        results = [m for m in conn.wire.inbound if "result" in m]
        assert len(results) == len(methods) - 1  # every request answered but the listen (cancelled)
        checked: set[str] = set()
        for response in results:
            method = methods[response["id"]]
            wire_methods.validate_server_result(method, MODERN, response["result"])
            checked.add(method)
        assert checked == {
            "server/discover",
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "resources/read",
            "prompts/get",
            "completion/complete",
            "tools/call",
        }
        notifications = [m for m in conn.wire.inbound if "method" in m]
        assert {m["method"] for m in notifications} == {
            "notifications/message",
            "notifications/progress",
            "notifications/subscriptions/acknowledged",
            "notifications/resources/updated",
            "notifications/tools/list_changed",
        }
        for message in notifications:
            wire_methods.parse_server_notification(message["method"], MODERN, message.get("params"))
        assert server_requests(conn.wire) == []
        assert not [r for r in caplog.records if "Failed to validate" in r.getMessage()]


async def _ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    pass


# ------------------------------------------------------------------------------ both eras


def _without_era_fields(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("resultType", "ttlMs", "cacheScope", "_meta")}


async def test_legacy_and_modern_sdk_clients_see_the_same_server(feature_server_command):
    """One SDK client per era, each on its own server process, concurrently: same features, and
    each result dressed for its era (modern: resultType, cache hints, serverInfo; legacy: none)."""
    from .sdk_modern import SESSION_TIMEOUT

    outcomes: dict[str, dict[str, Any]] = {}

    async def run(mode: str) -> None:
        async with connect(feature_server_command, mode=mode) as conn:
            client = conn.client
            tools = await client.list_tools()
            added = await client.call_tool("add", {"a": 20, "b": 22})
            read = await client.read_resource("test://items/apple")
            prompt = await client.get_prompt("write", {"topic": "rust"})
            outcomes[mode] = {
                "version": client.protocol_version,
                "tools": dump(tools.tools),
                "added": (added.structured_content, dump(added.content)),
                "read": dump(read.contents),
                "prompt": dump(prompt.messages),
                "wire": conn.wire,
            }

    with anyio.fail_after(SESSION_TIMEOUT):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(run, "legacy")
            task_group.start_soon(run, MODERN)

    legacy, modern = outcomes["legacy"], outcomes[MODERN]
    assert legacy["version"] == "2025-11-25" and modern["version"] == MODERN
    for key in ("tools", "added", "read", "prompt"):
        assert legacy[key] == modern[key], key
    assert modern["added"][0] == {"sum": 42}

    legacy_wire: Wire = legacy["wire"]
    modern_wire: Wire = modern["wire"]
    assert len(legacy_wire.outbound_with("initialize")) == 1
    assert modern_wire.outbound_with("initialize") == []
    for message in legacy_wire.inbound:
        if "result" in message and "protocolVersion" not in message["result"]:
            assert "resultType" not in message["result"], message
            assert SERVER_INFO not in message["result"].get("_meta", {}), message
    for request in legacy_wire.requests():
        assert PROTOCOL_VERSION not in (request.get("params") or {}).get("_meta", {}), request
    for request in modern_wire.requests():
        assert_complete(
            modern_wire.response_to(request),
            cacheable=request["method"] in LIST_METHODS | {"resources/read"},
            ttl_ms=0 if request["method"] == "resources/read" else 60000,
        )
    # Same payloads, era fields aside.
    for method in ("tools/list", "tools/call", "resources/read", "prompts/get"):
        _, legacy_response = legacy_wire.last_exchange(method)
        _, modern_response = modern_wire.last_exchange(method)
        assert _without_era_fields(legacy_response["result"]) == _without_era_fields(modern_response["result"]), method


ENVELOPE = {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: {}}


def _modern_echo(text: str) -> types.CallToolRequest:
    """A tools/call carrying the modern envelope explicitly (the session itself is not adopted modern)."""
    return types.CallToolRequest(
        params=types.CallToolRequestParams(name="echo", arguments={"text": text}, _meta=ENVELOPE)
    )


@pytest.mark.parametrize("order", ["modern-first", "legacy-first"])
async def test_one_process_serves_both_eras_in_either_order(feature_server_command, order):
    """Through one SDK ``ClientSession`` on one server process: modern requests (discover, an
    enveloped tools/call) and the legacy handshake plus legacy calls, interleaved in either order.
    Each is answered by its own era's rules."""
    wire = Wire()
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stderr, anyio.fail_after(30):
        async with TappedStdio(feature_server_command, wire, stderr) as (read, write):
            async with ClientSession(read, write) as session:

                async def modern_round(text: str) -> None:
                    discovered = await session.send_discover(MODERN)
                    assert discovered["supportedVersions"] == SUPPORTED_VERSIONS
                    result = await session.send_request(_modern_echo(text), types.CallToolResult)
                    assert only_text(result) == text

                async def legacy_round(text: str) -> None:
                    if session.initialize_result is None:
                        init = await session.initialize()
                        assert init.protocol_version == "2025-11-25"
                        assert init.server_info.name == "feature-server"
                    assert only_text(await session.call_tool("echo", {"text": text})) == text

                with anyio.fail_after(QUICK * 2):
                    if order == "modern-first":
                        await modern_round("m1")
                        await legacy_round("l1")
                        await modern_round("m2")
                    else:
                        await legacy_round("l1")
                        await modern_round("m1")
                        await legacy_round("l2")

    (initialize,) = wire.outbound_with("initialize")
    assert "_meta" not in initialize["params"]
    init_result = wire.response_to(initialize)["result"]
    assert init_result["protocolVersion"] == "2025-11-25"
    assert "resultType" not in init_result
    for request in wire.outbound_with("server/discover"):
        assert_complete(wire.response_to(request), cacheable=True, ttl_ms=60000)
    echoes = [c for c in wire.outbound_with("tools/call") if c["params"]["name"] == "echo"]
    assert len(echoes) == 3
    for call in echoes:
        response = wire.response_to(call)
        text = call["params"]["arguments"]["text"]
        if text.startswith("m"):
            assert call["params"]["_meta"] == ENVELOPE
            assert response["result"] == {
                "content": [{"type": "text", "text": text}],
                "resultType": "complete",
                "_meta": {SERVER_INFO: CALL_SERVER_INFO},
            }
        else:
            assert "_meta" not in call["params"]
            assert response["result"] == {"content": [{"type": "text", "text": text}]}
    assert [m for m in wire.inbound if "error" in m] == []
