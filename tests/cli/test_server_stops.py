"""Stopping and starting a server as users do: Ctrl-C on an HTTP server (both HTTP stacks) is one line
and exit code 0, and a server started with stdin or stdout closed says so in one line, exit code 1.
Real processes, real signals."""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

BIN = Path(sys.executable).parent


def _start_http(parser: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [str(BIN / "plainmcp-everything"), "--transport", "http", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PLAINMCP_HTTP_PARSER": parser},
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:  # bounded: the server logs the address within its start-up
        lines.append(line)
        found = re.search(r"listening on (http://\S+)/mcp", line)
        if found:
            return process, found.group(1)
        if len(lines) > 50:
            break
    process.kill()
    raise AssertionError("".join(lines))


@pytest.mark.parametrize("parser", ["httptools", "h11"])
def test_http_server_ctrl_c_stops_with_one_line_and_exit_0(parser) -> None:
    process, base = _start_http(parser)
    try:
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200
        with httpx.stream("GET", f"{base}/health", timeout=10):  # a connection open while it stops
            process.send_signal(signal.SIGINT)
            rest = process.stderr.read() if process.stderr else ""
            code = process.wait(timeout=30)
    finally:
        process.kill()
    assert code == 0, rest
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest
    assert [line for line in rest.splitlines() if line.strip()][-1].endswith("plainmcp-everything stopped (Ctrl-C)")


@pytest.mark.parametrize(("redirect", "stream"), [("<&-", "stdin"), (">&- </dev/null", "stdout")])
def test_stdio_server_with_a_closed_stream_exits_1_with_one_line(redirect, stream) -> None:
    command = shlex.quote(str(BIN / "plainmcp-everything"))
    ran = subprocess.run(
        ["/bin/sh", "-c", f"exec {command} --log-level warning {redirect}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 1
    assert ran.stderr.splitlines() == [
        f"plainmcp-everything: {stream} is closed: the stdio transport reads requests from stdin and writes "
        "answers to stdout (start the server from an MCP client, or serve with --transport http)"
    ]
