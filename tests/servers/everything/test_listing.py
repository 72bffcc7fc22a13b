"""What the everything server says about itself, in both eras: identity, capabilities, and the exact
tool, resource, template and prompt listings the conformance suite looks for (with its stricter rules:
descriptions everywhere, MIME types on resources, tool names of at most 64 characters)."""

from __future__ import annotations

import re

import pytest

from .support import ERAS, MODERN, TOOLS, connect

pytestmark = pytest.mark.anyio


NO_ARGUMENTS = {"type": "object", "additionalProperties": False}

JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

CAPABILITIES = {
    "logging": {},
    "completions": {},
    "prompts": {"listChanged": True},
    "resources": {"listChanged": True, "subscribe": True},
    "tools": {"listChanged": True},
}


@pytest.fixture(params=ERAS)
def era(request):
    return request.param


async def test_identity_and_capabilities(era):
    async with connect(era) as client:
        assert client.protocol_version == era
        assert client.server_info["name"] == "plainmcp-everything"
        assert client.server_info["version"] == "0.1.0"
        # Tasks: 2026-07-28 names the extension in server/discover, 2025-11-25 the v1 capability.
        if era == MODERN:
            tasks: dict = {"extensions": {"io.modelcontextprotocol/tasks": {}}}
        else:
            tasks = (
                {"tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}}
                if era == "2025-11-25"
                else {}
            )
        assert client.server_capabilities == {**CAPABILITIES, **tasks}
        assert "test_*" in client.instructions


async def test_tools_list_is_exact_and_meets_the_suites_rules(era):
    async with connect(era) as client:
        result = await client.request("tools/list")
    assert "nextCursor" not in result  # the suite reads only the first page
    tools = result["tools"]
    assert [tool["name"] for tool in tools] == TOOLS
    for tool in tools:
        assert re.fullmatch(r"[A-Za-z0-9_./-]{1,64}", tool["name"]), tool["name"]
        assert isinstance(tool.get("description"), str) and tool["description"].strip(), tool["name"]
        assert tool["inputSchema"]["type"] == "object"
    if era == MODERN:
        assert result["resultType"] == "complete"
        assert isinstance(result["ttlMs"], int) and result["ttlMs"] >= 0
        assert result["cacheScope"] in ("public", "private")


async def test_tool_input_schemas(era):
    async with connect(era) as client:
        schemas = {tool["name"]: tool["inputSchema"] for tool in await client.list_all_tools()}
    assert schemas["json_schema_2020_12_tool"] == JSON_SCHEMA_2020_12
    assert schemas["test_sampling"] == {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
        "required": ["prompt"],
    }
    assert schemas["test_elicitation"] == {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The message to show the user"}},
        "required": ["message"],
    }
    assert schemas["test_custom_header"] == {
        "type": "object",
        "properties": {
            "region": {"type": "string", "description": "The region to route the call to", "x-mcp-header": "Region"}
        },
        "required": ["region"],
    }
    with_arguments = {
        "json_schema_2020_12_tool",
        "test_sampling",
        "test_elicitation",
        "test_custom_header",
        "greet",
        "slow_compute",
        "confirm_delete",
    }
    assert {name: schema for name, schema in schemas.items() if name not in with_arguments} == {
        name: NO_ARGUMENTS for name in TOOLS if name not in with_arguments
    }


async def test_resources_list(era):
    async with connect(era) as client:
        result = await client.request("resources/list")
    assert result["resources"] == [
        {
            "uri": "test://static-text",
            "name": "static-text",
            "title": "Static Text Resource",
            "description": "A static text resource for testing",
            "mimeType": "text/plain",
        },
        {
            "uri": "test://static-binary",
            "name": "static-binary",
            "title": "Static Binary Resource",
            "description": "A static binary resource (a 1x1 PNG image) for testing",
            "mimeType": "image/png",
            "size": 72,  # the 1x1 PNG of media.py, its pixels in a stored deflate block
        },
        {
            "uri": "test://watched-resource",
            "name": "watched-resource",
            "title": "Watched Resource",
            "description": "A resource to subscribe to: test_trigger_resource_update changes it",
            "mimeType": "text/plain",
        },
        {
            "uri": "test://dynamic-resource",
            "name": "dynamic-resource",
            "description": "Dynamically added/removed resource: test_trigger_resource_change takes it away or brings it back",
            "mimeType": "text/plain",
        },
    ]
    if era == MODERN:
        assert (result["resultType"], result["cacheScope"]) == ("complete", "private")


async def test_resource_templates_list(era):
    async with connect(era) as client:
        assert await client.list_all_resource_templates() == [
            {
                "uriTemplate": "test://template/{id}/data",
                "name": "template",
                "title": "Resource Template",
                "description": "A resource template with parameter substitution",
                "mimeType": "application/json",
            }
        ]


async def test_prompts_list(era):
    async with connect(era) as client:
        prompts = await client.list_all_prompts()
    assert prompts == [
        {
            "name": "test_simple_prompt",
            "title": "Simple Test Prompt",
            "description": "A simple prompt without arguments",
        },
        {
            "name": "test_prompt_with_arguments",
            "title": "Prompt With Arguments",
            "description": "A prompt with required arguments",
            "arguments": [
                {"name": "arg1", "description": "First test argument", "required": True},
                {"name": "arg2", "description": "Second test argument", "required": True},
            ],
        },
        {
            "name": "test_prompt_with_embedded_resource",
            "title": "Prompt With Embedded Resource",
            "description": "A prompt that includes an embedded resource",
            "arguments": [{"name": "resourceUri", "description": "URI of the resource to embed", "required": True}],
        },
        {
            "name": "test_prompt_with_image",
            "title": "Prompt With Image",
            "description": "A prompt that includes image content",
        },
        {
            "name": "test_input_required_result_prompt",
            "description": "MRTR: a prompt that first asks the user for its context (elicitation, key user_context)",
        },
        {
            "name": "test_dynamic_prompt",
            "description": "Dynamically added/removed prompt: test_trigger_prompt_change takes it away or brings it back",
        },
    ]


PROMPT = {"type": "ref/prompt", "name": "test_prompt_with_arguments"}
TEMPLATE = {"type": "ref/resource", "uri": "test://template/{id}/data"}


@pytest.mark.parametrize(
    ("ref", "argument", "value", "values"),
    [
        (PROMPT, "arg1", "test", ["testValue1"]),  # what the suite sends
        (PROMPT, "arg1", "par", ["paris", "park", "party"]),  # the suite's documented example
        (PROMPT, "arg1", "", ["hello", "paris", "park", "party", "testValue1"]),
        (PROMPT, "arg1", "PA", ["paris", "park", "party"]),
        (PROMPT, "arg1", "x", []),
        (PROMPT, "arg2", "w", ["world"]),
        (TEMPLATE, "id", "1", ["1", "123"]),
    ],
)
async def test_completion(era, ref, argument, value, values):
    async with connect(era) as client:
        assert await client.complete(ref, argument, value) == {"values": values}


async def test_legacy_initialize_names_the_negotiated_revision():
    """An older client gets its own revision back, and fields it does not know are left out."""
    async with connect("2025-03-26") as client:
        assert client.protocol_version == "2025-03-26"
        prompts = await client.list_all_prompts()
        assert prompts[0] == {"name": "test_simple_prompt", "description": "A simple prompt without arguments"}
