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
HOSTILE_NAME = (f"evil\n2026-01-01 00:00:00,000 ERROR plainmcp.serve: disk full\r\x1b[31mred\u2028"
                f"Authorization: Bearer {TOKEN} {JWT}")


def initialize_as(name: str, log_format: str) -> list[str]:
    """The server's stderr lines after one initialize from a client called ``name``."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": name, "version": "1"}}}
    done = subprocess.run([SERVER, "--log-format", log_format], input=json.dumps(request) + "\n",
                          capture_output=True, text=True, timeout=30, env=os.environ.copy())
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["serverInfo"]["name"] == "plainmcp-everything"
    return done.stderr.splitlines()


def test_text_log_keeps_a_hostile_client_name_on_its_own_line_escaped_and_redacted() -> None:
    lines = initialize_as(HOSTILE_NAME, "text")
    assert not any("disk full" in line and "initialized" not in line for line in lines), lines
    (line,) = [line for line in lines if "initialized: client" in line]
    assert "client evil\\n2026-01-01 00:00:00,000 ERROR plainmcp.serve: disk full\\r\\x1b[31mred\\u2028" in line
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
