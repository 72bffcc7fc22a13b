"""The access log of a real HTTP server (plainmcp-everything at its defaults: one line per request)
loses nothing at SIGTERM, and a reader of its stderr that stops reading neither stops the server nor
makes its memory grow: the lines it cannot take are dropped and counted, the server keeps answering.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from .http_server import STARTUP_SECONDS, free_port, modern_body, modern_headers, server_process, wait_healthy

SERVER = str(Path(sys.executable).parent / "plainmcp-everything")


def rss_kib(pid: int) -> int:
    for row in Path(f"/proc/{pid}/status").read_text().splitlines():
        if row.startswith("VmRSS:"):
            return int(row.split()[1])
    raise AssertionError("no VmRSS")


def test_every_access_line_is_written_when_the_server_is_stopped_with_sigterm() -> None:
    with server_process() as server:
        with httpx.Client(timeout=10) as client:
            for number in range(300):
                response = client.get(f"{server.base_url}/no-such-page", headers={"X-Request-ID": f"probe-{number}"})
                assert response.status_code == 404
        # SIGTERM right after the last answer, whose line may still be buffered; uvicorn raises it
        # again once shut down, so the process ends by the signal (no atexit).
        assert server.stop() in (0, -signal.SIGTERM)
        log = server.log()
    logged = [line for line in log.splitlines() if "GET /no-such-page 404" in line]
    assert [line.rsplit("request_id=", 1)[1] for line in logged] == [f"probe-{number}" for number in range(300)]


def test_the_line_of_a_call_that_ends_during_the_shutdown_is_written() -> None:
    """The last line is logged milliseconds before uvicorn raises the SIGTERM again and the
    process ends without atexit: it is written all the same."""
    body = modern_body("slow", "tools/call", {"name": "test_tool_with_progress", "arguments": {}}, {"progressToken": 1})
    with server_process() as server:
        headers = {**modern_headers(body), "X-Request-ID": "the-last-call"}
        with httpx.Client(timeout=10) as client, client.stream("POST", server.url, json=body, headers=headers) as reply:
            lines = reply.iter_lines()
            assert any("notifications/progress" in line for line in lines)  # the call is under way
            server.process.send_signal(signal.SIGTERM)
            for _ in lines:  # the rest of the stream, however the shutdown ends it
                pass
        server.process.wait(15)
        log = server.log()
    assert "request_id=the-last-call" in log, log[-2000:]


# Reads the first kilobyte of the server's stderr, then never reads again (a client that hung).
STUCK_READER = "import sys, time; sys.stdin.buffer.read(1024); time.sleep(120)"


def test_a_stderr_nobody_reads_neither_stops_the_server_nor_grows_its_memory() -> None:
    reader = subprocess.Popen([sys.executable, "-c", STUCK_READER], stdin=subprocess.PIPE)
    assert reader.stdin is not None
    port = free_port()
    server = subprocess.Popen(
        [SERVER, "--transport", "http", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=reader.stdin,
    )
    reader.stdin.close()  # the server holds the pipe's only write end
    base = f"http://127.0.0.1:{port}"
    long_path = "/" + "x" * 4000  # each access line holds it: about 4 KB of log per request
    try:
        wait_healthy(base, time.monotonic() + STARTUP_SECONDS, lambda: server.poll() is None)
        with httpx.Client(timeout=5) as client:
            for _ in range(400):  # far more than the pipe (64 KiB) and the log's buffer (1 MiB) hold
                assert client.get(base + long_path).status_code == 404
            filled = rss_kib(server.pid)
            for _ in range(2000):  # 8 MB more of log lines, none of which can be written
                assert client.get(base + long_path).status_code == 404
            grown = rss_kib(server.pid) - filled
            started = time.monotonic()
            assert client.get(f"{base}/health").status_code == 200
            assert time.monotonic() - started < 1.0  # liveness: still answering at once
        assert grown < 4 * 1024, f"RSS grew by {grown} KiB while 8 MB of log lines could not be written"
        server.send_signal(signal.SIGTERM)
        assert server.wait(15) in (0, -signal.SIGTERM)  # the exit gives up on the stuck reader, no hang
    finally:
        for process in (server, reader):
            if process.poll() is None:
                process.kill()
                process.wait(10)
