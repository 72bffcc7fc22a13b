"""Every fixture tool of the 2025-11-25 suite, with its exact output, in both eras.

Tools that need input (sampling, elicitation) are the same handlers in both eras: under 2025-11-25
the server sends the client a request; under 2026-07-28 it answers ``input_required`` and the client
retries. Either way the client's callback sees the same question, and the tool the same answer.
"""

from __future__ import annotations

import json
import time

import anyio
import pytest
from plainmcp import MCPError

from .support import ERAS, LEGACY, MODERN, QUICK, SERVER_INFO, Recorder, connect, only_text, png_size, wav_parameters

pytestmark = pytest.mark.anyio


@pytest.fixture(params=ERAS)
def era(request):
    return request.param


def assert_plain(result, era):
    """A complete, successful result: in 2026-07-28 stamped with resultType and serverInfo."""
    assert "isError" not in result
    if era == MODERN:
        assert result["resultType"] == "complete"
        assert result["_meta"][SERVER_INFO]["name"] == "plainmcp-everything"
    else:
        assert "resultType" not in result


async def call(client, name, arguments=None, **options):
    with anyio.fail_after(QUICK):
        return await client.call_tool(name, arguments if arguments is not None else {}, **options)


async def test_simple_text(era):
    async with connect(era) as client:
        # The suite calls it without "arguments" at all.
        with anyio.fail_after(QUICK):
            result = await client.request("tools/call", {"name": "test_simple_text"})
    assert_plain(result, era)
    assert result["content"] == [{"type": "text", "text": "This is a simple text response for testing."}]


async def test_image_content_is_a_1x1_png(era):
    async with connect(era) as client:
        result = await call(client, "test_image_content")
    assert_plain(result, era)
    (block,) = result["content"]
    assert (block["type"], block["mimeType"]) == ("image", "image/png")
    assert png_size(block["data"]) == (1, 1)


async def test_audio_content_is_a_wav(era):
    async with connect(era) as client:
        result = await call(client, "test_audio_content")
    assert_plain(result, era)
    (block,) = result["content"]
    assert (block["type"], block["mimeType"]) == ("audio", "audio/wav")
    parameters = wav_parameters(block["data"])
    assert (parameters.nchannels, parameters.sampwidth, parameters.framerate) == (1, 2, 8000)
    assert parameters.nframes > 0


async def test_embedded_resource(era):
    async with connect(era) as client:
        result = await call(client, "test_embedded_resource")
    assert_plain(result, era)
    assert result["content"] == [
        {
            "type": "resource",
            "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content.",
            },
        }
    ]


async def test_multiple_content_types(era):
    async with connect(era) as client:
        result = await call(client, "test_multiple_content_types")
    assert_plain(result, era)
    text, image, resource = result["content"]
    assert text == {"type": "text", "text": "Multiple content types test:"}
    assert (image["type"], image["mimeType"], png_size(image["data"])) == ("image", "image/png", (1, 1))
    assert resource == {
        "type": "resource",
        "resource": {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        },
    }


async def test_error_handling_is_an_is_error_result(era):
    async with connect(era) as client:
        result = await call(client, "test_error_handling")
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "This tool intentionally returns an error for testing"}]


async def test_reconnection_completes_after_a_short_wait(era):
    async with connect(era) as client:
        started = time.monotonic()
        result = await call(client, "test_reconnection")
        elapsed = time.monotonic() - started
    assert_plain(result, era)
    assert only_text(result) == (
        "Reconnection test completed successfully. If you received this, "
        "the client properly reconnected after stream closure."
    )
    assert 0.09 <= elapsed < 2


async def test_dynamic_tool(era):
    async with connect(era) as client:
        result = await call(client, "test_dynamic_tool")
    assert only_text(result) == "This tool can be removed and added back at run time."


# ------------------------------------------------------------------------------------------- logging


async def test_tool_with_logging_sends_three_info_messages_50_ms_apart():
    """Legacy: no setLevel is needed (the suite sets debug; the default lets info through too)."""
    recorder = Recorder()
    async with connect(LEGACY, recorder) as client:
        started = time.monotonic()
        result = await call(client, "test_tool_with_logging")
        elapsed = time.monotonic() - started
    assert only_text(result) == "Tool with logging executed successfully"
    assert recorder.params_of("notifications/message") == [
        {"level": "info", "data": "Tool execution started"},
        {"level": "info", "data": "Tool processing data"},
        {"level": "info", "data": "Tool execution completed"},
    ]
    assert elapsed >= 0.095  # two pauses of 50 ms between the three messages


