"""``plainmcp config``: the snippet each client wants, naming the installed command by absolute path."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
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
    ran = plainmcp(
        "config",
        "everything",
        "--client",
        "vscode",
        "--name",
        "fixture",
        "--env",
        "PLAINMCP_EVERYTHING_LOG_LEVEL=debug",
    )
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
        (
            "vscode",
            {
                "inputs": [
                    {
                        "type": "promptString",
                        "id": "remote-token",
                        "password": True,
                        "description": "Bearer token for the remote MCP server",
                    }
                ],
                "servers": {
                    "remote": {
                        "type": "http",
                        "url": "http://127.0.0.1:8000/mcp",
                        "headers": {"Authorization": "Bearer ${input:remote-token}"},
                    }
                },
            },
        ),
        (
            "cursor",
            {"mcpServers": {"remote": {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer t"}}}},
        ),
        (
            "claude",
            {
                "mcpServers": {
                    "remote": {
                        "command": "npx",
                        "args": ["-y", "mcp-remote", "http://127.0.0.1:8000/mcp", "--header", "Authorization:Bearer t"],
                    }
                }
            },
        ),
    ],
)
def test_config_http_form_for_a_running_server(client, expected) -> None:
    ran = plainmcp(
        "config",
        "remote",
        "--client",
        client,
        "--http",
        "http://127.0.0.1:8000/mcp",
        "--header",
        "Authorization: Bearer t",
    )
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
    result = subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", "config", "./my-server", "--client", "claude"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 0, result.stderr
    assert '"command": "' + str(script.resolve()) + '"' in result.stdout
    assert '"my-server": {' in result.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ("everything",),
        ("everything", "--client", "emacs"),
        ("everything", "--client", "claude", "--http", "ftp://x"),
        ("everything", "--client", "claude", "--header", "A: b"),
        ("everything", "--client", "claude", "--env", "X"),
    ],
)
def test_config_usage_errors_exit_2(argv) -> None:
    assert plainmcp("config", *argv).code == 2


# ------------------------------------------------------------------ path arguments


def config_in(cwd, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", "config", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def test_config_makes_relative_path_arguments_absolute(tmp_path) -> None:
    ran = config_in(
        tmp_path,
        "sqlite",
        "--client",
        "claude",
        "--explain",
        "--allow-missing",  # rewriting only: the path need not exist here
        "--",
        "--db",
        "shop.db",
        "--log-level",
        "debug",
        "--max-rows",
        "5",
    )
    assert ran.returncode == 0, ran.stderr
    args = json.loads(ran.stdout)["mcpServers"]["sqlite"]["args"]
    assert args == ["--db", str(tmp_path / "shop.db"), "--log-level", "debug", "--max-rows", "5"]
    assert f"made absolute: shop.db -> {tmp_path / 'shop.db'}" in ran.stderr


def test_config_makes_relative_directories_absolute_for_each_client(tmp_path) -> None:
    for client, key in (("claude", "mcpServers"), ("cursor", "mcpServers"), ("vscode", "servers")):
        ran = config_in(
            tmp_path,
            "filesystem",
            "--client",
            client,
            "--allow-missing",
            "--",
            "./notes",
            "--allow-write",
            "docs/../src",
            "/srv/data",
            "--max-entries",
            "50",
        )
        assert ran.returncode == 0, ran.stderr
        entry = json.loads(ran.stdout)[key]["filesystem"]
        # --allow-write is a switch (the server's usage says so): the directory after it is a directory.
        assert entry["args"] == [
            str(tmp_path / "notes"),
            "--allow-write",
            str(tmp_path / "src"),
            "/srv/data",
            "--max-entries",
            "50",
        ]


def test_config_equals_form_and_prompt_dirs(tmp_path) -> None:
    ran = config_in(
        tmp_path, "prompts", "--client", "cursor", "--allow-missing", "--", "--dir=mine", "--dir", "team/prompts"
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["mcpServers"]["prompts"]["args"] == [
        f"--dir={tmp_path / 'mine'}",
        "--dir",
        str(tmp_path / "team" / "prompts"),
    ]


def _home_with_files(home) -> None:
    home.mkdir()
    with sqlite3.connect(home / "shop.db") as db:
        db.execute("create table fruits (name text)")
    (home / "notes").mkdir()
    (home / "prompts").mkdir()
    (home / "prompts" / "greet-someone.md").write_text("---\ndescription: Greet someone\n---\nSay hello.\n")


@pytest.mark.parametrize(
    ("server", "server_args", "operation", "expected"),
    [
        ("sqlite", ["--db", "~/shop.db"], ["call", "list_tables"], "fruits"),
        ("filesystem", ["~/notes"], ["call", "list_allowed_directories"], "{home}/notes"),
        ("prompts", ["--no-bundled", "--dir", "~/prompts"], ["inspect"], "greet-someone"),
    ],
)
def test_config_keeps_home_and_each_server_expands_it(tmp_path, server, server_args, operation, expected) -> None:
    """A leading ~ stays in the snippet, and the server started from the snippet (by a client, with no
    shell to expand it) reads it as the home directory."""
    home = tmp_path / "home"
    _home_with_files(home)
    ran = config_in(tmp_path, server, "--client", "claude", "--", *server_args, env={"HOME": str(home)})
    assert ran.returncode == 0, ran.stderr
    entry = json.loads(ran.stdout)["mcpServers"][server]
    assert entry["args"] == server_args
    started = subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", *operation, "--", entry["command"], *entry["args"]],
        cwd="/",
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**os.environ, "HOME": str(home)},
    )
    assert started.returncode == 0, started.stderr
    assert expected.format(home=home) in started.stdout


# ------------------------------------------------------------------ secrets


def test_config_vscode_secret_becomes_a_password_input(monkeypatch) -> None:
    ran = plainmcp(
        "config",
        "weather",
        "--client",
        "vscode",
        "--secret",
        "PLAINMCP_WEATHER_OPEN_METEO_API_KEY",
        "--env",
        "PLAINMCP_WEATHER_LANGUAGE=fr",
    )
    assert ran.code == 0, ran.err
    snippet = ran.json()
    assert snippet["inputs"] == [
        {
            "type": "promptString",
            "id": "weather-open-meteo-api-key",
            "password": True,
            "description": "PLAINMCP_WEATHER_OPEN_METEO_API_KEY for the weather MCP server",
        }
    ]
    assert snippet["servers"]["weather"]["env"] == {
        "PLAINMCP_WEATHER_LANGUAGE": "fr",
        "PLAINMCP_WEATHER_OPEN_METEO_API_KEY": "${input:weather-open-meteo-api-key}",
    }
    assert "warning" not in ran.err  # both names are the server's own


def test_config_vscode_secret_given_with_env_is_not_written() -> None:
    ran = plainmcp("config", "weather", "--client", "vscode", "--env", "PLAINMCP_WEATHER_OPEN_METEO_API_KEY=s3cr3t")
    assert ran.code == 0, ran.err
    assert "s3cr3t" not in ran.out
    assert ran.json()["servers"]["weather"]["env"]["PLAINMCP_WEATHER_OPEN_METEO_API_KEY"] == (
        "${input:weather-open-meteo-api-key}"
    )


def test_config_claude_secret_is_taken_from_the_environment() -> None:
    name = "PLAINMCP_WEATHER_OPEN_METEO_API_KEY"
    ran = plainmcp("config", "weather", "--client", "claude", "--secret", name, env={name: "k-123"})
    assert ran.code == 0, ran.err
    assert ran.json() == {
        "mcpServers": {
            "weather": {"command": ran.json()["mcpServers"]["weather"]["command"], "args": [], "env": {name: "k-123"}}
        }
    }
    missing = plainmcp("config", "weather", "--client", "cursor", "--secret", "PLAINMCP_NOT_SET_ANYWHERE")
    assert missing.code == 2
    assert "set PLAINMCP_NOT_SET_ANYWHERE in this shell" in missing.err


def test_config_vscode_credential_header_is_prompted_and_others_kept() -> None:
    ran = plainmcp(
        "config",
        "remote",
        "--client",
        "vscode",
        "--http",
        "https://mcp.example/mcp",
        "--header",
        "X-API-Key: abc",
        "--header",
        "X-Team: blue",
    )
    assert ran.code == 0, ran.err
    snippet = ran.json()
    assert snippet["servers"]["remote"]["headers"] == {"X-API-Key": "${input:remote-x-api-key}", "X-Team": "blue"}
    assert [i["id"] for i in snippet["inputs"]] == ["remote-x-api-key"]
    assert all(i["password"] is True and i["type"] == "promptString" for i in snippet["inputs"])


def test_config_warns_about_an_environment_variable_the_server_does_not_read() -> None:
    ran = plainmcp("config", "weather", "--client", "claude", "--env", "PLAINMCP_WEATHER_API_KEY=x")
    assert ran.code == 0, ran.err
    assert "warning: plainmcp-weather does not name PLAINMCP_WEATHER_API_KEY in its --help" in ran.err


@pytest.mark.parametrize("client", ["vscode", "claude"])
def test_config_moves_a_secret_option_off_the_command_line(client) -> None:
    # The weather server reads --open-meteo-api-key also as PLAINMCP_WEATHER_OPEN_METEO_API_KEY (its --help says so).
    ran = plainmcp("config", "weather", "--client", client, "--", "--open-meteo-api-key", "k-42", "--language", "fr")
    assert ran.code == 0, ran.err
    snippet = ran.json()
    entry = snippet["servers" if client == "vscode" else "mcpServers"]["weather"]
    assert entry["args"] == ["--language", "fr"]
    variable = "PLAINMCP_WEATHER_OPEN_METEO_API_KEY"
    if client == "vscode":
        assert entry["env"] == {variable: "${input:weather-open-meteo-api-key}"}
        assert "k-42" not in ran.out
    else:
        assert entry["env"] == {variable: "k-42"}
    assert f"moved to the environment as {variable}" in ran.err
