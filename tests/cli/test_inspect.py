"""``plainmcp inspect`` against real server processes: stdio, Streamable HTTP, HTTP+SSE, both eras."""

from __future__ import annotations

import sys

import pytest

from tests.e2e.http_server import server_process

from .support import EVERYTHING, FEATURE_SERVER, FEATURE_TARGET, plainmcp


@pytest.fixture(scope="module")
def everything_http():
    with server_process("--log-level", "warning") as server:
        yield server


def test_inspect_stdio_prints_info_capabilities_and_every_list() -> None:
    ran = plainmcp("inspect", FEATURE_TARGET)
    assert ran.code == 0, ran.err
    out = ran.out
    assert out.startswith("feature-server 1.2.3  (Feature server)\n")
    assert "capabilities: logging, completions, prompts (listChanged), resources (listChanged, subscribe)" in out
    assert "Use echo to test." in out
    assert "Tools (14)" in out
    assert "  echo  [read-only]\n    Return the text unchanged.\n    - text: string (required)\n" in out
    assert "    returns: sum: number (required)" in out
    assert "  test://static  static  [text/plain]\n    A static text" in out
    assert "Resource templates (1)\n  test://items/{id}  item  [application/json]" in out
    assert "    - topic (required) - What to write about\n    - tone - How to sound" in out


def test_inspect_json_after_double_dash_is_the_whole_picture() -> None:
    ran = plainmcp("inspect", "--json", "--era", "legacy", "--", *FEATURE_SERVER)
    assert ran.code == 0, ran.err
    info = ran.json()
    assert info["serverInfo"]["name"] == "feature-server"
    assert (info["protocolVersion"], info["era"], info["transport"]) == ("2025-11-25", "legacy", "stdio")
    assert [tool["name"] for tool in info["tools"]][:3] == ["echo", "add", "broken_output"]
    assert info["tools"][0]["inputSchema"]["required"] == ["text"]
    assert [r["uri"] for r in info["resources"]] == ["test://static", "test://binary"]
    assert [t["uriTemplate"] for t in info["resourceTemplates"]] == ["test://items/{id}"]
    assert [p["name"] for p in info["prompts"]] == ["write", "simple"]
    assert "errors" not in info


@pytest.mark.parametrize(
    ("argv", "version", "era"),
    [
        ((), "2026-07-28", "modern"),
        (("--era", "legacy"), "2025-11-25", "legacy"),
        (("--protocol-version", "2024-11-05"), "2024-11-05", "legacy"),
    ],
)
def test_inspect_era_is_detected_or_forced(argv, version, era) -> None:
    ran = plainmcp("inspect", "--json", *argv, "--", *EVERYTHING)
    assert ran.code == 0, ran.err
    info = ran.json()
    assert (info["protocolVersion"], info["era"]) == (version, era)
    assert info["serverInfo"]["name"] == "plainmcp-everything"


@pytest.mark.parametrize(
    ("path", "argv", "transport", "era"),
    [
        ("/mcp", (), "Streamable HTTP", "modern"),
        ("/mcp", ("--era", "legacy"), "Streamable HTTP", "legacy"),
        ("/sse", ("--era", "legacy"), "HTTP+SSE", "legacy"),
        ("/sse", ("--transport", "sse", "--protocol-version", "2024-11-05"), "HTTP+SSE", "legacy"),
    ],
)
def test_inspect_over_http_transports_and_eras(everything_http, path, argv, transport, era) -> None:
    ran = plainmcp("inspect", "--json", *argv, everything_http.base_url + path)
    assert ran.code == 0, ran.err
    info = ran.json()
    assert (info["transport"], info["era"]) == (transport, era)
    assert any(tool["name"] == "test_simple_text" for tool in info["tools"])


def test_inspect_unstartable_command_exits_1_with_one_line() -> None:
    ran = plainmcp("inspect", "no-such-mcp-server-here")
    assert ran.code == 1
    assert ran.err.strip() == "plainmcp: cannot start no-such-mcp-server-here: no such command"


def test_inspect_server_that_dies_shows_its_last_stderr_lines() -> None:
    script = "import sys; print('bad --db path', file=sys.stderr); sys.exit(2)"
    ran = plainmcp("inspect", "--", sys.executable, "-c", script)
    assert ran.code == 1
    assert "the server's last words on stderr:\n  bad --db path" in ran.err


def test_inspect_closed_port_exits_1() -> None:
    from tests.e2e.http_server import free_port

    ran = plainmcp("inspect", f"http://127.0.0.1:{free_port()}/mcp", "--timeout", "5")
    assert ran.code == 1
    assert ran.err.startswith("plainmcp: ")
    assert "Traceback" not in ran.err


def test_inspect_without_target_is_a_usage_error() -> None:
    ran = plainmcp("inspect")
    assert ran.code == 2
    assert "give a server command or URL" in ran.err
