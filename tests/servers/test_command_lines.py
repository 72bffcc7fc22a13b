"""Every server's command line is complete and consistent: ``--help`` works without a network or a
database, lists the options every server shares, and names the environment variable of every option
(clients such as Claude Desktop often pass only environment variables). Then every documented form,
through the installed console scripts: ``--version``, on/off switches that never swallow the next
word, bad and taken ports, "listening" only once bound, the dependency log cap, the weather stand-in."""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.http_server import stop_process

SERVERS = ["everything", "filesystem", "prompts", "sqlite", "weather"]
SHARED = ["--transport", "--host", "--port", "--log-level", "--log-format", "--allowed-host", "--auth-token"]


def help_text(name: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", f"plainmcp_{name}", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", SERVERS)
def test_help_lists_the_shared_options(name: str) -> None:
    text = help_text(name)
    assert text.startswith(f"usage: plainmcp-{name} ")
    for option in SHARED:
        assert option in text, option


@pytest.mark.parametrize("name", SERVERS)
def test_every_option_names_its_environment_variable(name: str) -> None:
    prefix = f"PLAINMCP_{name.upper()}_"
    blocks = re.split(r"\n(?=  -)", help_text(name))[1:]  # one block per option, its help included
    options = [block for block in blocks if not block.lstrip().startswith(("-h", "--version"))]
    assert len(options) >= len(SHARED)
    for block in options:
        assert f"[env: {prefix}" in " ".join(block.split()), block.splitlines()[0]


# ------------------------------------------------------------------ through the installed scripts
#
# Each test below runs a console script exactly as a user or a client starts it (.venv/bin/plainmcp-...).

BIN = Path(sys.executable).parent
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def script(name: str) -> str:
    path = BIN / name
    assert path.exists(), f"{path} is not installed: python3 dev.py setup"
    return str(path)


@dataclass
class Ran:
    code: int
    answers: dict[int, Any]
    err: str


