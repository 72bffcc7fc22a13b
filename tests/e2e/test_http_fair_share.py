"""A fair share of connection slots (issue 26, High 2), on both HTTP stacks.

Two attacking addresses (127.0.0.2 and 127.0.0.3) hold every slot of a real server with long-held
connections, each its allowed half: legacy SSE streams, 2026-07-28 ``subscriptions/listen`` streams
and bodies dripped a byte at a time, reopening whatever the server closes, as an adversary would.
A client on 127.0.0.1 must still be served (initialize and ping within a second, never a 503),
the server's RSS stays under 300 MiB, and a dripped body is cut off at the minimum body rate.
"""

from __future__ import annotations

import contextlib
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator

import httpx
import pytest
from plainmcp.http.body_rate import MIN_BYTES_PER_SECOND, WINDOW

from .http_server import (
    HOST,
    ServerProcess,
    dumps,
    initialize_body,
    legacy_headers,
    modern_body,
    modern_headers,
    server_process,
)
from .test_http_connection_slots import answered_within_a_second
from .test_http_head_limits import RSS_LIMIT_KIB, rss_kib

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs 127.0.0.2+, reads /proc")

MAX = 16
PER_PEER = MAX // 2  # run_http's default share per address
ATTACKERS = ("127.0.0.2", "127.0.0.3")
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PARSERS = pytest.mark.parametrize("parser", ["httptools", "h11"])


@contextlib.contextmanager
def served_on(parser: str) -> Iterator[ServerProcess]:
    flags = ("--max-connections", str(MAX), "--header-timeout", "5")
    with server_process(*flags, env={"PLAINMCP_HTTP_PARSER": parser}) as served:
        yield served


def raw_request(method: str, path: str, body: bytes, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}", *(f"{k}: {v}" for k, v in headers.items())]
    if body or method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def sse_stream() -> bytes:
    return raw_request("GET", "/sse", b"", {"Accept": "text/event-stream"})


