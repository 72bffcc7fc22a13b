"""The official MCP Inspector CLI (``@modelcontextprotocol/inspector`` 2.12.0) as the client, over stdio.

Each test runs ``mcp-inspector --cli <server command> [--] --method ... --format json -q`` as a
subprocess against a plainmcp server and asserts exact values from its JSON output, in both protocol
eras: ``--protocol-era legacy`` (initialize handshake, 2025-11-25) and ``--protocol-era modern``
(stateless, 2026-07-28); ``auto`` once. Expected values come from the MCP specification and the
fixture's declarations (tests/fixtures/feature_server.py), not from the server's code.

The Inspector v2 needs Node >= 22.19; ``tools/node_tools.py`` installs the pinned Node and Inspector
into .ci-cache/node, and ``python3 dev.py test`` runs it and passes the paths in ``PLAINMCP_INSPECTOR``
and ``PLAINMCP_NODE_BIN``. Without them the tests fail (they never skip): CI must exercise them.

Inspector exit codes: 0 ok, 1 error (e.g. a JSON-RPC error), 5 the tool returned ``isError`` (or is
unknown). With ``--format json`` the result is ``{"result": ...}`` on stdout and an error is
``{"error": {"code", "message"}}`` on stderr.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .http_server import InspectorRun, node_tools

pytestmark = pytest.mark.interop

ROOT = Path(__file__).resolve().parents[2]
FEATURE_SERVER = [sys.executable, str(ROOT / "tests" / "fixtures" / "feature_server.py")]
NOTES_SERVER = [sys.executable, "-m", "plainmcp.examples.notes"]

#: Bound for one Inspector run: starting Node and the Python server, connecting, one request.
RUN_TIMEOUT = 60.0
CONNECT_TIMEOUT_MS = 20000

ERA_VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"

SERVER_INFO = {
    "name": "feature-server",
    "title": "Feature server",
    "version": "1.2.3",
    "websiteUrl": "https://example.invalid/feature-server",
    "description": "One of everything",
}
CAPABILITIES = {
    "logging": {},
    "completions": {},
    "prompts": {"listChanged": True},
    "resources": {"subscribe": True, "listChanged": True},
    "tools": {"listChanged": True},
}
TOOL_NAMES = [
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
]


# ------------------------------------------------------------------------------------ harness


class Inspector:
    def __init__(self, executable: Path, env: dict[str, str]) -> None:
        self.executable = executable
        self.env = env

    def run(self, server: list[str], *args: str, era: str | None = None, expect: int = 0) -> InspectorRun:
        """Run ``mcp-inspector --cli <server> [--] [--protocol-era era] <args> --format json -q``.

        ``--`` ends the server command when it has flags of its own (otherwise the Inspector might
        take them for its own options).
        """
        separator = ["--"] if any(arg.startswith("-") for arg in server[1:]) else []
        era_args = ["--protocol-era", era] if era else []
        command = [
            str(self.executable),
            "--cli",
            *server,
            *separator,
            *era_args,
            *args,
            "--connect-timeout",
            str(CONNECT_TIMEOUT_MS),
            "--format",
            "json",
            "-q",
        ]
        try:
            done = subprocess.run(
                command,
                env=self.env,
                cwd=ROOT,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=RUN_TIMEOUT,
            )
        except subprocess.TimeoutExpired as timeout:
            pytest.fail(f"the Inspector did not finish within {RUN_TIMEOUT}s: {command}\n{timeout.stderr!r}")
        run = InspectorRun(command, done.returncode, done.stdout, done.stderr)
        assert run.returncode == expect, f"expected exit code {expect}\n{run.describe()}"
        return run


@pytest.fixture(scope="module")
def inspector(tmp_path_factory) -> Inspector:
    tools = node_tools()  # fails, never skips, without Node >= 22.19 and the Inspector
    return Inspector(tools.inspector, tools.env(tmp_path_factory.mktemp("inspector-home")))


@pytest.fixture(params=["legacy", "modern"])
def era(request) -> str:
    return request.param


def only_text(result: dict[str, Any]) -> str:
    content = result["content"]
    assert len(content) == 1 and content[0]["type"] == "text", result
    return content[0]["text"]


# ------------------------------------------------------------------------------------ lifecycle


def test_initialize_reports_the_era_version_and_describes_the_server(inspector, era):
    result = inspector.run(FEATURE_SERVER, "--method", "initialize", era=era).result
    assert result["protocolVersion"] == ERA_VERSIONS[era]
    assert result["serverInfo"] == SERVER_INFO
    assert result["capabilities"] == CAPABILITIES
    assert result["instructions"] == "Use echo to test."


def test_auto_era_picks_the_modern_protocol(inspector):
    # The server offers 2026-07-28 in server/discover, so auto must not fall back to initialize.
    result = inspector.run(FEATURE_SERVER, "--method", "initialize", era="auto").result
    assert result["protocolVersion"] == "2026-07-28"
    assert result["serverInfo"] == SERVER_INFO


def test_modern_results_carry_server_info_and_legacy_results_do_not(inspector, era):
    """Proof that the requested era was served: 2026-07-28 results name the server in _meta (SHOULD)."""
    result = inspector.run(
        FEATURE_SERVER, "--method", "tools/call", "--tool-name", "echo", "--tool-args-json", '{"text":"era"}', era=era
    ).result
    meta = result.get("_meta", {})
    if era == "modern":
        assert meta[SERVER_INFO_KEY] == {
            "name": SERVER_INFO["name"],
            "version": SERVER_INFO["version"],
        }  # discover has the rest
    else:
        assert SERVER_INFO_KEY not in meta, result


# ------------------------------------------------------------------------------------ tools


def test_tools_list_names_every_tool(inspector, era):
    tools = inspector.run(FEATURE_SERVER, "--method", "tools/list", era=era).result["tools"]
    names = [tool["name"] for tool in tools]
    assert sorted(names) == sorted(TOOL_NAMES)  # each exactly once
    by_name = {tool["name"]: tool for tool in tools}
    assert by_name["echo"]["inputSchema"] == {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1}},
        "required": ["text"],
        "additionalProperties": False,
    }
    assert by_name["echo"]["annotations"] == {"readOnlyHint": True}
    assert by_name["add"]["title"] == "Add two numbers"
    assert by_name["add"]["outputSchema"] == {
        "type": "object",
        "properties": {"sum": {"type": "number"}},
        "required": ["sum"],
    }
    for tool in tools:
        assert tool["inputSchema"]["type"] == "object", tool
        assert tool["description"], tool


def test_tools_call_echo_returns_the_text(inspector, era):
    result = inspector.run(
        FEATURE_SERVER, "--method", "tools/call", "--tool-name", "echo", "--tool-args-json", '{"text":"hi"}', era=era
    ).result
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result.get("isError", False) is False


def test_tools_call_add_returns_structured_content(inspector, era):
    result = inspector.run(
        FEATURE_SERVER, "--method", "tools/call", "--tool-name", "add", "--tool-args-json", '{"a":1,"b":2}', era=era
    ).result
    assert result["structuredContent"] == {"sum": 3}
    assert json.loads(only_text(result)) == {"sum": 3}  # mirrored as text for clients without structured content
    assert result.get("isError", False) is False


def test_tools_call_fail_is_a_tool_error_exit_5(inspector, era):
    run = inspector.run(FEATURE_SERVER, "--method", "tools/call", "--tool-name", "fail", era=era, expect=5)
    assert run.result["isError"] is True
    assert only_text(run.result) == "The widget is out of stock; try another widget."
    assert run.error["code"] == "tool_is_error"


# ------------------------------------------------------------------------------------ resources


def test_resources_list(inspector, era):
    resources = inspector.run(FEATURE_SERVER, "--method", "resources/list", era=era).result["resources"]
    assert sorted(resources, key=lambda resource: resource["uri"]) == [
        {"uri": "test://binary", "name": "binary", "mimeType": "image/png"},
        {"uri": "test://static", "name": "static", "description": "A static text", "mimeType": "text/plain"},
    ]


def test_resources_read_static_text(inspector, era):
    result = inspector.run(FEATURE_SERVER, "--method", "resources/read", "--uri", "test://static", era=era).result
    assert result["contents"] == [{"uri": "test://static", "mimeType": "text/plain", "text": "static text"}]


def test_resources_read_through_a_template(inspector, era):
    result = inspector.run(FEATURE_SERVER, "--method", "resources/read", "--uri", "test://items/apple", era=era).result
    [contents] = result["contents"]
    assert (contents["uri"], contents["mimeType"]) == ("test://items/apple", "application/json")
    assert json.loads(contents["text"]) == {"id": "apple"}


def test_resources_read_missing_is_an_error(inspector, era):
    # Not found is a JSON-RPC error in both eras (-32002 legacy, -32602 modern), never empty contents.
    # The Inspector reports JSON-RPC errors with exit code 1 and does not show the numeric code.
    run = inspector.run(
        FEATURE_SERVER, "--method", "resources/read", "--uri", "test://items/missing", era=era, expect=1
    )
    assert run.stdout == ""
    assert "test://items/missing" in run.error["message"]


def test_resources_templates_list(inspector, era):
    result = inspector.run(FEATURE_SERVER, "--method", "resources/templates/list", era=era).result
    assert result["resourceTemplates"] == [
        {
            "uriTemplate": "test://items/{id}",
            "name": "item",
            "description": "An item by id.",
            "mimeType": "application/json",
        }
    ]


# ------------------------------------------------------------------------------------ prompts


def test_prompts_list(inspector, era):
    prompts = inspector.run(FEATURE_SERVER, "--method", "prompts/list", era=era).result["prompts"]
    assert sorted(prompts, key=lambda prompt: prompt["name"]) == [
        {"name": "simple", "description": "A prompt without arguments."},
        {
            "name": "write",
            "description": "Write about a topic.",
            "arguments": [
                {"name": "topic", "description": "What to write about", "required": True},
                {"name": "tone", "description": "How to sound"},
            ],
        },
    ]


def test_prompts_get_write_with_topic(inspector, era):
    result = inspector.run(
        FEATURE_SERVER, "--method", "prompts/get", "--prompt-name", "write", "--prompt-args", "topic=x", era=era
    ).result
    assert result["description"] == "Write about a topic."
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Write about x in a neutral tone."}},
        {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
    ]


def test_prompts_get_with_every_argument(inspector, era):
    result = inspector.run(
        FEATURE_SERVER,
        "--method",
        "prompts/get",
        "--prompt-name",
        "write",
        "--prompt-args",
        "topic=rust",
        "tone=formal",
        era=era,
    ).result
    assert result["messages"][0] == {
        "role": "user",
        "content": {"type": "text", "text": "Write about rust in a formal tone."},
    }


# ------------------------------------------------------------------------------------ server commands with flags


def test_server_command_with_its_own_flags_after_separator(inspector, era):
    server = [*FEATURE_SERVER, "--max-message-bytes", "1000000"]
    result = inspector.run(
        server, "--method", "tools/call", "--tool-name", "echo", "--tool-args-json", '{"text":"flags"}', era=era
    ).result
    assert result["content"] == [{"type": "text", "text": "flags"}]


def test_notes_example_lists_its_tools(inspector, era):
    tools = inspector.run(NOTES_SERVER, "--method", "tools/list", era=era).result["tools"]
    assert sorted(tool["name"] for tool in tools) == ["add_note", "search_notes"]
