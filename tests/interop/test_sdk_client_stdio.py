"""The official MCP Python SDK (``mcp``) as the client, over stdio, against the plainmcp feature server.

Legacy era: the SDK's ``ClientSession.initialize()`` offers 2025-11-25 and the server must accept it.
Every expectation is spelled out here from the MCP specification and the fixture's declarations;
where the wire matters (ordering, what must *not* be sent) it is checked on the recorded JSON-RPC
traffic as well as through the SDK's typed API.
"""

from __future__ import annotations

import base64
import json

import anyio
import mcp_types as types
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import ClientRequestContext
from pydantic import BaseModel

from .sdk_client import Connection, connect

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.interop,
    # The SDK marks the legacy-only methods (subscribe, setLevel, roots) deprecated as of 2026-07-28.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

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

#: Bound for a single exchange that should be instant.
QUICK = 5.0


def dump(model: BaseModel | list) -> object:
    """A typed SDK value as it came off the wire (aliases; no defaults the SDK filled in, no None)."""
    if isinstance(model, list):
        return [dump(item) for item in model]
    return model.model_dump(by_alias=True, mode="json", exclude_none=True, exclude_unset=True)


def only_text(result: types.CallToolResult) -> str:
    assert len(result.content) == 1, result.content
    block = result.content[0]
    assert isinstance(block, types.TextContent), block
    return block.text


# ------------------------------------------------------------------------------------ lifecycle


async def test_initialize_negotiates_2025_11_25_and_describes_the_server(feature_server_command):
    async with connect(feature_server_command) as conn:
        init = conn.init
        assert init.protocol_version == "2025-11-25"
        assert conn.session.protocol_version == "2025-11-25"
        info = init.server_info
        assert (info.name, info.version) == ("feature-server", "1.2.3")
        assert info.title == "Feature server"
        assert info.description == "One of everything"
        assert info.website_url == "https://example.invalid/feature-server"
        assert init.instructions == "Use echo to test."

        caps = init.capabilities
        assert caps.tools is not None and caps.tools.list_changed is True
        assert caps.resources is not None
        assert caps.resources.subscribe is True and caps.resources.list_changed is True
        assert caps.prompts is not None and caps.prompts.list_changed is True
        assert caps.logging is not None
        assert caps.completions is not None

        # On the wire: one initialize offering 2025-11-25, answered with exactly the offered version,
        # then notifications/initialized from the SDK.
        (request,) = conn.wire.outbound_with("initialize")
        assert request["params"]["protocolVersion"] == "2025-11-25"
        (response,) = conn.wire.responses_to(request["id"])
        assert response["result"]["protocolVersion"] == "2025-11-25"
        assert response["result"]["serverInfo"] == {
            "name": "feature-server",
            "version": "1.2.3",
            "title": "Feature server",
            "description": "One of everything",
            "websiteUrl": "https://example.invalid/feature-server",
        }
        assert len(conn.wire.outbound_with("notifications/initialized")) == 1