def listen_stream() -> bytes:
    body = modern_body("L", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    return raw_request("POST", "/mcp", dumps(body), modern_headers(body))


def dripped_body() -> bytes:
    body = dumps(initialize_body()) + b" " * 4000  # would take 20 minutes at the attackers' drip
    return raw_request("POST", "/mcp", body, POST_HEADERS)


class Attacker:
    """One long-held connection from ``peer``, reopened each time the server closes it."""

    def __init__(self, peer: str, port: int, request: bytes, drip: bool, stop: threading.Event) -> None:
        self.peer, self.port, self.request, self.drip, self.stop = peer, port, request, drip, stop
        self.holding = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(OSError), socket.socket() as sock:
                sock.bind((self.peer, 0))
                sock.settimeout(0.2)
                sock.connect((HOST, self.port))
                if self.drip:
                    self._drip(sock)
                else:
                    self._hold(sock)
            self.holding = False
            self.stop.wait(0.05)

    def _hold(self, sock: socket.socket) -> None:
        sock.sendall(self.request)
        head = b""
        while b"\r\n\r\n" not in head and not self.stop.is_set():
            with contextlib.suppress(TimeoutError):
                chunk = sock.recv(4096)
                if not chunk:
                    return
                head += chunk
        if not head.startswith(b"HTTP/1.1 200 "):
            return  # the reserve's 503: try again
        self.holding = True
        while not self.stop.is_set():  # hold the stream, reading nothing but its end
            with contextlib.suppress(TimeoutError):
                if not sock.recv(1, socket.MSG_PEEK):
                    return

    def _drip(self, sock: socket.socket) -> None:
        head, _, body = self.request.partition(b"\r\n\r\n")
        sock.sendall(head + b"\r\n\r\n")
        self.holding = True
        for byte in body:
            if self.stop.wait(0.3):
                return
            sock.sendall(bytes([byte]))


@contextlib.contextmanager
def attack(port: int) -> Iterator[list[Attacker]]:
    stop = threading.Event()
    kinds: list[tuple[Callable[[], bytes], bool]] = [(sse_stream, False), (listen_stream, False), (dripped_body, True)]
    attackers = [
        Attacker(peer, port, kinds[n % 3][0](), kinds[n % 3][1], stop) for peer in ATTACKERS for n in range(PER_PEER)
    ]
    try:
        yield attackers
    finally:
        stop.set()
        for attacker in attackers:
            attacker.thread.join(5.0)


@PARSERS
def test_http_fair_share_two_addresses_holding_every_slot_cannot_lock_a_third_out(parser):
    with served_on(parser) as served, attack(served.port) as attackers:
        deadline = time.monotonic() + 10.0
        while sum(a.holding for a in attackers) < MAX and time.monotonic() < deadline:
            time.sleep(0.05)
        assert sum(a.holding for a in attackers) == MAX, "the attack never held every slot"
        worst = 0
        for _ in range(5):  # each time on new connections, while the attackers reopen theirs
            answered_within_a_second(served.base_url)
            worst = max(worst, rss_kib(served.process.pid))
            time.sleep(0.3)
        assert worst < RSS_LIMIT_KIB
        # A fair share, not an eviction of everyone: the attackers still hold most of the slots.
        assert sum(a.holding for a in attackers) >= MAX - 4


@PARSERS
def test_http_fair_share_a_body_dripped_below_the_minimum_rate_is_cut_off_with_408(parser):
    body = dumps(initialize_body()) + b" " * 4000
    with served_on(parser) as served, socket.socket() as sock:
        sock.bind(("127.0.0.2", 0))
        sock.connect((HOST, served.port))
        sock.sendall(raw_request("POST", "/mcp", body, POST_HEADERS)[: -len(body)])
        started = time.monotonic()
        answer = b""
        sock.settimeout(0.1)
        for byte in body:  # 10 bytes a second, far below the minimum
            with contextlib.suppress(OSError):
                sock.sendall(bytes([byte]))
            with contextlib.suppress(TimeoutError, OSError):
                answer += sock.recv(4096)
            if answer or time.monotonic() - started > WINDOW + 5:
                break
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert time.monotonic() - started < WINDOW + 3
        answered_within_a_second(served.base_url)


@PARSERS
def test_http_fair_share_a_body_arriving_at_the_minimum_rate_is_served(parser):
    body = dumps(initialize_body()) + b" " * (int(MIN_BYTES_PER_SECOND * WINDOW) * 2)
    step = MIN_BYTES_PER_SECOND  # twice the minimum: a slow link, not an attack
    with served_on(parser) as served, socket.socket() as sock:
        sock.bind(("127.0.0.2", 0))
        sock.connect((HOST, served.port))
        sock.sendall(raw_request("POST", "/mcp", body, POST_HEADERS)[: -len(body)])
        for start in range(0, len(body), step):
            sock.sendall(body[start : start + step])
            time.sleep(0.5)
        sock.settimeout(10.0)
        assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")


@PARSERS
def test_http_fair_share_one_principal_spread_over_many_addresses_counts_once(parser):
    # Sixteen addresses, one stream each, every one authenticated as the same principal: by address
    # each holds an equal share, but as one principal it holds every slot.
    tokens = ("attacker-token-0123456789", "victim-token-0123456789")
    flags = ["--max-connections", str(MAX), "--auth-token", tokens[0], "--auth-token", tokens[1]]
    stream = raw_request("GET", "/sse", b"", {"Accept": "text/event-stream", "Authorization": f"Bearer {tokens[0]}"})
    with server_process(*flags, env={"PLAINMCP_HTTP_PARSER": parser}) as served:
        stop = threading.Event()
        attackers = [Attacker(f"127.0.0.{n}", served.port, stream, False, stop) for n in range(2, 2 + MAX)]
        try:
            deadline = time.monotonic() + 10.0
            while sum(a.holding for a in attackers) < MAX and time.monotonic() < deadline:
                time.sleep(0.05)
            assert sum(a.holding for a in attackers) == MAX, "the attack never held every slot"
            auth = {"Authorization": f"Bearer {tokens[1]}"}
            for _ in range(3):
                with httpx.Client(timeout=5.0, trust_env=False) as http:
                    started = time.monotonic()
                    opened = http.post(
                        served.url, content=dumps(initialize_body()), headers=legacy_headers(None, None, **auth)
                    )
                    assert opened.status_code == 200, opened.text
                    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
                    headers = legacy_headers(opened.headers["mcp-session-id"], **auth)
                    assert http.post(served.url, content=dumps(ping), headers=headers).json()["result"] == {}
                    assert time.monotonic() - started < 1.0
        finally:
            stop.set()
            for attacker in attackers:
                attacker.thread.join(5.0)
