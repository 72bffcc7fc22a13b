"""A hostile client cannot forge or poison a server's log: through a real server process over stdio,
a clientInfo.name with newlines, terminal escapes and credentials is logged as one escaped, redacted
line, in both log formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SERVER = str(Path(sys.executable).parent / "plainmcp-everything")
TOKEN = "0123456789abcdef0123456789abcdef"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJldmUifQ.c2lnbmF0dXJl"
HOSTILE_NAME = (
    f"evil\n2026-01-01 00:00:00,000 ERROR plainmcp.command_line: disk full\r\x1b[31mred\u2028"
    f"Authorization: Bearer {TOKEN} {JWT}"
)


def initialize_as(name: str, log_format: str) -> list[str]:
    """The server's stderr lines after one initialize from a client called ``name``."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}},
    }
    done = subprocess.run(
        [SERVER, "--log-format", log_format],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=30,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "plainmcp-everything"
    return done.stderr.splitlines()


def test_text_log_keeps_a_hostile_client_name_on_its_own_line_escaped_and_redacted() -> None:
    lines = initialize_as(HOSTILE_NAME, "text")
    assert not any("disk full" in line and "initialized" not in line for line in lines), lines
    (line,) = [line for line in lines if "initialized: client" in line]
    assert "client evil\\n2026-01-01 00:00:00,000 ERROR plainmcp.command_line: disk full\\r\\x1b[31mred\\u2028" in line
    assert TOKEN not in line and JWT not in line and "Bearer [redacted]" in line
    assert all(line[:4].isdigit() for line in lines)  # every line starts a record: nothing forged


def test_json_log_keeps_a_hostile_client_name_inside_one_object_and_redacted() -> None:
    lines = initialize_as(HOSTILE_NAME, "json")
    entries = [json.loads(line) for line in lines]  # each line is one whole object
    (entry,) = [entry for entry in entries if entry["message"].startswith("initialized: client")]
    assert entry["message"].startswith("initialized: client evil\n2026-01-01 00:00:00,000 ERROR")
    assert TOKEN not in entry["message"] and JWT not in entry["message"]
    assert "\u2028" not in lines[entries.index(entry)]  # written as \\u2028: line readers never break on it


@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_megabyte_client_name_makes_a_bounded_log_line(log_format: str) -> None:
    lines = initialize_as("n" * 1_000_000, log_format)
    (line,) = [line for line in lines if "initialized: client" in line]
    assert len(line) < 20_000 and "more characters)" in line


def test_a_servers_own_package_logs_at_the_level_asked_and_a_dependency_only_warnings(tmp_path: Path) -> None:
    package = tmp_path / "acme_weather"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import logging\n"
        "from plainmcp import Server\n"
        "from plainmcp.command_line import serve, server_arguments\n"
        "logging.getLogger('acme_weather.tools').debug('our own debug line')\n"
        "def main():\n"
        "    args = server_arguments('acme-weather', env_prefix='ACME', version='1').parse_args()\n"
        "    server = Server('acme-weather', '1')\n"
        "    @server.tool(input_schema={'type': 'object'})\n"
        "    async def hello(ctx, args):\n"
        "        logging.getLogger('acme_weather.tools').debug('handler debug line')\n"
        "        logging.getLogger('somedependency.internals').debug('dependency debug line')\n"
        "        logging.getLogger('somedependency.internals').warning('dependency warning line')\n"
        "        return 'hi'\n"
        "    serve(server, args)\n"
        "main()\n"
    )
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hello", "arguments": {}}}
    modern = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    request["params"]["_meta"] = modern  # type: ignore[index]
    for extra, dependency_debug in (([], False), (["--log-dependencies"], True)):
        done = subprocess.run(
            [sys.executable, "-m", "acme_weather", "--log-level", "debug", *extra],
            input=json.dumps(request) + "\n",
            capture_output=True,
            text=True,
            timeout=30,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
        )
        assert done.returncode == 0, done.stderr
        assert '"hi"' in done.stdout, done.stdout
        assert "DEBUG acme_weather.tools: handler debug line" in done.stderr
        assert "WARNING somedependency.internals: dependency warning line" in done.stderr
        assert ("dependency debug line" in done.stderr) is dependency_debug
