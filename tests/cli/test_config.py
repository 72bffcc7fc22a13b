"""``plainmcp config``: the snippet each client wants, naming the installed command by absolute path."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .support import plainmcp

INSTALLED = shutil.which("plainmcp-everything") or str(Path(sys.executable).parent / "plainmcp-everything")


def test_config_claude_names_the_installed_command_by_absolute_path() -> None:
    ran = plainmcp("config", "everything", "--client", "claude", "--", "--log-level", "debug")
    assert ran.code == 0, ran.err
    entry = ran.json()["mcpServers"]["everything"]
    assert entry == {"command": entry["command"], "args": ["--log-level", "debug"]}
    assert os.path.isabs(entry["command"])
    assert Path(entry["command"]).samefile(INSTALLED)
    assert "claude_desktop_config.json" in ran.err


def test_config_found_next_to_python_when_not_on_path() -> None:
    ran = plainmcp("config", "plainmcp-everything", "--client", "cursor", env={"PATH": "/nonexistent"})
    assert ran.code == 0, ran.err
    assert Path(ran.json()["mcpServers"]["everything"]["command"]).samefile(INSTALLED)


def test_config_vscode_uses_servers_with_type_stdio_and_env() -> None:
    ran = plainmcp("config", "everything", "--client", "vscode", "--name", "fixture",
                   "--env", "PLAINMCP_EVERYTHING_LOG_LEVEL=debug")
    assert ran.code == 0, ran.err
    entry = ran.json()["servers"]["fixture"]
    assert (entry["type"], entry["args"], entry["env"]) == ("stdio", [], {"PLAINMCP_EVERYTHING_LOG_LEVEL": "debug"})


def test_config_snippet_starts_a_server_that_answers() -> None:
    entry = plainmcp("config", "everything", "--client", "cursor").json()["mcpServers"]["everything"]
    ran = plainmcp("inspect", "--json", "--", entry["command"], *entry["args"])
    assert ran.code == 0, ran.err
    assert ran.json()["serverInfo"]["name"] == "plainmcp-everything"


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        # VS Code prompts for the token and keeps it in its secret storage: the file never holds it.
        ("vscode", {"inputs": [{"type": "promptString", "id": "remote-token", "password": True,
                                "description": "Bearer token for the remote MCP server"}],
                    "servers": {"remote": {"type": "http", "url": "http://127.0.0.1:8000/mcp",
                                           "headers": {"Authorization": "Bearer ${input:remote-token}"}}}}),
        ("cursor", {"mcpServers": {"remote": {"url": "http://127.0.0.1:8000/mcp",
                                              "headers": {"Authorization": "Bearer t"}}}}),
        ("claude", {"mcpServers": {"remote": {"command": "npx", "args": [
            "-y", "mcp-remote", "http://127.0.0.1:8000/mcp", "--header", "Authorization:Bearer t"]}}}),
    ],
)
def test_config_http_form_for_a_running_server(client, expected) -> None:
    ran = plainmcp("config", "remote", "--client", client, "--http", "http://127.0.0.1:8000/mcp",
                   "--header", "Authorization: Bearer t")
    assert ran.code == 0, ran.err
    assert ran.json() == expected


def test_config_server_not_installed_exits_1_with_install_hint() -> None:
    ran = plainmcp("config", "no-such-thing", "--client", "claude")
    assert ran.code == 1
    assert "plainmcp-no-such-thing is not installed" in ran.err
    assert "pipx install plainmcp-no-such-thing" in ran.err
    assert ran.out == ""


def test_config_path_to_any_executable_is_made_absolute(tmp_path) -> None:
    script = tmp_path / "my-server"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    result = subprocess.run([sys.executable, "-m", "plainmcp.cli", "config", "./my-server", "--client", "claude"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert '"command": "' + str(script.resolve()) + '"' in result.stdout
    assert '"my-server": {' in result.stdout


@pytest.mark.parametrize(
    "argv",
    [("everything",), ("everything", "--client", "zed"), ("everything", "--client", "claude", "--http", "ftp://x"),
     ("everything", "--client", "claude", "--header", "A: b"), ("everything", "--client", "claude", "--env", "X")],
)
def test_config_usage_errors_exit_2(argv) -> None:
    assert plainmcp("config", *argv).code == 2
