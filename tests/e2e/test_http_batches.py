"""JSON-RPC batches over Streamable HTTP (2025-03-26, the one revision with batches), attacked
(issue 15, Medium and Low): served in time linear in their length, bounded in count, and never
answered with a body larger than the server's own message limit.

The test server is the operability suite's (``big`` returns a text of any size), served by uvicorn
on a thread; a batch is one POST.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from plainmcp import jsonrpc
from plainmcp.http.app import MCPApp

from .http_server import dumps, initialize_body, legacy_headers, rpc
from .ops_harness import build_server, serve_app

VERSION = "2025-03-26"
LIMIT = 256 * 1024


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    app = MCPApp(build_server(), max_message_bytes=LIMIT, max_body_bytes=4 * 1024 * 1024)
    with serve_app(app) as running:
        yield running


def open_session(http: httpx.Client, url: str) -> dict[str, str]:
    opened = http.post(url, content=dumps(initialize_body(version=VERSION)), headers=legacy_headers(version=None))
    assert opened.status_code == 200
    headers = legacy_headers(opened.headers["mcp-session-id"], version=VERSION)
    http.post(url, content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers=headers)
    return headers


def calls(count: int, first_id: int = 0, size: int = 10) -> list[dict[str, Any]]:
    return [rpc(first_id + n, "tools/call", {"name": "big", "arguments": {"size": size}}) for n in range(count)]


def test_a_batch_of_the_largest_allowed_count_is_answered_for_every_id(served: Any) -> None:
    with httpx.Client(timeout=30.0) as http:
        headers = open_session(http, served.url)
        reply = http.post(served.url, content=dumps(calls(jsonrpc.MAX_BATCH)), headers=headers)
        assert reply.status_code == 200
        answers = reply.json()
        assert sorted(answer["id"] for answer in answers) == list(range(jsonrpc.MAX_BATCH))
        assert all(answer["result"]["content"][0]["text"] == "x" * 10 for answer in answers)


def test_a_batch_past_the_count_limit_is_refused_whole_with_a_clear_error(served: Any) -> None:
    with httpx.Client(timeout=30.0) as http:
        headers = open_session(http, served.url)
        reply = http.post(served.url, content=dumps(calls(jsonrpc.MAX_BATCH + 1)), headers=headers)
        assert reply.status_code == 400
        assert reply.json() == {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32600,
                "message": f"Invalid Request: a batch holds at most {jsonrpc.MAX_BATCH} messages; this one has {jsonrpc.MAX_BATCH + 1}",
            },
        }
        # Nothing of it ran: the session is still usable, and the ids are free.
        again = http.post(served.url, content=dumps(calls(2)), headers=headers)
        assert sorted(answer["id"] for answer in again.json()) == [0, 1]


def test_a_batch_reply_larger_than_the_message_limit_is_never_sent(served: Any) -> None:
    # Each result fits the 256 KiB limit on its own; the 40 together would take 800 KiB.
    with httpx.Client(timeout=30.0) as http:
        headers = open_session(http, served.url)
        reply = http.post(served.url, content=dumps(calls(40, size=20_000)), headers=headers)
        assert reply.status_code == 200
        assert len(reply.content) <= LIMIT
        answers = {answer["id"]: answer for answer in reply.json()}
        assert sorted(answers) == list(range(40))  # every id still answered
        kept = [n for n in range(40) if "result" in answers[n]]
        assert kept == list(range(len(kept))) and 0 < len(kept) < 40  # results in order while they fit
        assert all(
            answers[n]["error"] == {"code": -32603, "message": f"Response exceeds the {LIMIT}-byte message limit"}
            for n in range(len(kept), 40)
        )


def test_batches_cost_no_pairwise_comparison_of_their_members(served: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # A batch used to look up each member in the list of those accepted: n^2 / 2 comparisons of
    # whole requests (seconds for a few thousand members). Count the comparisons instead of time.
    compared = 0
    original = jsonrpc.Request.__eq__

    def counting(self: jsonrpc.Request, other: object) -> Any:
        nonlocal compared
        compared += 1
        return original(self, other)

    monkeypatch.setattr(jsonrpc.Request, "__eq__", counting)
    with httpx.Client(timeout=30.0) as http:
        headers = open_session(http, served.url)
        reply = http.post(served.url, content=dumps(calls(jsonrpc.MAX_BATCH)), headers=headers)
    assert len(reply.json()) == jsonrpc.MAX_BATCH
    assert compared < jsonrpc.MAX_BATCH


def test_the_server_answers_ping_within_a_second_while_full_batches_pour_in(served: Any) -> None:
    stop = threading.Event()
    failures: list[str] = []

    def attack() -> None:
        with httpx.Client(timeout=30.0) as http:
            headers = open_session(http, served.url)
            for round_number in range(8):
                if stop.is_set():
                    return
                reply = http.post(
                    served.url, content=dumps(calls(jsonrpc.MAX_BATCH, round_number * 10_000)), headers=headers
                )
                if reply.status_code != 200:
                    failures.append(reply.text[:200])

    attackers = [threading.Thread(target=attack) for _ in range(3)]
    for thread in attackers:
        thread.start()
    try:
        with httpx.Client(timeout=30.0) as http:
            headers = open_session(http, served.url)
            for n in range(10):
                started = time.monotonic()
                pong = http.post(served.url, content=dumps(rpc(100 + n, "ping")), headers=headers)
                assert pong.json() == {"jsonrpc": "2.0", "id": 100 + n, "result": {}}
                assert time.monotonic() - started < 1.0
                time.sleep(0.1)
    finally:
        stop.set()
        for thread in attackers:
            thread.join(60)
    assert not failures


def test_decode_bounds_the_batch_count_before_reading_members() -> None:
    assert isinstance(
        jsonrpc.decode(json.dumps([{"jsonrpc": "2.0", "method": "n"}] * jsonrpc.MAX_BATCH)), jsonrpc.Batch
    )
    refused = jsonrpc.decode(json.dumps([{"jsonrpc": "2.0", "method": "n"}] * (jsonrpc.MAX_BATCH + 1)))
    assert isinstance(refused, jsonrpc.Invalid) and refused.reply is not None and refused.reply.code == -32600
