"""``plainmcp call`` / ``read`` / ``prompt``: one operation each, exit codes as documented."""

from __future__ import annotations

import base64
import json

import pytest

from tests.e2e.http_server import server_process

from .support import FEATURE_SERVER, FEATURE_TARGET, plainmcp


@pytest.fixture(scope="module")
def everything_url():
    with server_process("--log-level", "warning") as server:
        yield server.url


def test_call_converts_args_by_schema_and_prints_structured_content() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "add", "--arg", "a=1", "--arg", "b=2.5")
    assert (ran.code, ran.out) == (0, '{"sum":3.5}\n'), ran.err  # the text block; structured content says the same


def test_call_string_property_keeps_digits_as_text() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "echo", "--arg", "text=007")
    assert (ran.code, ran.out) == (0, "007\n"), ran.err


def test_call_json_prints_the_raw_result() -> None:
    ran = plainmcp("call", "--json", "--args", '{"text": "hi"}', "echo", "--", *FEATURE_SERVER)
    assert ran.code == 0, ran.err
    assert ran.json()["content"] == [{"type": "text", "text": "hi"}]
    assert ran.json()["resultType"] == "complete"  # the 2026-07-28 result, as it came


def test_call_tool_is_error_exits_3_and_prints_the_message() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "fail")
    assert (ran.code, ran.out) == (3, "The widget is out of stock; try another widget.\n")


def test_call_invalid_arguments_are_a_tool_error() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "echo", "--arg", "text=")
    assert ran.code == 3
    assert "text" in ran.out


def test_call_unknown_tool_exits_1_with_the_json_rpc_error() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "nosuch")
    assert ran.code == 1
    assert ran.out == ""
    assert ran.err.startswith("plainmcp: error -32602: Unknown tool: nosuch")


def test_call_shows_progress_on_stderr() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "progress", "--arg", "steps=2")
    assert (ran.code, ran.out) == (0, "done 2\n"), ran.err
    assert "progress [==========>         ] 1/2 step 1\n" in ran.err
    assert "progress [====================] 2/2 step 2\n" in ran.err


def test_call_every_content_kind_is_readable() -> None:
    ran = plainmcp("call", FEATURE_TARGET, "mixed")
    assert ran.code == 0, ran.err
    assert ran.out.splitlines() == [
        "hello",
        "<image image/png, 67 bytes>",
        "<audio audio/wav, 4 bytes>",
        "<link test://static static>",
        "inside",
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ("call", FEATURE_TARGET, "add", "--args", "{not json"),
        ("call", FEATURE_TARGET, "add", "--arg", "novalue"),
        ("call", FEATURE_TARGET),
        ("call", FEATURE_TARGET, "add", "extra"),
        ("call", "add", "extra", "--", "srv"),
    ],
)
def test_call_usage_errors_exit_2_before_starting_anything(argv) -> None:
    ran = plainmcp(*argv)
    assert ran.code == 2
    assert ran.err.startswith("plainmcp: ")


def test_read_prints_text_contents() -> None:
    ran = plainmcp("read", FEATURE_TARGET, "test://static")
    assert (ran.code, ran.out) == (0, "static text\n"), ran.err


def test_read_output_writes_the_decoded_blob(tmp_path) -> None:
    target = tmp_path / "pixel.png"
    ran = plainmcp("read", FEATURE_TARGET, "test://binary", "--output", str(target))
    assert ran.code == 0, ran.err
    raw = plainmcp("read", "--json", FEATURE_TARGET, "test://binary").json()
    assert target.read_bytes() == base64.b64decode(raw["contents"][0]["blob"])
    assert target.read_bytes().startswith(b"\x89PNG")


def test_read_missing_resource_exits_1() -> None:
    ran = plainmcp("read", "--era", "legacy", FEATURE_TARGET, "test://items/missing")
    assert ran.code == 1
    assert "error -32002" in ran.err


def test_prompt_prints_messages_with_roles() -> None:
    ran = plainmcp("prompt", FEATURE_TARGET, "write", "--arg", "topic=python", "--arg", "tone=dry")
    assert ran.code == 0, ran.err
    assert ran.out == "# Write about a topic.\n[user] Write about python in a dry tone.\n[assistant] Sure.\n"


def test_prompt_missing_required_argument_exits_1() -> None:
    ran = plainmcp("prompt", FEATURE_TARGET, "write")
    assert ran.code == 1
    assert "error -32602" in ran.err


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_call_read_prompt_over_streamable_http(everything_url, era) -> None:
    call = plainmcp("call", "--era", era, everything_url, "test_simple_text")
    assert (call.code, call.out) == (0, "This is a simple text response for testing.\n"), call.err
    read = plainmcp("read", "--era", era, everything_url, "test://static-text")
    assert (read.code, read.out) == (0, "This is the content of the static text resource.\n"), read.err
    prompt = plainmcp("prompt", "--era", era, "--json", everything_url, "test_simple_prompt")
    assert prompt.code == 0, prompt.err
    assert json.loads(prompt.out)["messages"][0]["role"] == "user"


@pytest.mark.parametrize(
    ("era", "arguments"),
    [
        ("modern", ["--arg", 'region:="eu-zürich"']),  # no --arg to convert: listed for the header alone
        ("modern", ["--args", '{"region": "eu-zürich"}']),
        ("modern", ["--arg", "region=eu-zürich"]),
        ("legacy", ["--args", '{"region": "eu-zürich"}']),  # no headers in 2025-11-25; still answers
    ],
)
def test_call_mirrors_x_mcp_header_arguments_over_http(everything_url, era, arguments) -> None:
    # Regression: `call` listed the tools only to convert `--arg NAME=VALUE`, so with JSON
    # arguments the transport had never seen test_custom_header's x-mcp-header annotation,
    # sent no Mcp-Param-Region header, and the 2026-07-28 server answered -32020.
    ran = plainmcp("call", "--era", era, everything_url, "test_custom_header", *arguments)
    assert (ran.code, ran.out) == (0, "Region: eu-zürich\n"), ran.err


def test_call_tool_error_over_http_exits_3(everything_url) -> None:
    ran = plainmcp("call", everything_url, "test_error_handling")
    assert ran.code == 3, ran.err
