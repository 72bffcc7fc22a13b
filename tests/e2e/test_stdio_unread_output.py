"""A stdio client that never reads its output (issue 15, Medium): the server must not grow.

A real server process whose stdout pipe nobody reads, and a client that keeps writing requests
whose answers are large. The server takes no new request while a megabyte of answers waits
(the client's own writes then block), its RSS, read from ``/proc``, stays bounded the whole time,
and once the pipe has taken nothing for ``write_timeout`` seconds it drops the client: it stops
serving and exits.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads RSS from /proc")

WRITE_TIMEOUT = 2.0
ANSWER_BYTES = 64 * 1024
SERVER = f"""
from plainmcp import Server, run_stdio

server = Server("unread-output", "0")

@server.tool()
async def blob(ctx, args):
    \"\"\"A large answer.\"\"\"
    return "x" * {ANSWER_BYTES}

run_stdio(server, write_timeout={WRITE_TIMEOUT})
"""
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


def rss_bytes(pid: int) -> int:
    """The process's resident set size; 0 once it has exited (a zombie has none)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for entry in status:
                if entry.startswith("VmRSS:"):
                    return int(entry.split()[1]) * 1024
    except FileNotFoundError:
        pass
    return 0


def test_a_client_that_never_reads_gets_backpressure_then_is_dropped_with_bounded_memory(tmp_path: Path) -> None:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    process = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stderr is not None
    try:
        process.stdin.write(line(INIT) + line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        process.stdin.flush()
        os.set_blocking(process.stdin.fileno(), False)
        calls = b"".join(
            line({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": "blob", "arguments": {}}})
            for n in range(1, 101)
        )
        sent = 0
        peak = 0
        started = time.monotonic()
        # Keep writing for 1.5 s (each batch of 100 calls asks for 6.4 MB of answers), never reading.
        while time.monotonic() - started < 1.5 and process.poll() is None:
            try:
                sent += os.write(process.stdin.fileno(), calls)
            except BlockingIOError:
                time.sleep(0.01)
            peak = max(peak, rss_bytes(process.pid))
        # Without backpressure the server would have read and answered all of it; with it, what
        # was taken is the pipe's 64 KiB and the little the server read before its answers piled up.
        assert sent < 256 * 1024, f"the server kept taking requests: {sent} bytes"
        # Then the server gives up on this client (no byte of output taken for WRITE_TIMEOUT s).
        deadline = time.monotonic() + WRITE_TIMEOUT + 8.0
        while process.poll() is None and time.monotonic() < deadline:
            peak = max(peak, rss_bytes(process.pid))
            time.sleep(0.05)
        assert process.poll() == 0, "the server did not drop the client that stopped reading"
        assert peak < 100 * 1024 * 1024, f"RSS reached {peak / 2**20:.0f} MiB"
        assert b"dropping it" in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(5)
