"""The official MCP Python SDK (``mcp`` 2.3.0) as the client of the everything server over stdio, in both
eras. Its result models are strict, so every typed answer here is an interoperability check too; the
recorded wire shows what the typed API hides (the input_required rounds, the era)."""

from __future__ import annotations

import anyio
import mcp_types as types
import pytest
from mcp import MCPError
from mcp.client.session import ClientRequestContext

from tests.interop import sdk_client, sdk_modern

from .support import QUICK, STDIO_COMMAND

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]


def only_text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


async def sampling(context: ClientRequestContext, params: types.CreateMessageRequestParams):
    question = params.messages[0].content.text
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"answer to {question}"),
        model="test-model",
        stop_reason="endTurn",
    )


async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams):
    fields = {
        "name": "Ada",
        "color": "green",
        "context": "sdk",
        "ok": True,
        "username": "ada",
        "email": "ada@example.com",
    }
    return types.ElicitResult(
        action="accept", content={key: fields[key] for key in params.requested_schema["properties"] if key in fields}
    )


async def list_roots(context: ClientRequestContext):
    return types.ListRootsResult(roots=[types.Root(uri="file:///sdk/root", name="SDK root")])


# ------------------------------------------------------------------------------------------ legacy


async def test_legacy_handshake_and_listings():
    async with sdk_client.connect(STDIO_COMMAND) as conn:
        assert conn.init.protocol_version == "2025-11-25"
        assert conn.init.server_info.name == "plainmcp-everything"
        capabilities = conn.init.capabilities
        assert capabilities.tools.list_changed and capabilities.prompts.list_changed
        assert capabilities.resources.subscribe and capabilities.completions is not None
        with anyio.fail_after(QUICK):
            tools = (await conn.session.list_tools()).tools
            prompts = (await conn.session.list_prompts()).prompts
            resources = (await conn.session.list_resources()).resources
        assert len(tools) == 38 and all(tool.description for tool in tools)
        (schema_tool,) = [tool for tool in tools if tool.name == "json_schema_2020_12_tool"]
        assert schema_tool.input_schema["$defs"]["address"]["$anchor"] == "addressDef"
        assert schema_tool.input_schema["if"] == {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"],
        }
        assert [prompt.name for prompt in prompts][:4] == [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
        ]
        assert all(resource.mime_type for resource in resources)


async def test_legacy_sampling_and_elicitation_as_server_requests():
    async with sdk_client.connect(STDIO_COMMAND, sampling_callback=sampling, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK):
            sampled = await conn.session.call_tool("test_sampling", {"prompt": "2+2?"})
            elicited = await conn.session.call_tool("test_elicitation", {"message": "Who are you?"})
        assert only_text(sampled) == "LLM response: answer to 2+2?"
        assert (
            only_text(elicited) == 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
        )
        (request,) = conn.wire.inbound_with("sampling/createMessage")
        assert request["params"] == {
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 100,
        }
        (request,) = conn.wire.inbound_with("elicitation/create")
        assert request["params"]["message"] == "Who are you?"
        assert request["params"]["requestedSchema"]["required"] == ["username", "email"]


async def test_legacy_logging_progress_resources_prompts_and_completion():
    progress = []

    async def on_progress(value, total, message):
        progress.append((value, total, message))

    async with sdk_client.connect(STDIO_COMMAND) as conn:
        session = conn.session
        with anyio.fail_after(QUICK):
            await session.set_logging_level("debug")
            await session.call_tool("test_tool_with_logging", {})
            await conn.wire.wait_for(lambda: len(conn.wire.inbound_with("notifications/message")) >= 3)
            result = await session.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            template = await session.read_resource("test://template/123/data")
            prompt = await session.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
            completion = await session.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "test"},
            )
            await session.subscribe_resource("test://watched-resource")
            await session.call_tool("test_trigger_resource_update", {})
            await conn.wire.wait_for(lambda: conn.wire.inbound_with("notifications/resources/updated"))
        assert [m["params"]["data"] for m in conn.wire.inbound_with("notifications/message")] == [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed",
        ]
        assert only_text(result) == "Progress test completed: 0, 50 and 100 of 100"
        assert [value for value, _, _ in progress] == [0, 50, 100]
        assert template.contents[0].text == '{"id":"123","templateTest":true,"data":"Data for ID: 123"}'
        assert template.contents[0].mime_type == "application/json"
        assert prompt.messages[0].content.text == "Prompt with arguments: arg1='hello', arg2='world'"
        assert completion.completion.values == ["testValue1"]