def run_stdio(
    argv: list[str], *requests: dict[str, Any], env: dict[str, str] | None = None, cwd: Path | None = None
) -> Ran:
    """Start ``argv``, send initialize, initialized and ``requests`` (ids 1, 2, ...), close its
    input, and collect what it answered and logged."""
    lines = [INITIALIZE, INITIALIZED, *({"jsonrpc": "2.0", "id": n, **r} for n, r in enumerate(requests, 1))]
    done = subprocess.run(
        argv,
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    answers = {message["id"]: message for message in map(json.loads, done.stdout.splitlines()) if "id" in message}
    return Ran(done.returncode, answers, done.stderr)


def tool_names(ran: Ran, request_id: int) -> set[str]:
    return {tool["name"] for tool in ran.answers[request_id]["result"]["tools"]}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


LIST_TOOLS = {"method": "tools/list"}


@pytest.mark.parametrize("name", SERVERS)
def test_version_agrees_with_the_installed_distribution_and_server_info(name: str) -> None:
    dist = f"plainmcp-{name}"
    done = subprocess.run([script(dist), "--version"], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout, done.stderr) == (0, f"{dist} {version(dist)}\n", "")
    argv = [script(dist)] + (["--no-watch", str(Path.cwd())] if name == "filesystem" else [])
    info = run_stdio(argv).answers[0]["result"]["serverInfo"]
    assert (info["name"], info["version"]) == (dist, version(dist))


def test_plainmcp_command_version() -> None:
    done = subprocess.run([script("plainmcp"), "--version"], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, f"plainmcp {version('plainmcp')}\n")


# --------------------------------------------------------------------------- switches


def test_filesystem_allow_write_before_a_directory_serves_it_writable(tmp_path: Path) -> None:
    ran = run_stdio(
        [script("plainmcp-filesystem"), "--allow-write", str(tmp_path)],
        LIST_TOOLS,
        call("write_file", {"path": str(tmp_path / "new.txt"), "content": "hi"}),
    )
    assert ran.code == 0, ran.err
    assert "write_file" in tool_names(ran, 1)
    assert ran.answers[2]["result"].get("isError") is not True, ran.answers[2]
    assert (tmp_path / "new.txt").read_text() == "hi"


def test_filesystem_allow_write_with_two_directories_serves_both_writable(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    ran = run_stdio(
        [script("plainmcp-filesystem"), "--allow-write", str(first), str(second)],
        call("write_file", {"path": str(first / "x.txt"), "content": "in a"}),
        call("write_file", {"path": str(second / "y.txt"), "content": "in b"}),
    )
    assert ran.code == 0, ran.err
    assert [ran.answers[n]["result"].get("isError") for n in (1, 2)] == [None, None], ran.answers
    assert (first / "x.txt").read_text() == "in a" and (second / "y.txt").read_text() == "in b"


@pytest.mark.parametrize("switch", ["--no-watch", "--use-roots", "--allow-write=false", "--allow-write=0"])
def test_filesystem_other_switches_before_a_directory_keep_it(tmp_path: Path, switch: str) -> None:
    (tmp_path / "seen.txt").write_text("here")
    ran = run_stdio(
        [script("plainmcp-filesystem"), switch, str(tmp_path)],
        LIST_TOOLS,
        call("read_text_file", {"path": str(tmp_path / "seen.txt")}),
    )
    assert ran.code == 0, ran.err
    assert "write_file" not in tool_names(ran, 1)  # read-only: none of these turns writing on
    assert "here" in json.dumps(ran.answers[2]["result"])


def test_filesystem_allow_write_from_the_environment(tmp_path: Path) -> None:
    ran = run_stdio(
        [script("plainmcp-filesystem"), str(tmp_path)], LIST_TOOLS, env={"PLAINMCP_FILESYSTEM_ALLOW_WRITE": "1"}
    )
    assert "write_file" in tool_names(ran, 1)
    ran = run_stdio(
        [script("plainmcp-filesystem"), "--allow-write=false", str(tmp_path)],
        LIST_TOOLS,
        env={"PLAINMCP_FILESYSTEM_ALLOW_WRITE": "1"},
    )
    assert "write_file" not in tool_names(ran, 1)  # the flag wins over the environment


def test_sqlite_switches_before_options_do_not_take_their_values(tmp_path: Path) -> None:
    database = tmp_path / "new.db"
    # --confirm-writes never: this client cannot be asked to confirm (see tests/servers/sqlite/test_confirm.py).
    ran = run_stdio(
        [script("plainmcp-sqlite"), "--allow-write", "--no-watch", "--db", str(database), "--confirm-writes", "never"],
        LIST_TOOLS,
        call("execute", {"sql": "create table t (x integer)"}),
    )
    assert ran.code == 0, ran.err
    assert "execute" in tool_names(ran, 1)
    assert ran.answers[2]["result"].get("isError") is not True, ran.answers[2]
    with sqlite3.connect(database) as connection:
        assert connection.execute("select name from sqlite_master").fetchall() == [("t",)]


def test_sqlite_allow_write_false_stays_read_only(tmp_path: Path) -> None:
    database = tmp_path / "shop.db"
    sqlite3.connect(database).close()
    ran = run_stdio(
        [script("plainmcp-sqlite"), "--allow-write=false", "--db", str(database)],
        LIST_TOOLS,
        env={"PLAINMCP_SQLITE_ALLOW_WRITE": "true"},
    )
    assert ran.code == 0, ran.err
    assert "execute" not in tool_names(ran, 1)


def test_prompts_no_bundled_before_dir_serves_only_that_dir(tmp_path: Path) -> None:
    (tmp_path / "mine.md").write_text("---\ndescription: my prompt\n---\nHello\n")
    ran = run_stdio(
        [script("plainmcp-prompts"), "--no-bundled", "--no-watch", "--dir", str(tmp_path)], {"method": "prompts/list"}
    )
    assert ran.code == 0, ran.err
    assert [prompt["name"] for prompt in ran.answers[1]["result"]["prompts"]] == ["mine"]


def test_a_switch_with_a_value_that_is_not_on_or_off_is_one_line_and_exit_2() -> None:
    done = subprocess.run([script("plainmcp-sqlite"), "--no-watch=later"], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "plainmcp-sqlite: error: argument --no-watch: expected true or false (1/0, yes/no, on/off), got 'later' "
        "(see plainmcp-sqlite --help)"
    ]


# --------------------------------------------------------------------------- ports and start-up


@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize(
    ("port", "problem"), [("99999", "99999 is not a port number (0 to 65535)"), ("abc", "not a port number: 'abc'")]
)
def test_bad_port_is_one_line_and_exit_2(name: str, port: str, problem: str) -> None:
    dist = f"plainmcp-{name}"
    done = subprocess.run(
        [script(dist), "--transport", "http", "--port", port, "x"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"{dist}: error: argument --port: {problem} (see {dist} --help)"]


@pytest.mark.parametrize("name", SERVERS)
def test_a_port_in_use_is_one_line_and_exit_1_and_never_says_listening(name: str, tmp_path: Path) -> None:
    dist = f"plainmcp-{name}"
    extra = {"filesystem": [str(tmp_path)], "prompts": ["--no-watch"]}.get(name, [])
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [script(dist), "--transport", "http", "--port", str(port), *extra],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == f"{dist}: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert "Traceback" not in done.stderr and "listening on" not in done.stderr


@pytest.mark.parametrize("content", [None, "not a certificate"])
def test_an_unusable_tls_file_is_one_line_and_exit_1(tmp_path: Path, content: str | None) -> None:
    pem = tmp_path / "server.pem"
    if content is not None:
        pem.write_text(content)
    done = subprocess.run(
        [
            script("plainmcp-everything"),
            "--transport",
            "http",
            "--port",
            "0",
            "--certfile",
            str(pem),
            "--keyfile",
            str(pem),
        ],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("plainmcp-everything: cannot use the TLS certificate or key: ")
    assert "Traceback" not in done.stderr and "listening on" not in done.stderr


def test_listening_is_logged_once_the_port_accepts_connections() -> None:
    process = subprocess.Popen(
        [script("plainmcp-everything"), "--transport", "http", "--port", "0"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert process.stderr is not None
        for _ in range(50):  # a fixed number of lines: the listening line comes within the first few
            line = process.stderr.readline()
            if "listening on" in line or not line:
                break
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp$", line.strip())
        assert found, line
        # The line names the real port (0 asked for any) and the socket is already accepting.
        with socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=2):
            pass
    finally:
        stop_process(process)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- logging


def initialize_then_quit(argv: list[str]) -> str:
    return run_stdio(argv, {"method": "prompts/list"}).err


def test_log_level_debug_shows_our_debug_lines_but_not_markdown_it_internals(tmp_path: Path) -> None:
    (tmp_path / "hello.md").write_text("---\ndescription: hi\n---\n# Hello {{name}}\n\n> quoted\n")
    err = initialize_then_quit(
        [script("plainmcp-prompts"), "--log-level", "debug", "--no-watch", "--dir", str(tmp_path)]
    )
    loggers = {line.split()[3] for line in err.splitlines() if len(line.split()) > 3}
    assert re.search(r" DEBUG plainmcp[\w.]*: ", err), err
    assert not any(name.startswith("markdown_it") for name in loggers), sorted(loggers)


def test_log_dependencies_lets_a_dependencys_debug_lines_through(tmp_path: Path) -> None:
    (tmp_path / "hello.md").write_text("---\ndescription: hi\n---\n# Hello {{name}}\n\n> quoted\n")
    err = initialize_then_quit(
        [script("plainmcp-prompts"), "--log-level", "debug", "--log-dependencies", "--no-watch", "--dir", str(tmp_path)]
    )
    assert " DEBUG markdown_it." in err


def test_uvicorn_startup_chatter_is_capped_but_listening_is_ours() -> None:
    process = subprocess.Popen(
        [script("plainmcp-everything"), "--transport", "http", "--port", "0", "--log-level", "debug"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        seen = []
        for _ in range(50):
            line = process.stderr.readline()
            seen.append(line)
            if "listening on" in line or not line:
                break
        found = re.search(r":(\d+)/mcp$", seen[-1].strip())
        assert found, seen
        with socket.create_connection(("127.0.0.1", int(found.group(1))), timeout=2) as connection:
            connection.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert connection.recv(100).startswith(b"HTTP/1.1 200")
    finally:
        stop_process(process)  # type: ignore[arg-type]
        assert process.stderr is not None
        rest = process.stderr.read()
    text = "".join(seen) + rest
    # No line from uvicorn's own loggers ("Started server process", "Waiting for application startup"...);
    # our own lines may name it ("HTTP stack: uvicorn with the httptools parser ...").
    assert not re.search(r" (DEBUG|INFO|WARNING) uvicorn[.\w]*: ", text), text
    assert " DEBUG plainmcp" in text or " INFO plainmcp" in text


# --------------------------------------------------------------------------- the weather stand-in


def test_weather_standin_console_script_serves_on_the_port_it_prints() -> None:
    process = subprocess.Popen([script("plainmcp-weather-standin"), "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", process.stdout.readline())
        assert found
        answer = httpx.get(f"{found.group(1)}/v1/search", params={"name": "Paris", "count": 1}, timeout=5)
        assert answer.status_code == 200 and answer.json()["results"][0]["name"] == "Paris"
    finally:
        stop_process(process)  # type: ignore[arg-type]
