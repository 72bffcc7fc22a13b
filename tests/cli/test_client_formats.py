"""Every client format, started as that client starts it: the snippet parsed in the client's own format
(JSON, TOML, YAML, a ``claude mcp add`` line, an install link), its command, args and env run under a
desktop client's minimal PATH from another working directory, and an ``initialize`` answered."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from plainmcp.cli.clients import CLIENTS

from .client_formats import launch_of
from .support import plainmcp

BIN = Path(sys.executable).parent
MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"
#: (client, --as): every client in its default form, and the other forms.
FORMS = [(client, None) for client in CLIENTS] + [("claude-code", "file"), ("vscode", "link"), ("cursor", "link")]


def initialize(command: str, args: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Start the server as a desktop client does (minimal PATH, the snippet's env, its own working
    directory) and return its answer to ``initialize``."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    ran = subprocess.run(
        [command, *args],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        env={"PATH": MINIMAL_PATH, "HOME": os.environ.get("HOME", "/"), **env},
    )
    assert ran.stdout, ran.stderr
    return json.loads(ran.stdout.splitlines()[0])


@pytest.fixture(scope="module")
def shop(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("shop")
    with sqlite3.connect(folder / "shop.db") as db:
        db.execute("create table items (name text)")
    return folder


def _printed(how: str, client: str, form: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    chosen = ["--client", client, *(["--as", form] if form else [])]
    if how == "server":  # the server's own subcommand, by the console script
        command = [str(BIN / "plainmcp-sqlite"), "config", *chosen]
    else:
        command = [sys.executable, "-m", "plainmcp.cli", "config", "sqlite", *chosen]
    return subprocess.run(
        [*command, "--", "--db", "shop.db"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("how", ["server", "plainmcp"])
@pytest.mark.parametrize(("client", "form"), FORMS)
def test_config_snippet_starts_as_the_client_starts_it(how, client, form, shop, tmp_path) -> None:
    printed = _printed(how, client, form, shop)
    assert printed.returncode == 0, printed.stderr
    command, args, env = launch_of(client, form, printed.stdout, "sqlite")
    assert os.path.isabs(command)
    assert str(shop / "shop.db") in args  # the relative path made absolute
    answer = initialize(command, args, env, tmp_path)
    assert answer["result"]["serverInfo"]["name"] == "plainmcp-sqlite"


def test_server_config_names_the_running_executable() -> None:
    ran = subprocess.run(
        [str(BIN / "plainmcp-everything"), "config", "--client", "claude"], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == {
        "mcpServers": {"everything": {"command": str(BIN / "plainmcp-everything"), "args": []}}
    }


def test_server_config_as_module_names_python_and_the_module(tmp_path) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "plainmcp_filesystem", "config", "--client", "cursor", "--", "."],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    entry = json.loads(ran.stdout)["mcpServers"]["filesystem"]
    assert entry == {"command": sys.executable, "args": ["-m", "plainmcp_filesystem", str(tmp_path)]}


@pytest.mark.parametrize("how", ["server", "plainmcp"])
def test_config_missing_path_exits_3_unless_allowed(how, tmp_path) -> None:
    if how == "server":
        base = [str(BIN / "plainmcp-sqlite"), "config", "--client", "claude"]
    else:
        base = [sys.executable, "-m", "plainmcp.cli", "config", "sqlite", "--client", "claude"]
    refused = subprocess.run([*base, "--", "--db", "typo.db"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert refused.returncode == 3
    assert refused.stdout == ""
    assert f"{tmp_path / 'typo.db'}: no such file or directory" in refused.stderr
    assert "--allow-missing" in refused.stderr
    allowed = subprocess.run(
        [*base, "--allow-missing", "--", "--db", "typo.db"], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert allowed.returncode == 0, allowed.stderr
    assert json.loads(allowed.stdout)["mcpServers"]["sqlite"]["args"] == ["--db", str(tmp_path / "typo.db")]


def test_config_link_refuses_to_carry_a_secret() -> None:
    ran = plainmcp("config", "everything", "--client", "cursor", "--as", "link", "--env", "X_API_KEY=k")
    assert ran.code == 2
    assert "link would carry" in ran.err and ran.out == ""


def test_config_form_the_client_does_not_take_is_a_usage_error() -> None:
    ran = plainmcp("config", "everything", "--client", "zed", "--as", "link")
    assert ran.code == 2
    assert "zed takes file" in ran.err


@pytest.mark.parametrize(
    ("client", "expected"),
    [
        (
            "claude-code",
            "claude mcp add --transport http --header 'Authorization: Bearer t' remote http://127.0.0.1:8/mcp",
        ),
        (
            "codex",
            '[mcp_servers.remote]\nurl = "http://127.0.0.1:8/mcp"\nhttp_headers = { "Authorization" = "Bearer t" }',
        ),
    ],
)
def test_config_http_form_for_command_and_toml_clients(client, expected) -> None:
    ran = plainmcp(
        "config",
        "remote",
        "--client",
        client,
        "--http",
        "http://127.0.0.1:8/mcp",
        "--header",
        "Authorization: Bearer t",
    )
    assert ran.code == 0, ran.err
    assert ran.out.strip() == expected


@pytest.mark.parametrize(("client", "key"), [("windsurf", "serverUrl"), ("gemini", "httpUrl"), ("zed", "url")])
def test_config_http_form_uses_each_clients_url_key(client, key) -> None:
    ran = plainmcp("config", "remote", "--client", client, "--http", "http://127.0.0.1:8/mcp")
    assert ran.code == 0, ran.err
    (entry,) = next(iter(ran.json().values())).values()
    assert entry == {key: "http://127.0.0.1:8/mcp"}


@pytest.mark.parametrize("client", CLIENTS)
def test_config_env_reaches_the_server_in_every_format(client, shop, tmp_path) -> None:
    printed = subprocess.run(
        [str(BIN / "plainmcp-sqlite"), "config", "--client", client, "--env", "PLAINMCP_SQLITE_LOG_LEVEL=debug"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=shop,
        stdin=subprocess.DEVNULL,
    )
    assert printed.returncode == 0, printed.stderr
    command, args, env = launch_of(client, None, printed.stdout, "sqlite")
    assert env == {"PLAINMCP_SQLITE_LOG_LEVEL": "debug"}
    started = subprocess.run(
        [command, *args],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={"PATH": MINIMAL_PATH, "HOME": os.environ.get("HOME", "/"), **env},
    )
    assert " DEBUG " in started.stderr  # the variable from the snippet set the server's log level
