"""Connection slots under attack (issue 15, High 1): silent and half-sent connections, one peer
grabbing slots, and every slot busy.

A real server process (the everything fixture with the shared command line: 8 slots, at most 4
per peer, 2 s for a request head), attacked with raw sockets from other loopback addresses
(127.0.0.2 and up are loopback too, so each is a peer of its own), while a well-behaved client on
127.0.0.1 checks that ``/health`` and real MCP requests keep being answered within a second.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import time
from collections.abc import Iterator

import httpx
import pytest

from .http_server import HOST, dumps, initialize_body, legacy_headers, server_process

# 127.0.0.2 and up answer as loopback on Linux only.
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs the 127.0.0.0/8 loopback range")

MAX = 8
PER_PEER = 4
HEAD_SECONDS = 2.0
FLAGS = (
    "--max-connections",
    str(MAX),
    "--max-connections-per-peer",
    str(PER_PEER),
    "--header-timeout",
    str(HEAD_SECONDS),
)
HALF_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"


def attacker(peer: str, port: int, first_bytes: bytes = b"") -> socket.socket:
    """A raw connection from ``peer`` (a loopback address) that sends ``first_bytes`` and stops."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((peer, 0))
    sock.connect((HOST, port))
    if first_bytes:
        sock.sendall(first_bytes)
    return sock


def is_closed(sock: socket.socket) -> bool:
    """Whether the server closed the connection (end of stream or reset); never waits."""
    sock.setblocking(False)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True
    finally:
        sock.setblocking(True)


def received(sock: socket.socket, seconds: float) -> bytes:
    """What the server wrote before closing (each read waits at most ``seconds``)."""
    sock.settimeout(seconds)
    chunks = []
    with contextlib.suppress(OSError):
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


@contextlib.contextmanager
def held(sockets: list[socket.socket]) -> Iterator[list[socket.socket]]:
    try:
        yield sockets
    finally:
        for sock in sockets:
            sock.close()


def answered_within_a_second(base_url: str) -> None:
    """``/health`` and a real MCP exchange (initialize, then ping), each within 1 s, from 127.0.0.1."""
    with httpx.Client(timeout=5.0) as http:
        started = time.monotonic()
        assert http.get(f"{base_url}/health").status_code == 200
        assert time.monotonic() - started < 1.0
        started = time.monotonic()
        opened = http.post(f"{base_url}/mcp", content=dumps(initialize_body()), headers=legacy_headers(version=None))
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]
        ping = http.post(
            f"{base_url}/mcp",
            content=dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
            headers=legacy_headers(session),
        )
        assert ping.status_code == 200 and ping.json() == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert time.monotonic() - started < 1.0


def test_silent_and_half_sent_connections_beyond_the_limit_neither_lock_out_requests_nor_stay_open():
    with server_process(*FLAGS) as served:
        peers = [f"127.0.0.{n}" for n in range(2, 2 + 2 * MAX // PER_PEER)]
        # Twice the limit: on each peer, half the sockets say nothing, half stop within a head.
        with held(
            [attacker(peer, served.port, HALF_HEAD if i % 2 else b"") for peer in peers for i in range(PER_PEER)]
        ) as sockets:
            opened = time.monotonic()
            answered_within_a_second(served.base_url)
            deadline = opened + HEAD_SECONDS + 2.0
            while not all(is_closed(sock) for sock in sockets) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert all(is_closed(sock) for sock in sockets), (
                "a silent or half-sent connection outlived the head deadline"
            )
        # A half-sent head still held when the deadline passed is told why (408); a silent
        # connection is simply closed.
        with held([attacker("127.0.0.2", served.port, HALF_HEAD), attacker("127.0.0.2", served.port)]) as (
            half,
            silent,
        ):
            assert received(half, HEAD_SECONDS + 2.0).startswith(b"HTTP/1.1 408 ")
            assert received(silent, 1.0) == b""
        answered_within_a_second(served.base_url)


@pytest.mark.parametrize("first_request", [False, True], ids=["first-head", "after-a-kept-alive-request"])
def test_a_head_dripped_byte_by_byte_is_cut_off_at_the_deadline(first_request):
    with server_process(*FLAGS) as served, held([attacker("127.0.0.2", served.port)]) as (sock,):
        if first_request:
            # The deadline also runs for the next head on a kept-alive connection, from its first byte.
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            sock.settimeout(5.0)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
            time.sleep(HEAD_SECONDS)  # idle in between: kept alive, and no head deadline runs yet
            assert not is_closed(sock)
        started = time.monotonic()
        head = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 200
        closed_after = None
        for byte in head:  # one byte every 50 ms: the head would take 10 s
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed_after = time.monotonic() - started
                break
            if is_closed(sock):
                closed_after = time.monotonic() - started
                break
            time.sleep(0.05)
        assert closed_after is not None and closed_after < HEAD_SECONDS + 1.0


def test_one_peer_cannot_take_more_than_its_share_of_the_slots():
    with server_process(*FLAGS) as served:
        with held([attacker("127.0.0.2", served.port) for _ in range(MAX)]) as sockets:
            # Each connection past its cap gave up the peer's own oldest one.
            deadline = time.monotonic() + 1.0
            while sum(is_closed(sock) for sock in sockets) < MAX - PER_PEER and time.monotonic() < deadline:
                time.sleep(0.02)
            assert [is_closed(sock) for sock in sockets] == [True] * (MAX - PER_PEER) + [False] * PER_PEER
            answered_within_a_second(served.base_url)
            # Served from the free half: none of the peer's four was closed to make room.
            assert not any(is_closed(sock) for sock in sockets[MAX - PER_PEER :])


def test_with_every_slot_serving_a_request_health_is_answered_and_the_rest_gets_a_clear_503():
    sse = {"Accept": "text/event-stream"}
    with server_process(*FLAGS) as served, contextlib.ExitStack() as stack:
        # One stream from each of MAX peers: every peer holds an equal share, so a newcomer's
        # fair share takes nobody's slot (see test_http_fair_share.py for peers holding more).
        for peer in (f"127.0.0.{n}" for n in range(2, 2 + MAX)):
            http = stack.enter_context(httpx.Client(timeout=5.0, transport=httpx.HTTPTransport(local_address=peer)))
            stream = stack.enter_context(http.stream("GET", f"{served.base_url}/sse", headers=sse))
            assert stream.status_code == 200  # a long-lived SSE session: a busy slot
        with httpx.Client(timeout=5.0) as http:
            started = time.monotonic()
            assert http.get(f"{served.base_url}/health").status_code == 200
            assert time.monotonic() - started < 1.0
            refused = http.post(served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
            assert refused.status_code == 503 and refused.headers["retry-after"] == "1"
            assert json.loads(refused.content)["error"]["message"].startswith("Server busy")
        stack.close()  # the streams end: their slots free up
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            with httpx.Client(timeout=5.0) as http:
                reply = http.post(served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
            if reply.status_code == 200:
                break
            time.sleep(0.05)
        assert reply.status_code == 200
