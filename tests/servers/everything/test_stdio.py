"""The everything server as a real process over stdio (``python -m plainmcp_everything``), in both eras,
and its command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anyio
import pytest
from plainmcp import MCPError, connect_stdio

from .support import (
    ERAS,
    LEGACY,
    MODERN,
    QUICK,
    STDIO_COMMAND,
    Recorder,
    elicit_answer,
    fill_form,
    only_text,
    png_size,
    raw,
)

pytestmark = pytest.mark.anyio

#: Spawning a Python process and answering takes well under a second; allow for a loaded machine.
SPAWN = 30.0


@pytest.fixture(params=ERAS)
def era(request):
    return request.param


async def test_smoke_over_stdio(era):
    recorder = Recorder()
    recorder.elicitation_answer = fill_form
    progress = []
    with anyio.fail_after(SPAWN):
        async with connect_stdio(STDIO_COMMAND, protocol_version=era, **recorder.client_options()) as client:
            assert client.protocol_version == era
            assert client.server_info["name"] == "plainmcp-everything"
            tools = await client.list_all_tools()
            assert len(tools) == 38 and tools[0]["name"] == "test_simple_text"

            assert (
                only_text(await client.call_tool("test_simple_text", {}))
                == "This is a simple text response for testing."
            )
            image = (await client.call_tool("test_image_content", {}))["content"][0]
            assert png_size(image["data"]) == (1, 1)
            error = await client.call_tool("test_error_handling", {})
            assert error["isError"] is True

            result = await client.call_tool("test_tool_with_progress", {}, on_progress=lambda *r: progress.append(r[0]))
            assert only_text(result) == "Progress test completed: 0, 50 and 100 of 100"
            assert progress == [0, 50, 100]

            result = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
            assert only_text(result) == "LLM response: The capital of France is Paris."
            result = await client.call_tool("test_input_required_result_multiple_inputs", {})
            assert only_text(result) == "Name: Alice; Greeting: The capital of France is Paris.; Roots: 1"
            result = await client.call_tool("test_input_required_result_multi_round", {})
            assert only_text(result) == "Multi-round complete for Alice who likes blue"

            contents = (await client.read_resource("test://template/7/data"))["contents"]
            assert contents == [
                {
                    "uri": "test://template/7/data",
                    "mimeType": "application/json",
                    "text": '{"id":"7","templateTest":true,"data":"Data for ID: 7"}',
                }
            ]
            prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "hello", "arg2": "world"})
            assert prompt["messages"][0]["content"]["text"] == "Prompt with arguments: arg1='hello', arg2='world'"
            completion = await client.complete(
                {"type": "ref/prompt", "name": "test_prompt_with_arguments"}, "arg1", "par"
            )
            assert completion == {"values": ["paris", "park", "party"]}

            with pytest.raises(MCPError) as caught:
                await client.read_resource("test://nonexistent-resource-for-conformance-testing")
            assert caught.value.code == (-32602 if era == MODERN else -32002)
    # test_sampling: 1 sampling; multiple_inputs: 1 of each (concurrent in legacy); multi_round: 2 elicitations.
    assert sorted(method for method, _ in recorder.asked) == ["elicitation/create"] * 3 + ["sampling/createMessage"] * 2


async def test_modern_errors_over_stdio():
    with anyio.fail_after(SPAWN):
        async with connect_stdio(STDIO_COMMAND, protocol_version=MODERN) as client:
            with pytest.raises(MCPError) as caught:
                await raw(client, "tools/call", {"name": "test_missing_capability", "arguments": {}}, capabilities={})
            assert (caught.value.code, caught.value.data) == (-32021, {"requiredCapabilities": {"sampling": {}}})

            first = await raw(
                client, "tools/call", {"name": "test_input_required_result_tampered_state", "arguments": {}}
            )
            assert first["resultType"] == "input_required"
            retry = {
                "name": "test_input_required_result_tampered_state",
                "arguments": {},
                "inputResponses": {"confirm": elicit_answer(ok=True)},
            }
            with pytest.raises(MCPError) as caught:
                await raw(client, "tools/call", {**retry, "requestState": first["requestState"] + "-TAMPERED"})
            assert caught.value.code == -32602
            done = await raw(client, "tools/call", {**retry, "requestState": first["requestState"]})
            assert only_text(done) == "integrity-ok: state verified"

            for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe"):
                with pytest.raises(MCPError) as caught:
                    await raw(client, method, {})
                assert caught.value.code == -32601, method


async def test_legacy_logging_over_stdio():
    recorder = Recorder()
    with anyio.fail_after(SPAWN):
        async with connect_stdio(STDIO_COMMAND, on_notification=recorder.on_notification) as client:
            assert client.protocol_version == LEGACY
            await client.set_logging_level("debug")
            with anyio.fail_after(QUICK):
                assert (
                    only_text(await client.call_tool("test_tool_with_logging", {}))
                    == "Tool with logging executed successfully"
                )
    assert [params["data"] for params in recorder.params_of("notifications/message")] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


# ------------------------------------------------------------------------------------- command line


DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    },
}


def run(args=(), env=None, stdin=""):
    return subprocess.run(
        [*STDIO_COMMAND, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=SPAWN,
        env={**os.environ, **(env or {})},
        check=False,
    )


def test_help_names_the_program_and_the_environment():
    done = run(["--help"])
    assert done.returncode == 0
    assert done.stdout.startswith("usage: plainmcp-everything")
    assert "PLAINMCP_EVERYTHING_LOG_LEVEL" in done.stdout


def test_one_request_on_stdin_one_line_on_stdout_logs_on_stderr():
    done = run(stdin=json.dumps(DISCOVER) + "\n")
    assert done.returncode == 0
    (line,) = done.stdout.splitlines()
    response = json.loads(line)
    assert response["id"] == 1
    assert response["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "plainmcp-everything"
    assert "plainmcp-everything 0.1.0 serving on stdio" in done.stderr


def test_environment_sets_the_log_format():
    done = run(env={"PLAINMCP_EVERYTHING_LOG_FORMAT": "json"}, stdin=json.dumps(DISCOVER) + "\n")
    assert done.returncode == 0
    entries = [json.loads(line) for line in done.stderr.splitlines()]
    assert {
        "level": "info",
        "logger": "plainmcp.command_line",
        "message": "plainmcp-everything 0.1.0 serving on stdio",
    }.items() <= entries[0].items()


def test_a_flag_wins_over_the_environment():
    done = run(["--log-level", "error"], env={"PLAINMCP_EVERYTHING_LOG_LEVEL": "debug"}, stdin="")
    assert done.returncode == 0
    assert done.stderr == ""


def test_console_script_is_installed():
    script = os.path.join(os.path.dirname(sys.executable), "plainmcp-everything")
    done = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=SPAWN, check=False)
    assert done.returncode == 0 and "plainmcp-everything" in done.stdout