async def test_tool_with_logging_in_2026_needs_a_log_level():
    quiet, chatty = Recorder(), Recorder()
    async with connect(MODERN, quiet) as client:
        assert only_text(await call(client, "test_tool_with_logging")) == "Tool with logging executed successfully"
    async with connect(MODERN, chatty, log_level="info") as client:
        await call(client, "test_tool_with_logging")
    assert quiet.methods() == []
    assert [params["data"] for params in chatty.params_of("notifications/message")] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


def _logging_tool_messages(threshold):
    """What test_logging_tool sends a client that asked for ``threshold`` and above."""
    levels = ("debug", "info", "warning")
    return [
        {"level": level, "logger": "plainmcp-everything", "data": f"{level} message from test_logging_tool"}
        for level in levels[levels.index(threshold) :]
    ]


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
async def test_logging_tool_respects_set_level(level):
    recorder = Recorder()
    async with connect(LEGACY, recorder) as client:
        await client.set_logging_level(level)
        assert only_text(await call(client, "test_logging_tool")) == "Logged at debug, info and warning"
    assert recorder.params_of("notifications/message") == _logging_tool_messages(level)


@pytest.mark.parametrize("level", ["debug", "info", "warning"])
async def test_logging_tool_respects_the_request_log_level(level):
    recorder = Recorder()
    async with connect(MODERN, recorder, log_level=level) as client:
        assert only_text(await call(client, "test_logging_tool")) == "Logged at debug, info and warning"
    assert recorder.params_of("notifications/message") == _logging_tool_messages(level)


async def test_logging_tool_sends_nothing_without_a_log_level():
    recorder = Recorder()
    async with connect(MODERN, recorder) as client:
        result = await call(client, "test_logging_tool")
    assert only_text(result) == "Logged at debug, info and warning"
    assert recorder.notifications == []


# ------------------------------------------------------------------------------------------ progress


async def test_tool_with_progress_reports_0_50_100_of_100(era):
    seen = []
    async with connect(era) as client:
        started = time.monotonic()
        result = await call(client, "test_tool_with_progress", on_progress=lambda *report: seen.append(report))
        elapsed = time.monotonic() - started
    assert only_text(result) == "Progress test completed: 0, 50 and 100 of 100"
    assert seen == [
        (0, 100, "Completed step 0 of 100"),
        (50, 100, "Completed step 50 of 100"),
        (100, 100, "Completed step 100 of 100"),
    ]
    assert elapsed >= 0.095


async def test_tool_with_progress_sends_nothing_without_a_token(era):
    recorder = Recorder()
    async with connect(era, recorder) as client:
        result = await call(client, "test_tool_with_progress")
    assert only_text(result) == "Progress test completed: 0, 50 and 100 of 100"
    assert recorder.notifications == []


# ------------------------------------------------------------------------------------- sampling and elicitation


async def test_sampling_asks_the_clients_model(era):
    recorder = Recorder()
    recorder.sampling_answer = {
        "role": "assistant",
        "content": {"type": "text", "text": "This is a test response from the client"},
        "model": "test-model",
        "stopReason": "endTurn",
    }
    async with connect(era, recorder) as client:
        result = await call(client, "test_sampling", {"prompt": "Test prompt for sampling"})
    assert_plain(result, era)
    assert only_text(result) == "LLM response: This is a test response from the client"
    assert recorder.asked == [
        (
            "sampling/createMessage",
            {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}],
                "maxTokens": 100,
            },
        )
    ]


async def test_sampling_reads_a_list_of_content_blocks(era):
    recorder = Recorder()
    recorder.sampling_answer = {
        "role": "assistant",
        "content": [{"type": "text", "text": "two "}, {"type": "text", "text": "blocks"}],
        "model": "test-model",
    }
    async with connect(era, recorder) as client:
        assert only_text(await call(client, "test_sampling", {"prompt": "p"})) == "LLM response: two blocks"


async def test_sampling_needs_its_argument(era):
    recorder = Recorder()
    async with connect(era, recorder) as client:
        result = await call(client, "test_sampling", {})
    assert result["isError"] is True
    assert "prompt" in only_text(result)
    assert recorder.asked == []


CONTACT_SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        (
            {"action": "accept", "content": {"username": "testuser", "email": "test@example.com"}},
            'User response: action=accept, content={"username":"testuser","email":"test@example.com"}',
        ),
        ({"action": "decline"}, "User response: action=decline, content={}"),
        ({"action": "cancel"}, "User response: action=cancel, content={}"),
    ],
)
async def test_elicitation_asks_for_username_and_email(era, answer, text):
    recorder = Recorder()
    recorder.elicitation_answer = answer
    async with connect(era, recorder) as client:
        result = await call(client, "test_elicitation", {"message": "Please provide your information"})
    assert_plain(result, era)
    assert only_text(result) == text
    assert recorder.asked == [
        (
            "elicitation/create",
            {"mode": "form", "message": "Please provide your information", "requestedSchema": CONTACT_SCHEMA},
        )
    ]