async def test_ping(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.send_ping()
        assert isinstance(result, types.EmptyResult)
        (request,) = conn.wire.outbound_with("ping")
        (response,) = conn.wire.responses_to(request["id"])
        assert response == {"jsonrpc": "2.0", "id": request["id"], "result": {}}


async def test_high_level_client_in_legacy_mode(feature_server_command):
    """``mcp.Client(..., mode="legacy")`` over stdio: handshake, list, call."""
    params = StdioServerParameters(command=feature_server_command[0], args=feature_server_command[1:])
    with anyio.fail_after(20):
        async with Client(params, mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            assert client.server_info is not None and client.server_info.name == "feature-server"
            assert client.instructions == "Use echo to test."
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == TOOL_NAMES
            result = await client.call_tool("echo", {"text": "via Client"})
            assert result.is_error is False
            assert only_text(result) == "via Client"
            result = await client.call_tool("add", {"a": 2, "b": 40})
            assert result.structured_content == {"sum": 42}


async def test_server_exits_promptly_when_the_sdk_closes_stdin(feature_server_command):
    """stdio shutdown: the client closes stdin and the server exits by itself (no SIGTERM needed).

    The SDK waits up to 2 s for the exit before it escalates to SIGTERM, so a prompt exit is the
    server's doing.
    """
    with anyio.fail_after(20):
        async with connect(feature_server_command) as conn:
            await conn.session.send_ping()
            closing_started = anyio.current_time()
        assert anyio.current_time() - closing_started < 1.5


async def test_concurrent_calls_are_correlated(feature_server_command):
    results: dict[int, str] = {}

    async with connect(feature_server_command) as conn:

        async def call(n: int) -> None:
            results[n] = only_text(await conn.session.call_tool("echo", {"text": f"message {n}"}))

        with anyio.fail_after(QUICK):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(conn.session.call_tool, "sleep", {"seconds": 0.5})
                for n in range(20):
                    task_group.start_soon(call, n)
    assert results == {n: f"message {n}" for n in range(20)}


# ---------------------------------------------------------------------------------------- tools


async def test_tools_list_names_schemas_and_annotations(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.session.list_tools()
        assert listed.next_cursor is None
        names = [tool.name for tool in listed.tools]
        assert sorted(names) == sorted(TOOL_NAMES)
        assert len(names) == len(set(names))
        tools = {tool.name: tool for tool in listed.tools}

        echo = tools["echo"]
        assert echo.description == "Return the text unchanged."
        assert echo.input_schema == {
            "type": "object",
            "properties": {"text": {"type": "string", "minLength": 1}},
            "required": ["text"],
            "additionalProperties": False,
        }
        assert echo.output_schema is None
        assert echo.annotations is not None
        assert echo.annotations.read_only_hint is True
        assert dump(echo.annotations) == {"readOnlyHint": True}  # nothing said that was not declared

        add = tools["add"]
        assert add.title == "Add two numbers"
        assert add.description == "Add a and b."
        assert add.input_schema == {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        }
        assert add.output_schema == {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        }
        assert add.annotations is None

        assert tools["broken_output"].output_schema == {
            "type": "object",
            "properties": {"n": {"type": "integer"}},
            "required": ["n"],
        }
        # A tool declared without arguments advertises the spec's recommended "no parameters" schema.
        assert tools["fail"].input_schema == {"type": "object", "additionalProperties": False}
        assert tools["fail"].description == "Always fails in a way the model can act on."
        assert tools["sleep"].input_schema == {"type": "object", "properties": {"seconds": {"type": "number"}}}
        for name in TOOL_NAMES - {"echo", "add", "broken_output"}:
            assert tools[name].output_schema is None, name
            assert tools[name].title is None, name


async def test_tools_list_pagination(feature_server_command):
    """With a page size of 3 (the fixture's argv), the SDK pages through every tool with cursors."""
    async with connect([*feature_server_command, "3"]) as conn:
        pages: list[list[str]] = []
        cursor = None
        with anyio.fail_after(QUICK):
            while True:
                params = types.PaginatedRequestParams(cursor=cursor) if cursor is not None else None
                page = await conn.session.list_tools(params=params)
                pages.append([tool.name for tool in page.tools])
                cursor = page.next_cursor
                if cursor is None:
                    break
                assert len(pages) < 10, pages
        assert [len(page) for page in pages] == [3, 3, 3, 3, 2]
        names = [name for page in pages for name in page]
        assert sorted(names) == sorted(TOOL_NAMES)

        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.list_tools(params=types.PaginatedRequestParams(cursor="not-a-cursor"))
        assert caught.value.error.code == -32602


async def test_call_echo_returns_the_exact_text(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("echo", {"text": "hello, world ü"})
        assert result.is_error is False
        assert result.structured_content is None
        assert dump(result.content) == [{"type": "text", "text": "hello, world ü"}]


async def test_structured_output_with_text_mirror(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            await conn.session.list_tools()  # the SDK validates structuredContent against outputSchema
            result = await conn.session.call_tool("add", {"a": 1, "b": 2})
        assert result.is_error is False
        assert result.structured_content == {"sum": 3}
        # Backwards compatibility (spec, "Structured Content"): the serialized JSON also as a text block.
        assert json.loads(only_text(result)) == {"sum": 3}

        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("add", {"a": 0.5, "b": -2})
        assert result.structured_content == {"sum": -1.5}
        assert json.loads(only_text(result)) == {"sum": -1.5}


async def test_output_breaking_its_own_schema_is_an_internal_error(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.call_tool("broken_output", {})
        assert caught.value.error.code == types.INTERNAL_ERROR
        assert caught.value.error.message == "Internal error"
        # and the session carries on
        with anyio.fail_after(QUICK):
            assert only_text(await conn.session.call_tool("echo", {"text": "still here"})) == "still here"


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({}, "text"),  # required property missing
        ({"text": ""}, "text"),  # minLength 1
        ({"text": 7}, "text"),  # wrong type
        ({"text": "ok", "extra": 1}, "extra"),  # additionalProperties false
    ],
)
async def test_invalid_arguments_are_a_tool_error_naming_the_problem(feature_server_command, arguments, named):
    """Input validation failures are tool execution errors (isError), so the model can correct itself."""
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("echo", arguments)
        assert result.is_error is True
        assert result.structured_content is None
        message = only_text(result)
        assert "echo" in message
        assert named in message
        # nothing of the handler ran: its output would be the text itself
        assert message != arguments.get("text")


async def test_tool_error_is_an_is_error_result_with_the_exact_text(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("fail", {})
        assert result.is_error is True
        assert dump(result.content) == [{"type": "text", "text": "The widget is out of stock; try another widget."}]
        (request,) = conn.wire.outbound_with("tools/call")
        (response,) = conn.wire.responses_to(request["id"])
        assert "error" not in response
        assert response["result"]["isError"] is True


async def test_unknown_tool_is_a_protocol_error(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.call_tool("no_such_tool", {})
        assert caught.value.error.code == types.INVALID_PARAMS == -32602
        assert "no_such_tool" in caught.value.error.message


async def test_crash_is_a_generic_internal_error_without_leaks(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.call_tool("crash", {})
        assert caught.value.error.code == types.INTERNAL_ERROR == -32603
        assert caught.value.error.message == "Internal error"
        (request,) = conn.wire.outbound_with("tools/call")
        (response,) = conn.wire.responses_to(request["id"])
        assert response["error"]["code"] == -32603
        assert response["error"]["message"] == "Internal error"
        everything_received = json.dumps(conn.wire.inbound)
        assert "secret" not in everything_received
        assert "id_rsa" not in everything_received
        assert "RuntimeError" not in everything_received
        # The session survives the crash.
        with anyio.fail_after(QUICK):
            assert only_text(await conn.session.call_tool("echo", {"text": "alive"})) == "alive"


async def test_mixed_content_blocks(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("mixed", {})
        assert result.is_error is False
        kinds = [type(block) for block in result.content]
        assert kinds == [
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
            {
                "type": "resource",
                "resource": {"uri": "test://embedded", "text": "inside", "mimeType": "text/plain"},
            },
        ]
        image = result.content[1]
        assert isinstance(image, types.ImageContent)
        assert base64.b64decode(image.data) == PNG_1X1


# ------------------------------------------------------------------------------------ resources


async def test_resources_list(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.session.list_resources()
        assert listed.next_cursor is None
        by_uri = {str(resource.uri): dump(resource) for resource in listed.resources}
        assert by_uri == {
            "test://static": {
                "uri": "test://static",
                "name": "static",
                "description": "A static text",
                "mimeType": "text/plain",
            },
            "test://binary": {"uri": "test://binary", "name": "binary", "mimeType": "image/png"},
        }


async def test_read_text_resource(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.read_resource("test://static")
        assert dump(result.contents) == [{"uri": "test://static", "mimeType": "text/plain", "text": "static text"}]
        assert isinstance(result.contents[0], types.TextResourceContents)


async def test_read_blob_resource(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.read_resource("test://binary")
        (contents,) = result.contents
        assert isinstance(contents, types.BlobResourceContents)
        assert dump(contents) == {"uri": "test://binary", "mimeType": "image/png", "blob": PNG_B64}
        assert base64.b64decode(contents.blob) == PNG_1X1


async def test_resource_templates_list_and_read(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.session.list_resource_templates()
        assert listed.next_cursor is None
        assert dump(listed.resource_templates) == [
            {
                "uriTemplate": "test://items/{id}",
                "name": "item",
                "description": "An item by id.",
                "mimeType": "application/json",
            }
        ]
        with anyio.fail_after(QUICK):
            result = await conn.session.read_resource("test://items/abc")
        assert dump(result.contents) == [
            {"uri": "test://items/abc", "mimeType": "application/json", "text": '{"id": "abc"}'}
        ]


@pytest.mark.parametrize("uri", ["test://nowhere", "test://items/missing"])
async def test_unknown_resource_is_resource_not_found(feature_server_command, uri):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.read_resource(uri)
        assert caught.value.error.code == -32002
        assert caught.value.error.data == {"uri": uri}
        (request,) = conn.wire.outbound_with("resources/read")
        (response,) = conn.wire.responses_to(request["id"])
        assert response["error"]["code"] == -32002
        assert response["error"]["data"] == {"uri": uri}


async def test_subscribe_receives_updates_only_for_subscribed_uris(feature_server_command):
    async with connect(feature_server_command) as conn:
        session, wire = conn.session, conn.wire

        def updated(uri: str) -> list[types.ResourceUpdatedNotification]:
            return [
                n
                for n in wire.notifications
                if isinstance(n, types.ResourceUpdatedNotification) and str(n.params.uri) == uri
            ]

        def updates_on_wire(uri: str) -> list[dict]:
            return [m for m in wire.inbound_with("notifications/resources/updated") if m["params"]["uri"] == uri]

        with anyio.fail_after(QUICK):
            assert isinstance(await session.subscribe_resource("test://static"), types.EmptyResult)
            # An update of a URI nobody subscribed to must not reach this client...
            assert only_text(await session.call_tool("touch", {"uri": "test://binary"})) == "touched"
            # ...while the subscribed one does.
            assert only_text(await session.call_tool("touch", {"uri": "test://static"})) == "touched"
        (notification,) = await wire.wait_for(lambda: updated("test://static"))
        assert dump(notification) == {
            "method": "notifications/resources/updated",
            "params": {"uri": "test://static"},
        }
        # The server publishes before it answers, so by now anything for test://binary would be here.
        assert updates_on_wire("test://binary") == []
        assert updated("test://binary") == []
        assert len(updates_on_wire("test://static")) == 1

        # After unsubscribing, touching it again sends nothing.
        with anyio.fail_after(QUICK):
            assert isinstance(await session.unsubscribe_resource("test://static"), types.EmptyResult)
            assert only_text(await session.call_tool("touch", {"uri": "test://static"})) == "touched"
            await session.send_ping()
        assert len(updates_on_wire("test://static")) == 1


# -------------------------------------------------------------------------------------- prompts


async def test_prompts_list(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            listed = await conn.session.list_prompts()
        assert listed.next_cursor is None
        by_name = {prompt.name: dump(prompt) for prompt in listed.prompts}
        assert by_name == {
            "write": {
                "name": "write",
                "description": "Write about a topic.",
                "arguments": [
                    {"name": "topic", "description": "What to write about", "required": True},
                    {"name": "tone", "description": "How to sound"},
                ],
            },
            "simple": {"name": "simple", "description": "A prompt without arguments."},
        }


async def test_prompts_get_exact_messages(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.get_prompt("write", {"topic": "python"})
        assert dump(result) == {
            "description": "Write about a topic.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Write about python in a neutral tone."}},
                {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
            ],
        }
        with anyio.fail_after(QUICK):
            result = await conn.session.get_prompt("write", {"topic": "rust", "tone": "cheerful"})
        assert dump(result.messages[0]) == {
            "role": "user",
            "content": {"type": "text", "text": "Write about rust in a cheerful tone."},
        }
        with anyio.fail_after(QUICK):
            result = await conn.session.get_prompt("simple")
        assert dump(result) == {
            "description": "A prompt without arguments.",
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello."}}],
        }


async def test_prompt_missing_required_argument_is_invalid_params(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.get_prompt("write", {"tone": "dry"})
        assert caught.value.error.code == -32602
        assert "topic" in caught.value.error.message


async def test_unknown_prompt_is_invalid_params(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.get_prompt("no_such_prompt")
        assert caught.value.error.code == -32602


# ----------------------------------------------------------------------------------- completion


async def test_completion_of_prompt_argument(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.complete(
                types.PromptReference(type="ref/prompt", name="write"), {"name": "topic", "value": "py"}
            )
        assert result.completion.values == ["python", "pytest"]
        assert result.completion.has_more in (None, False)
        assert result.completion.total in (None, 2)


async def test_completion_of_template_variable(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://items/{id}"),
                {"name": "id", "value": "ap"},
            )
        assert result.completion.values == ["apple", "apricot"]
        assert result.completion.has_more in (None, False)
        with anyio.fail_after(QUICK):
            result = await conn.session.complete(
                types.ResourceTemplateReference(type="ref/resource", uri="test://items/{id}"),
                {"name": "id", "value": "zz"},
            )
        assert result.completion.values == []


# -------------------------------------------------------------------------------------- logging


async def test_set_level_warning_filters_log_messages(feature_server_command):
    received: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        received.append(params)

    async with connect(feature_server_command, logging_callback=on_log) as conn:
        with anyio.fail_after(QUICK):
            assert isinstance(await conn.session.set_logging_level("warning"), types.EmptyResult)
            assert only_text(await conn.session.call_tool("log", {})) == "logged"
        await conn.wire.wait_for(lambda: len(received) >= 2)
        # The server logs before it answers: everything it sent is on the wire by now.
        on_wire = [m["params"] for m in conn.wire.inbound_with("notifications/message")]
        assert on_wire == [
            {"level": "warning", "logger": "feature", "data": {"level": "warning"}},
            {"level": "error", "logger": "feature", "data": {"level": "error"}},
        ]
        assert sorted((p.level, p.logger, json.dumps(p.data)) for p in received) == [
            ("error", "feature", '{"level": "error"}'),
            ("warning", "feature", '{"level": "warning"}'),
        ]

        # Lowering the level to debug lets every level through.
        with anyio.fail_after(QUICK):
            await conn.session.set_logging_level("debug")
            await conn.session.call_tool("log", {})
        await conn.wire.wait_for(lambda: len(received) >= 6)
        levels = [m["params"]["level"] for m in conn.wire.inbound_with("notifications/message")]
        assert levels == ["warning", "error", "debug", "info", "warning", "error"]


async def test_set_level_rejects_an_unknown_level(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.session.send_request(
                types.SetLevelRequest(params=types.SetLevelRequestParams.model_construct(level="loud")),
                types.EmptyResult,
            )
        assert caught.value.error.code == -32602


# ------------------------------------------------------------------------------------- progress


async def test_progress_notifications_reach_the_progress_callback(feature_server_command):
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("progress", {"steps": 3}, progress_callback=on_progress)
        assert only_text(result) == "done 3"
        await conn.wire.wait_for(lambda: len(seen) >= 3)
        assert seen == [(1.0, 3.0, "step 1"), (2.0, 3.0, "step 2"), (3.0, 3.0, "step 3")]

        (request,) = conn.wire.outbound_with("tools/call")
        token = request["params"]["_meta"]["progressToken"]
        on_wire = conn.wire.inbound_with("notifications/progress")
        assert [m["params"] for m in on_wire] == [
            {"progressToken": token, "progress": 1, "total": 3, "message": "step 1"},
            {"progressToken": token, "progress": 2, "total": 3, "message": "step 2"},
            {"progressToken": token, "progress": 3, "total": 3, "message": "step 3"},
        ]
        # every progress notification precedes the response
        last_progress = max(i for i, m in enumerate(conn.wire.inbound) if m.get("method") == "notifications/progress")
        response_at = next(i for i, m in enumerate(conn.wire.inbound) if m.get("id") == request["id"])
        assert last_progress < response_at


async def test_no_progress_without_a_token(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            assert only_text(await conn.session.call_tool("progress", {"steps": 2})) == "done 2"
            await conn.session.send_ping()
        assert conn.wire.inbound_with("notifications/progress") == []


# --------------------------------------------------------------------------------- cancellation


async def _start_and_cancel_sleep(conn: Connection, seconds: float) -> int | str:
    """Call ``sleep`` from the SDK, cancel it from the SDK side once it is in flight; return its id."""
    outcome: list[object] = []

    async def call() -> None:
        try:
            outcome.append(await conn.session.call_tool("sleep", {"seconds": seconds}))
        except BaseException as exc:  # recorded for the assertion below
            outcome.append(exc)
            raise

    with anyio.fail_after(QUICK):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(call)
            request = await conn.wire.wait_for(
                lambda: next((m for m in conn.wire.outbound_with("tools/call") if m["params"]["name"] == "sleep"), None)
            )
            await anyio.sleep(0.3)  # let the server start the handler
            task_group.cancel_scope.cancel()
    assert len(outcome) == 1 and isinstance(outcome[0], anyio.get_cancelled_exc_class()), outcome
    return request["id"]


async def test_cancellation_from_the_sdk_frees_the_session(feature_server_command):
    async with connect(feature_server_command) as conn:
        request_id = await _start_and_cancel_sleep(conn, 30)
        # The SDK told the server, naming the request.
        cancels = await conn.wire.wait_for(lambda: conn.wire.outbound_with("notifications/cancelled"))
        assert [c["params"]["requestId"] for c in cancels] == [request_id]
        # The session still answers promptly.
        with anyio.fail_after(2):
            assert only_text(await conn.session.call_tool("echo", {"text": "after cancel"})) == "after cancel"
            await conn.session.send_ping()
        assert conn.wire.responses_to(request_id) == []


async def test_cancelled_request_is_never_answered(feature_server_command):
    """A cancelled request gets no response, even after its work would have finished."""
    async with connect(feature_server_command) as conn:
        started = anyio.current_time()
        request_id = await _start_and_cancel_sleep(conn, 1.5)
        assert conn.wire.outbound_with("notifications/cancelled")[0]["params"]["requestId"] == request_id
        # Wait past the moment the handler would have returned "slept" had it not been cancelled.
        await anyio.sleep(max(0.0, started + 2.5 - anyio.current_time()))
        with anyio.fail_after(QUICK):
            await conn.session.send_ping()
        assert conn.wire.responses_to(request_id) == []


# ---------------------------------------------------------------------- client features (server → client)


async def test_sampling_through_the_sdk_callback(feature_server_command):
    asked: list[types.CreateMessageRequestParams] = []

    async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams):
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="42"),
            model="test-model",
            stop_reason="endTurn",
        )

    async with connect(feature_server_command, sampling_callback=sampling) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("ask_model", {"prompt": "What is six times seven?"})
        assert result.is_error is False
        assert only_text(result) == "model said: 42"
        (params,) = asked
        assert params.max_tokens == 50
        assert dump(params.messages) == [
            {"role": "user", "content": {"type": "text", "text": "What is six times seven?"}}
        ]


async def test_elicitation_through_the_sdk_callback(feature_server_command):
    asked: list[types.ElicitRequestParams] = []

    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with connect(feature_server_command, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("ask_user", {})
        assert result.is_error is False
        text = only_text(result)
        assert text.startswith("accept")
        assert "Ada" in text
        (params,) = asked
        assert isinstance(params, types.ElicitRequestFormParams)
        assert params.message == "Your name?"
        assert params.requested_schema == {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }


async def test_elicitation_decline(feature_server_command):
    async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
        return types.ElicitResult(action="decline")

    async with connect(feature_server_command, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("ask_user", {})
        assert only_text(result).startswith("decline")


async def test_roots_through_the_sdk_callback(feature_server_command):
    async def list_roots(context: ClientRequestContext):
        return types.ListRootsResult(roots=[types.Root(uri="file:///tmp/a")])

    async with connect(feature_server_command, list_roots_callback=list_roots) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("roots", {})
        assert result.is_error is False
        assert only_text(result) == "file:///tmp/a"
        (request,) = conn.wire.inbound_with("roots/list")
        (response,) = [m for m in conn.wire.outbound if "method" not in m and m.get("id") == request["id"]]
        assert response["result"] == {"roots": [{"uri": "file:///tmp/a"}]}


async def test_client_features_need_the_client_capability(feature_server_command):
    """Without a sampling callback the SDK declares no sampling capability; the server must not ask."""
    async with connect(feature_server_command) as conn:
        (init,) = conn.wire.outbound_with("initialize")
        assert "sampling" not in init["params"]["capabilities"]
        with anyio.fail_after(QUICK):
            outcome = None
            try:
                outcome = await conn.session.call_tool("ask_model", {"prompt": "hi"})
            except MCPError as exc:
                outcome = exc
        # The server never sent the request, and the call failed (as a protocol or a tool error).
        assert conn.wire.inbound_with("sampling/createMessage") == []
        assert isinstance(outcome, MCPError) or outcome.is_error is True, outcome


# -------------------------------------------------------------------------------- list changes


async def test_add_tool_announces_list_changed_and_lists_the_new_tool(feature_server_command):
    async with connect(feature_server_command) as conn:
        with anyio.fail_after(QUICK):
            before = await conn.session.list_tools()
        assert "late" not in {tool.name for tool in before.tools}
        with anyio.fail_after(QUICK):
            assert only_text(await conn.session.call_tool("add_tool", {})) == "added"
        await conn.wire.wait_for(
            lambda: [n for n in conn.wire.notifications if isinstance(n, types.ToolListChangedNotification)]
        )
        (on_wire,) = conn.wire.inbound_with("notifications/tools/list_changed")
        assert on_wire.get("params") in (None, {})
        with anyio.fail_after(QUICK):
            after = await conn.session.list_tools()
        names = {tool.name for tool in after.tools}
        assert names == TOOL_NAMES | {"late"}
        late = next(tool for tool in after.tools if tool.name == "late")
        assert late.description == "Added at run time."
        with anyio.fail_after(QUICK):
            assert only_text(await conn.session.call_tool("late", {})) == "late"
