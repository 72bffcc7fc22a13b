"""The conformance suite's tools: content of every kind, logging, progress, errors, sampling and
elicitation, and a schema kept verbatim.

Tools that need input from the client use the core's one API for it (``ctx.sample``, ``ctx.elicit``):
in 2025-11-25 and earlier it sends the client a request, in 2026-07-28 it answers
``input_required`` and the handler runs again with the answer, so the same handler serves both eras.

The handlers are module-level functions named as the suite names the tools, ``test_*`` included: import
this module (``from plainmcp_everything import tools``), not those names, into a test file, or pytest
collects them as tests.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
from plainmcp import Context, Server, ToolError, ToolResult, content

from .media import PNG, WAV

SIMPLE_TEXT = "This is a simple text response for testing."
EMBEDDED_URI = "test://embedded-resource"
EMBEDDED_TEXT = "This is an embedded resource content."
MIXED_URI = "test://mixed-content-resource"
ERROR_TEXT = "This tool intentionally returns an error for testing"
LOG_MESSAGES = ("Tool execution started", "Tool processing data", "Tool execution completed")
#: The pause between two logs or two progress notifications: clients must cope with a tool that takes its time.
STEP_SECONDS = 0.05
RECONNECTION_SECONDS = 0.1

#: SEP-1613 / SEP-2106: a 2020-12 input schema with ``$schema``, ``$defs`` (and an ``$anchor`` in them),
#: composition, conditionals and ``additionalProperties``. tools/list must return it exactly as written.
JSON_SCHEMA_2020_12: dict[str, Any] = {
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

#: SEP-2243: ``region`` is mirrored by 2026-07-28 HTTP clients as the ``Mcp-Param-Region`` header, which
#: the core checks against the argument (``-32020`` when they differ).
CUSTOM_HEADER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "description": "The region to route the call to", "x-mcp-header": "Region"},
    },
    "required": ["region"],
}

#: test_sampling's one argument.
SAMPLING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"prompt": {"type": "string", "description": "The prompt to send to the LLM"}},
    "required": ["prompt"],
}

#: test_elicitation's one argument.
ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"message": {"type": "string", "description": "The message to show the user"}},
    "required": ["message"],
}

#: test_elicitation asks for these two fields.
CONTACT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}

#: SEP-1034: a default value for every primitive type.
DEFAULTS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    },
    "required": [],
}


#: SEP-1330: the five shapes of an enum field.
ENUMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "untitledSingle": {
            "type": "string",
            "description": "Select one option",
            "enum": ["option1", "option2", "option3"],
        },
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
    "required": [],
}


def compact_json(value: Any) -> str:
    """JSON as JavaScript's ``JSON.stringify`` writes it (the suite's examples use that form)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def sampled_text(result: dict[str, Any]) -> str:
    """The text of a ``sampling/createMessage`` result (one block, or several since 2025-11-25)."""
    blocks = result.get("content")
    blocks = blocks if isinstance(blocks, list) else [blocks]
    texts = [block["text"] for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str)]
    return "".join(texts) if texts else "No response"


def elicitation_summary(result: dict[str, Any]) -> str:
    return f"action={result['action']}, content={compact_json(result.get('content') or {})}"


def text_result(value: str) -> ToolResult:
    """A result of one text block (what returning the string would give, said in the handler's type)."""
    return ToolResult(content=[content.text(value)])