async def test_elicitation_leaves_mode_out_before_2025_11_25():
    recorder = Recorder()
    async with connect("2025-06-18", recorder) as client:
        await call(client, "test_elicitation", {"message": "m"})
    assert recorder.asked == [("elicitation/create", {"message": "m", "requestedSchema": CONTACT_SCHEMA})]


async def test_elicitation_sep1034_defaults(era):
    recorder = Recorder()
    recorder.elicitation_answer = {
        "action": "accept",
        "content": {"name": "Jane Smith", "age": 25, "score": 88.0, "status": "inactive", "verified": False},
    }
    async with connect(era, recorder) as client:
        result = await call(client, "test_elicitation_sep1034_defaults")
    assert only_text(result) == (
        "Elicitation completed: action=accept, "
        'content={"name":"Jane Smith","age":25,"score":88.0,"status":"inactive","verified":false}'
    )
    ((method, params),) = recorder.asked
    assert method == "elicitation/create"
    assert params["message"] == "Please review and update the form fields with defaults"
    assert params["requestedSchema"] == {
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


async def test_elicitation_sep1330_enums(era):
    recorder = Recorder()
    recorder.elicitation_answer = {
        "action": "accept",
        "content": {
            "untitledSingle": "option1",
            "titledSingle": "value1",
            "legacyEnum": "opt1",
            "untitledMulti": ["option1", "option2"],
            "titledMulti": ["value1", "value2"],
        },
    }
    async with connect(era, recorder) as client:
        result = await call(client, "test_elicitation_sep1330_enums")
    assert only_text(result) == "Elicitation completed: action=accept, content=" + json.dumps(
        recorder.elicitation_answer["content"], separators=(",", ":")
    )
    ((method, params),) = recorder.asked
    assert (method, params["message"]) == ("elicitation/create", "Please select options from the enum fields")
    properties = params["requestedSchema"]["properties"]
    assert properties == {
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
    }


async def test_legacy_client_refusing_elicitation_is_a_tool_error():
    """The client declared elicitation, then answered the request with an error."""

    async def refuse(params):
        raise MCPError(-32600, "User rejected the request")

    recorder = Recorder()
    recorder.elicitation = refuse
    async with connect(LEGACY, recorder) as client:
        result = await call(client, "test_elicitation", {"message": "m"})
    assert result["isError"] is True
    assert "User rejected the request" in only_text(result)


# ------------------------------------------------------------------------------------- json schema 2020-12


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        (
            {"contactMethod": "email", "email": "a@b.c"},
            'JSON Schema 2020-12 tool called with: {"contactMethod":"email","email":"a@b.c"}',
        ),
        (
            {"name": "Ada", "address": {"city": "London"}, "phone": "123", "contactMethod": "phone"},
            'JSON Schema 2020-12 tool called with: {"name":"Ada","address":{"city":"London"},"phone":"123","contactMethod":"phone"}',
        ),
    ],
)
async def test_json_schema_2020_12_tool_accepts_valid_arguments(era, arguments, text):
    async with connect(era) as client:
        result = await call(client, "json_schema_2020_12_tool", arguments)
    assert only_text(result) == text


@pytest.mark.parametrize(
    "arguments",
    [
        {},  # neither phone nor email (allOf/anyOf)
        {"contactMethod": "phone", "email": "a@b.c"},  # if/then: phone required
        {"email": "a@b.c", "extra": 1},  # additionalProperties: false
        {"email": "a@b.c", "address": {"city": 7}},  # $ref into $defs
    ],
)
async def test_json_schema_2020_12_tool_enforces_its_schema(era, arguments):
    async with connect(era) as client:
        result = await call(client, "json_schema_2020_12_tool", arguments)
    assert result["isError"] is True
    assert only_text(result).startswith('Invalid arguments for tool "json_schema_2020_12_tool":')


async def test_no_arguments_tools_reject_unknown_arguments(era):
    async with connect(era) as client:
        result = await call(client, "test_simple_text", {"surprise": True})
    assert result["isError"] is True


async def test_unknown_tool_is_invalid_params(era):
    async with connect(era) as client:
        with pytest.raises(MCPError) as caught, anyio.fail_after(QUICK):
            await client.call_tool("test_no_such_tool", {})
    assert caught.value.code == -32602
