"""The official MCP Inspector CLI (``@modelcontextprotocol/inspector`` 2.12.0) as the client of
``plainmcp-everything`` over HTTP.

Three ways in, against one real server process (``--transport http``) on 127.0.0.1:

- ``--transport http`` to ``.../mcp`` with ``--protocol-era legacy`` (initialize, a session, 2025-11-25);
- ``--transport http`` to ``.../mcp`` with ``--protocol-era modern`` (stateless, 2026-07-28);
- ``--transport sse`` to ``.../sse`` (the 2024-11-05 HTTP+SSE transport; legacy era).

Each test runs ``mcp-inspector --cli <url> --transport ... --method ... --format json -q`` and asserts
exact values from its JSON output (``{"result": ...}`` on stdout). Expected values are the fixture's
declarations (servers/everything/README.md). The Inspector and Node come from tools/node_tools.py
(``http_server.node_tools``); without them the tests fail, never skip.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Any

import pytest

from tests.servers.everything.support import TOOLS

from .http_server import ROOT, InspectorRun, NodeTools, ServerProcess, node_tools, running_server

pytestmark = pytest.mark.interop

#: Bound for one Inspector run: starting Node, connecting, one request.
RUN_TIMEOUT = 60.0
CONNECT_TIMEOUT_MS = 20000

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {
    "name": "plainmcp-everything",
    "title": "Everything (MCP conformance fixture)",
    "version": "0.1.0",
    "description": "Every MCP feature, under the names the official conformance suite expects",
}
TOOL_NAMES = TOOLS
SIMPLE_TEXT = "This is a simple text response for testing."
STATIC_TEXT = "This is the content of the static text resource."
SIMPLE_PROMPT = "This is a simple prompt for testing."


@dataclass(frozen=True)
class Way:
    """How the Inspector reaches the server: transport, endpoint path, protocol era."""

    transport: str
    path: str
    era: str | None

    @property
    def modern(self) -> bool:
        return self.era == "modern"


WAYS = {
    "http-legacy": Way("http", "/mcp", "legacy"),
    "http-modern": Way("http", "/mcp", "modern"),
    "sse": Way("sse", "/sse", None),
}


class Inspector:
    def __init__(self, tools: NodeTools, env: dict[str, str], server: ServerProcess) -> None:
        self.tools = tools
        self.env = env
        self.server = server

    def run(self, way: Way, *args: str) -> InspectorRun:
        era = ["--protocol-era", way.era] if way.era else []
        command = [
            str(self.tools.inspector),
            "--cli",
            self.server.url(way.path),
            "--transport",
            way.transport,
            *era,
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
        assert run.returncode == 0, f"{run.describe()}\n{self.server.describe()}"
        return run


@pytest.fixture(scope="module")
def server():
    with running_server("http") as process:
        yield process
        process.assert_healthy()
        process.assert_clean_log()


@pytest.fixture(scope="module")
def inspector(server, tmp_path_factory) -> Inspector:
    tools = node_tools()
    home = tmp_path_factory.mktemp("inspector-http-home")
    return Inspector(tools, tools.env(home), server)


@pytest.fixture(params=list(WAYS))
def way(request) -> Way:
    return WAYS[request.param]


def assert_era(way: Way, result: dict[str, Any]) -> None:
    """Proof of the era that was served: 2026-07-28 results name the server in _meta, legacy ones do not."""
    if way.modern:
        assert result["_meta"] == {SERVER_INFO_KEY: {"name": SERVER_INFO["name"], "version": SERVER_INFO["version"]}}, (
            result
        )
    else:
        assert "_meta" not in result, result


def test_initialize_reports_the_era_version(inspector, way):
    result = inspector.run(way, "--method", "initialize").result
    assert result["protocolVersion"] == (MODERN if way.modern else LEGACY)
    assert result["serverInfo"] == SERVER_INFO


def test_tools_list(inspector, way):
    result = inspector.run(way, "--method", "tools/list").result
    names = [tool["name"] for tool in result["tools"]]
    assert sorted(names) == sorted(TOOL_NAMES)  # each exactly once
    assert "test_simple_text" in names
    (simple,) = [tool for tool in result["tools"] if tool["name"] == "test_simple_text"]
    assert simple["description"] == "Tests simple text content response"
    assert simple["inputSchema"]["type"] == "object"
    # (The Inspector gathers the listing's pages into a result of its own, without the server's _meta.)


def test_tools_call_simple_text(inspector, way):
    result = inspector.run(way, "--method", "tools/call", "--tool-name", "test_simple_text").result
    assert result["content"] == [{"type": "text", "text": SIMPLE_TEXT}]
    assert result.get("isError", False) is False
    assert_era(way, result)


def test_resources_read_static_text(inspector, way):
    result = inspector.run(way, "--method", "resources/read", "--uri", "test://static-text").result
    assert result["contents"] == [{"uri": "test://static-text", "mimeType": "text/plain", "text": STATIC_TEXT}]
    assert_era(way, result)


def test_prompts_get_simple_prompt(inspector, way):
    result = inspector.run(way, "--method", "prompts/get", "--prompt-name", "test_simple_prompt").result
    assert result["description"] == "A simple prompt without arguments"
    assert result["messages"] == [{"role": "user", "content": {"type": "text", "text": SIMPLE_PROMPT}}]
    assert_era(way, result)


def test_prompts_get_with_arguments(inspector, way):
    result = inspector.run(
        way,
        "--method",
        "prompts/get",
        "--prompt-name",
        "test_prompt_with_arguments",
        "--prompt-args",
        "arg1=a b",
        "arg2=c",
    ).result
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Prompt with arguments: arg1='a b', arg2='c'"}}
    ]
    assert_era(way, result)
