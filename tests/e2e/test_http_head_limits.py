"""Request heads are bounded before they are parsed (issue 26, High 1), on both HTTP stacks.

A real server process (the everything fixture) attacked over raw sockets from 127.0.0.2: one huge
header, a flood of small headers (the attack that took the httptools stack past 2 GiB), too many
fields, and an oversized head pipelined behind a request. Each is refused or cut off while the
server's RSS (from ``/proc/<pid>/status``) stays under 300 MiB and a ping from 127.0.0.1 answers
within a second.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
from plainmcp.http.head_limits import MAX_HEAD_BYTES, MAX_HEADER_FIELDS

from .http_server import HOST, ServerProcess, dumps, legacy_headers, legacy_session, server_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc, uses 127.0.0.2")

RSS_LIMIT_KIB = 300 * 1024
PARSERS = pytest.mark.parametrize("parser", ["httptools", "h11"])


@contextlib.contextmanager
def served_on(parser: str) -> Iterator[ServerProcess]:
    with server_process("--header-timeout", "20", env={"PLAINMCP_HTTP_PARSER": parser}) as served:
        yield served


def rss_kib(pid: int) -> int:
    for line in open(f"/proc/{pid}/status", encoding="ascii"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def connect(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.2", 0))
    sock.connect((HOST, port))
    sock.settimeout(5.0)
    return sock


def reply_of(sock: socket.socket) -> bytes:
    """What the server wrote until it closed (bounded)."""
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def ping_within_a_second(served: ServerProcess) -> None:
    with httpx.Client(timeout=5.0, trust_env=False) as http:
        started = time.monotonic()
        session = legacy_session(http, served.url)
        reply = http.post(
            served.url, content=dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}), headers=legacy_headers(session)
        )
        assert reply.json() == {"jsonrpc": "2.0", "id": 7, "result": {}}
        assert time.monotonic() - started < 1.0


def head(fields: list[bytes], request_line: bytes = b"GET /health HTTP/1.1") -> bytes:
    return request_line + b"\r\nHost: 127.0.0.1\r\n" + b"".join(f + b"\r\n" for f in fields) + b"\r\n"


@PARSERS
def test_http_head_a_200_kb_header_is_refused_with_431(parser):
    with served_on(parser) as served, contextlib.closing(connect(served.port)) as sock:
        with contextlib.suppress(OSError):  # the server may close before all is sent
            sock.sendall(head([b"X-Big: " + b"a" * 200_000]))
        answer = reply_of(sock)
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        assert b"Request head too large" in answer
        ping_within_a_second(served)


@PARSERS
def test_http_head_at_the_limits_is_served_and_one_field_more_is_431(parser):
    with served_on(parser) as served:
        # With Host: exactly MAX_HEADER_FIELDS fields.
        fields = [b"Connection: close", *(b"X-F%d: v" % i for i in range(MAX_HEADER_FIELDS - 2))]
        with contextlib.closing(connect(served.port)) as sock:
            sock.sendall(head(fields))
            assert reply_of(sock).startswith(b"HTTP/1.1 200 ")
        with contextlib.closing(connect(served.port)) as sock:
            sock.sendall(head([*fields, b"X-One-More: v"]))
            assert reply_of(sock).startswith(b"HTTP/1.1 431 ")
        # In bytes: a head of exactly MAX_HEAD_BYTES is served, one byte more is refused.
        for extra, status in ((0, b"200"), (1, b"431")):
            base = head([b"Connection: close", b"X-Pad: "])
            pad = b"p" * (MAX_HEAD_BYTES - len(base) + extra)
            with contextlib.closing(connect(served.port)) as sock:
                sock.sendall(head([b"Connection: close", b"X-Pad: " + pad]))
                assert reply_of(sock).startswith(b"HTTP/1.1 " + status + b" ")


def flood(port: int, prefix: bytes, total: int, stop: threading.Event) -> int:
    """Send ``prefix`` then small headers until ``total`` bytes, the server closes, or ``stop``;
    returns the bytes the server took."""
    sent = 0
    chunk = b"".join(b"X-H%06d: abcdefghijklmnopqrstuvwxyz\r\n" % i for i in range(2000))
    with contextlib.closing(connect(port)) as sock, contextlib.suppress(OSError):
        sock.sendall(prefix)
        while sent < total and not stop.is_set():
            sock.sendall(chunk)
            sent += len(chunk)
    return sent


@PARSERS
@pytest.mark.parametrize("pipelined", [False, True], ids=["first-head", "pipelined-head"])
def test_http_head_a_flood_of_small_headers_is_cut_off_and_memory_stays_bounded(parser, pipelined):
    # The flood behind a complete request reaches the parser while that request is served.
    prefix = (b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" if pipelined else b"") + b"GET /health HTTP/1.1\r\n"
    with served_on(parser) as served:
        stop = threading.Event()
        took: list[int] = []
        worst = 0
        threads = [
            threading.Thread(target=lambda: took.append(flood(served.port, prefix, 120 * 1024 * 1024, stop)))
            for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        try:
            deadline = time.monotonic() + 15.0
            while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
                worst = max(worst, rss_kib(served.process.pid))
                ping_within_a_second(served)
                time.sleep(0.1)
        finally:
            stop.set()
            for thread in threads:
                thread.join(10.0)
        worst = max(worst, rss_kib(served.process.pid))
        assert worst < RSS_LIMIT_KIB, f"server RSS reached {worst} KiB"
        # Every flood was cut off long before its 120 MiB (a socket buffer or two beyond the limit).
        assert len(took) == 4 and max(took) < 16 * 1024 * 1024, took
        ping_within_a_second(served)