# ------------------------------------------------------------------------------------------ modern


async def test_modern_input_required_through_the_sdk_callbacks():
    async with sdk_modern.connect(
        STDIO_COMMAND, sampling_callback=sampling, elicitation_callback=elicitation, list_roots_callback=list_roots
    ) as conn:
        with anyio.fail_after(QUICK):
            several = await conn.client.call_tool("test_input_required_result_multiple_inputs", {})
            rounds = await conn.client.call_tool("test_input_required_result_multi_round", {})
            state = await conn.client.call_tool("test_input_required_result_request_state", {})
            prompt = await conn.client.get_prompt("test_input_required_result_prompt")
        assert only_text(several) == "Name: Ada; Greeting: answer to Generate a greeting; Roots: 1"
        assert only_text(rounds) == "Multi-round complete for Ada who likes green"
        assert only_text(state) == "state-ok: requestState validated in round 2, ok=true"
        assert prompt.messages[0].content.text == "Prompt with context: sdk"
        # Three rounds for multi_round on the wire, and never a request from the server.
        calls = [
            m
            for m in conn.wire.outbound_with("tools/call")
            if m["params"]["name"] == "test_input_required_result_multi_round"
        ]
        assert len(calls) == 3
        assert [conn.wire.response_to(c)["result"]["resultType"] for c in calls] == [
            "input_required",
            "input_required",
            "complete",
        ]
        assert [m for m in conn.wire.inbound if "method" in m and "id" in m] == []


async def test_modern_missing_capability_and_tampered_state():
    async with sdk_modern.connect(STDIO_COMMAND, elicitation_callback=elicitation) as conn:
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await conn.client.call_tool("test_missing_capability", {})
        assert caught.value.error.code == -32021
        assert caught.value.error.data == {"requiredCapabilities": {"sampling": {}}}

        session = conn.session
        with anyio.fail_after(QUICK):
            first = await session.call_tool("test_input_required_result_tampered_state", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests) == ["confirm"]
        answer = types.ElicitResult(action="accept", content={"ok": True})
        with anyio.fail_after(QUICK), pytest.raises(MCPError) as caught:
            await session.call_tool(
                "test_input_required_result_tampered_state",
                {},
                input_responses={"confirm": answer},
                request_state=first.request_state + "-TAMPERED",
                allow_input_required=True,
            )
        assert caught.value.error.code == -32602
        with anyio.fail_after(QUICK):
            done = await session.call_tool(
                "test_input_required_result_tampered_state",
                {},
                input_responses={"confirm": answer},
                request_state=first.request_state,
                allow_input_required=True,
            )
        assert only_text(done) == "integrity-ok: state verified"


async def test_modern_listings_fit_the_sdk_and_carry_cache_hints():
    async with sdk_modern.connect(STDIO_COMMAND) as conn:
        with anyio.fail_after(QUICK):
            tools = await conn.client.list_tools()
            resources = await conn.client.list_resources()
            read = await conn.client.read_resource("test://static-binary")
        assert len(tools.tools) == 38
        assert [resource.uri for resource in resources.resources][:2] == ["test://static-text", "test://static-binary"]
        assert read.contents[0].mime_type == "image/png"
        for method in ("tools/list", "resources/list", "resources/read"):
            _, response = conn.wire.last_exchange(method)
            assert response["result"]["resultType"] == "complete"
            assert response["result"]["cacheScope"] == "private"
            assert isinstance(response["result"]["ttlMs"], int)