async def test_simple_text(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests simple text content response"""
    return text_result(SIMPLE_TEXT)


async def test_image_content(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests image content response (a 1x1 PNG)"""
    return ToolResult(content=[content.image(PNG, "image/png")])


async def test_audio_content(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests audio content response (a short WAV)"""
    return ToolResult(content=[content.audio(WAV, "audio/wav")])


async def test_embedded_resource(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests embedded resource content response"""
    embedded = content.text_contents(EMBEDDED_URI, EMBEDDED_TEXT, "text/plain")
    return ToolResult(content=[content.embedded_resource(embedded)])


async def test_multiple_content_types(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests response with multiple content types (text, image, resource)"""
    mixed = content.text_contents(MIXED_URI, compact_json({"test": "data", "value": 123}), "application/json")
    return ToolResult(
        content=[
            content.text("Multiple content types test:"),
            content.image(PNG, "image/png"),
            content.embedded_resource(mixed),
        ]
    )


async def test_tool_with_logging(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests tool that emits log messages during execution (three at info, 50 ms apart)"""
    for n, message in enumerate(LOG_MESSAGES):
        if n:
            await anyio.sleep(STEP_SECONDS)
        await ctx.info(message)
    return text_result("Tool with logging executed successfully")


async def test_logging_tool(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Logs at debug, info and warning: a 2025-11-25 client gets those at or above its logging/setLevel,
    a 2026-07-28 client only those at or above the request's logLevel, and none without one"""
    for level in ("debug", "info", "warning"):
        await ctx.log(level, f"{level} message from test_logging_tool", logger="plainmcp-everything")
    return text_result("Logged at debug, info and warning")


async def test_tool_with_progress(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests tool that reports progress notifications (0, 50 and 100 of 100, when asked with a progress token)"""
    for n, value in enumerate((0, 50, 100)):
        if n:
            await anyio.sleep(STEP_SECONDS)
        await ctx.report_progress(value, 100, f"Completed step {value} of 100")
    return text_result("Progress test completed: 0, 50 and 100 of 100")


async def test_error_handling(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests error response handling (always an isError result)"""
    raise ToolError(ERROR_TEXT)


async def test_reconnection(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests SSE stream disconnection and client reconnection (SEP-1699): over Streamable HTTP the
    server closes the response stream mid-call and sends the result after the client reconnects"""
    # Over legacy Streamable HTTP this ends the call's SSE stream now (after its priming event,
    # which carries an id and a retry interval); the result goes to the stream the client
    # resumes with Last-Event-ID. Elsewhere (stdio, 2026-07-28) there is no stream to close.
    ctx.close_sse_stream()
    await anyio.sleep(RECONNECTION_SECONDS)
    return text_result(
        "Reconnection test completed successfully. If you received this, "
        "the client properly reconnected after stream closure."
    )


async def test_sampling(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests sampling: asks the client's LLM to answer the prompt (sampling/createMessage, maxTokens 100)"""
    result = await ctx.sample([{"role": "user", "content": content.text(args["prompt"])}], max_tokens=100)
    return text_result(f"LLM response: {sampled_text(result)}")


async def test_elicitation(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests elicitation: asks the user for a username and an email address (elicitation/create)"""
    result = await ctx.elicit(args["message"], CONTACT_SCHEMA)
    return text_result(f"User response: {elicitation_summary(result)}")


async def test_elicitation_sep1034_defaults(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests elicitation with default values for every primitive type (SEP-1034)"""
    result = await ctx.elicit("Please review and update the form fields with defaults", DEFAULTS_SCHEMA)
    return text_result(f"Elicitation completed: {elicitation_summary(result)}")


async def test_elicitation_sep1330_enums(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tests elicitation with the five enum schema shapes (SEP-1330)"""
    result = await ctx.elicit("Please select options from the enum fields", ENUMS_SCHEMA)
    return text_result(f"Elicitation completed: {elicitation_summary(result)}")


async def json_schema_2020_12_tool(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)"""
    return text_result(f"JSON Schema 2020-12 tool called with: {compact_json(args)}")


async def test_custom_header(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Tool whose region argument is mirrored in the Mcp-Param-Region header (SEP-2243)"""
    return text_result(f"Region: {args['region']}")


def register(server: Server) -> None:
    """Register the tools above, in the order tools/list shows them (the name is the handler's)."""
    server.tool()(test_simple_text)
    server.tool()(test_image_content)
    server.tool()(test_audio_content)
    server.tool()(test_embedded_resource)
    server.tool()(test_multiple_content_types)
    server.tool()(test_tool_with_logging)
    server.tool()(test_logging_tool)
    server.tool()(test_tool_with_progress)
    server.tool()(test_error_handling)
    server.tool()(test_reconnection)
    server.tool(input_schema=SAMPLING_SCHEMA)(test_sampling)
    server.tool(input_schema=ELICITATION_SCHEMA)(test_elicitation)
    server.tool()(test_elicitation_sep1034_defaults)
    server.tool()(test_elicitation_sep1330_enums)
    server.tool(input_schema=JSON_SCHEMA_2020_12)(json_schema_2020_12_tool)
    server.tool(input_schema=CUSTOM_HEADER_SCHEMA)(test_custom_header)
