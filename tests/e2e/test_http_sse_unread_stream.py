"""A legacy HTTP+SSE client that never reads its stream (issue 15, Medium): the server must not grow.

A real server process (``run_http(transport="sse")``, write timeout 2 s) and a raw socket that
opens ``GET /sse``, reads the ``endpoint`` event, then never reads again while the attacker keeps
posting requests whose answers are large. Once a megabyte of answers waits, the session takes
nothing more (``503``), RSS (from ``/proc``) stays bounded, another client keeps getting answers
within a second, and the stalled stream is dropped, its session with it.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .http_server import HOST, STARTUP_SECONDS, dumps, free_port, stop_process, wait_healthy
from .test_stdio_unread_output import rss_bytes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads RSS from /proc")

WRITE_TIMEOUT = 2.0
SERVER = """
import sys
from plainmcp import Server
from plainmcp.http.app import run_http

server = Server("unread-sse", "0")

@server.tool()
async def blob(ctx, args):
    \"\"\"A large answer.\"\"\"
    return "x" * (64 * 1024)

run_http(server, port=int(sys.argv[1]), transport="sse", write_timeout=float(sys.argv[2]))
"""
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
JSON = {"Content-Type": "application/json"}


@contextlib.contextmanager
def sse_server(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, str(script), str(port), str(WRITE_TIMEOUT)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base_url = f"http://{HOST}:{port}"
    try:
        wait_healthy(base_url, time.monotonic() + STARTUP_SECONDS, lambda: process.poll() is None)
        yield process, base_url
    finally:
        stop_process(process)
        log.close()


def open_unread_stream(port: int) -> tuple[socket.socket, str]:
    """``GET /sse`` on a raw socket with a small receive buffer; returns it and the message URL path."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((HOST, port))
    sock.sendall(b"GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
    sock.settimeout(5.0)
    seen = b""
    while b"session_id=" not in seen or not seen.split(b"session_id=", 1)[1].count(b"\n"):
        seen += sock.recv(4096)
    endpoint = seen.split(b"data: ", 1)[1].split(b"\n", 1)[0].decode().strip()
    return sock, endpoint


def ping_within_a_second(http: httpx.Client, base_url: str) -> None:
    """A well-behaved SSE client: its own session answers ping in under a second."""
    started = time.monotonic()
    with http.stream("GET", f"{base_url}/sse", headers={"Accept": "text/event-stream"}) as stream:
        lines = stream.iter_lines()
        endpoint = next(line for line in lines if line.startswith("data: "))[6:]
        assert http.post(f"{base_url}{endpoint}", content=dumps(INIT), headers=JSON).status_code == 202
        assert (
            http.post(
                f"{base_url}{endpoint}", content=dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}), headers=JSON
            ).status_code
            == 202
        )
        answered = next(line for line in lines if line.startswith("data: ") and '"id":1' in line)
        assert '"result":{}' in answered
    assert time.monotonic() - started < 1.0


def test_a_stream_that_is_never_read_gets_backpressure_then_its_session_is_dropped(tmp_path: Path) -> None:
    with sse_server(tmp_path) as (process, base_url), httpx.Client(timeout=5.0) as http:
        port = int(base_url.rsplit(":", 1)[1])
        sock, endpoint = open_unread_stream(port)
        with sock:
            messages = f"{base_url}{endpoint}"
            assert http.post(messages, content=dumps(INIT), headers=JSON).status_code == 202
            call = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "blob", "arguments": {}}}
            statuses: list[int] = []
            peak = 0
            for n in range(1, 400):  # asks for 25 MB of answers the client will never read
                statuses.append(http.post(messages, content=dumps({**call, "id": n}), headers=JSON).status_code)
                if n % 20 == 0:
                    peak = max(peak, rss_bytes(process.pid))
            assert set(statuses) <= {202, 503} and 503 in statuses, "the session kept taking work"
            busy = http.post(messages, content=dumps({**call, "id": 999}), headers=JSON)
            assert busy.status_code == 503 and busy.json()["error"]["message"].startswith("Session busy")
            ping_within_a_second(http, base_url)
            # The stalled write is given up after WRITE_TIMEOUT: the stream ends, the session too.
            deadline = time.monotonic() + WRITE_TIMEOUT + 5.0
            while time.monotonic() < deadline:
                peak = max(peak, rss_bytes(process.pid))
                if http.post(messages, content=dumps({**call, "id": 1000}), headers=JSON).status_code == 404:
                    break
                time.sleep(0.1)
            else:
                pytest.fail("the session of the stream nobody reads was not dropped")
            assert peak < 100 * 1024 * 1024, f"RSS reached {peak / 2**20:.0f} MiB"
        ping_within_a_second(http, base_url)
