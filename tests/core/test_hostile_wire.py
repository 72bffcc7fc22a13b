"""Hostile input at the wire and in the slot accounting (issue 15), without sockets: lone
surrogates, batch bounds and batch reply sizes, ``Last-Event-ID`` parsing, repeated headers, and
which connection gives up its slot."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plainmcp.framing import join_batch
from plainmcp.http.asgi import header, repeated_header
from plainmcp.http.connection_guard import RESERVE, ConnectionGuard, peer_key
from plainmcp.http.event_buffer import parse_event_id
from plainmcp.jsonrpc import Invalid, Notification, Request, decode, has_lone_surrogate

# ------------------------------------------------------------------------------ lone surrogates


def request_line(params: Any) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})


@pytest.mark.parametrize(
    "params",
    [
        {"arguments": {"text": "a\ud800"}},
        {"arguments": {"\udfff": 1}},
        {"arguments": {"list": [1, [2, ["x\udc00"]]]}},
        {"uri": "file:///\ud83d"},  # the first half of a pair, alone
    ],
)
def test_a_request_with_a_lone_surrogate_in_its_params_is_invalid_params(params):
    decoded = decode(request_line(params))
    assert isinstance(decoded, Invalid) and decoded.reply is not None
    assert decoded.reply.id == 9 and decoded.reply.code == -32602


def test_paired_escapes_and_plain_text_are_requests():
    assert decode(request_line({"text": "\U0001f600 é \\ud800 as text"})) == Request(
        9, "tools/call", {"text": "\U0001f600 é \\ud800 as text"}
    )


def test_a_notification_with_a_lone_surrogate_is_still_a_notification():
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "\ud800"}})
    assert decode(line) == Notification("notifications/cancelled", {"requestId": "\ud800"})


def test_the_surrogate_walk_takes_any_nesting_the_parser_takes():
    deep: Any = "\ud800"
    for _ in range(900):
        deep = [deep]
    assert has_lone_surrogate(deep)
    assert not has_lone_surrogate(json.loads(json.dumps([[["plain"] * 3] * 3] * 3)))


# ------------------------------------------------------------------------------------ batches


def test_join_batch_keeps_every_id_answered_within_the_limit():
    parts = [(n, json.dumps({"jsonrpc": "2.0", "id": n, "result": "x" * 300}).encode()) for n in range(6)]
    parts.append((None, b'{"jsonrpc":"2.0","id":99,"error":{"code":-32601,"message":"Method not found: x"}}'))
    line = join_batch(parts, 1200)
    assert len(line) <= 1200
    members = json.loads(line)
    assert [m["id"] for m in members] == [0, 1, 2, 3, 4, 5, 99]
    kept = [m for m in members if "result" in m]
    assert 0 < len(kept) < 6 and [m["id"] for m in kept] == list(range(len(kept)))
    assert members[-1]["error"]["code"] == -32601  # an error is passed on as it is


def test_join_batch_under_the_limit_is_the_plain_array():
    parts = [(1, b'{"a":1}'), (None, b'{"b":2}')]
    assert join_batch(parts, 1000) == b'[{"a":1},{"b":2}]'
    assert join_batch([], 1000) == b""


# ----------------------------------------------------------------------------- Last-Event-ID


@pytest.mark.parametrize(
    "value", [None, "", "-1", "a--1", "abc-", "abc-\xb2", "abc-" + "9" * 5000, "x" * 10_000, "ABC-1"]
)
def test_last_event_ids_we_never_issue_parse_to_none(value):
    assert parse_event_id(value) is None


def test_the_event_ids_we_issue_parse_back():
    assert parse_event_id("0a1b2c3d4e5f-17") == ("0a1b2c3d4e5f", 17)


# --------------------------------------------------------------------------- repeated headers


def test_repeated_headers_are_reported_and_the_first_value_still_read():
    scope = {"headers": [(b"mcp-method", b"tools/call"), (b"host", b"x"), (b"mcp-method", b"tools/list")]}
    assert repeated_header(scope, ("Mcp-Session-Id", "Mcp-Method")) == "Mcp-Method"
    assert header(scope, "mcp-method") == "tools/call"
    assert repeated_header({"headers": [(b"mcp-method", b"x")]}, ("Mcp-Method",)) is None


# ------------------------------------------------------------------------------- slot accounting


class FakeConnection:
    def __init__(self, guard: ConnectionGuard, peer: str) -> None:
        self.guard_peer = peer
        self.guard_scope = None  # no request being served (the guard reads its principal from it)
        self.given_up = False
        self.place = guard.admit(self, peer)

    def give_up(self) -> None:
        self.given_up = True


def test_a_full_server_gives_up_the_longest_idle_connection_never_a_busy_one():
    guard = ConnectionGuard(3, max_per_peer=3)
    first, second, third = (FakeConnection(guard, f"10.0.0.{n}") for n in range(3))
    guard.busy(first)
    guard.busy(second)
    guard.idle(second)  # idle again, more recently than third
    fourth = FakeConnection(guard, "10.0.0.9")
    assert fourth.place == "slot" and third.given_up and not first.given_up and not second.given_up
    fifth = FakeConnection(guard, "10.0.0.9")
    assert fifth.place == "slot" and second.given_up and not first.given_up


def test_a_peer_at_its_cap_gives_up_its_own_connection_and_never_anothers():
    guard = ConnectionGuard(10, max_per_peer=2)
    other = FakeConnection(guard, "10.0.0.1")
    mine = [FakeConnection(guard, "10.0.0.2") for _ in range(2)]
    newest = FakeConnection(guard, "10.0.0.2")
    assert newest.place == "slot" and mine[0].given_up and not mine[1].given_up and not other.given_up
    assert guard.slots == 3


def test_when_every_slot_is_busy_new_connections_go_to_the_reserve_then_are_refused():
    guard = ConnectionGuard(2, max_per_peer=2)
    for connection in (FakeConnection(guard, "10.0.0.1"), FakeConnection(guard, "10.0.0.2")):
        guard.busy(connection)
    places = [FakeConnection(guard, f"10.0.1.{n}").place for n in range(RESERVE + 1)]
    assert places == ["reserve"] * RESERVE + ["refused"]


@pytest.mark.parametrize(
    ("host", "peer"),
    [
        ("127.0.0.2", "127.0.0.2"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"),
        ("::ffff:10.0.0.7", "10.0.0.7"),
        ("fe80::1%eth0", "fe80::/64"),
    ],
)
def test_a_peer_is_an_ipv4_address_or_an_ipv6_slash_64(host, peer):
    assert peer_key(host) == peer


class FakeTransport:
    """Just enough of an asyncio transport for uvicorn's protocol, from a peer of our choosing."""

    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.closed = False
        self.written = b""

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"peername": (self.peer, 40000), "sockname": ("127.0.0.1", 8000)}.get(name, default)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.closed = True

    def write(self, data: bytes) -> None:
        self.written += data

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


def test_a_connection_whose_head_is_complete_is_never_given_up_even_before_its_request_starts():
    # Between the parser completing a head and the application's task first running, the
    # connection is serving: giving it up then would drop a request the client has fully sent.
    import asyncio

    import uvicorn
    from plainmcp.http.connection_guard import guarded_protocol
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.server import ServerState

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def main() -> None:
        guard = ConnectionGuard(1, max_per_peer=1)
        config = uvicorn.Config(app, log_config=None, lifespan="off")
        state = ServerState()
        protocol_class = guarded_protocol(guard, H11Protocol)
        first, second = FakeTransport("10.0.0.1"), FakeTransport("10.0.0.2")
        serving = protocol_class(config=config, server_state=state, app_state={}, _loop=asyncio.get_running_loop())
        serving.connection_made(first)
        serving.data_received(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")  # complete; its task not yet run
        newcomer = protocol_class(config=config, server_state=state, app_state={}, _loop=asyncio.get_running_loop())
        newcomer.connection_made(second)
        assert not first.closed  # the full request is served, not given up
        assert guard.reserve == 1  # every slot serving: the newcomer may only ask for /health
        await asyncio.sleep(0.05)
        assert first.written.startswith(b"HTTP/1.1 204 ")
        for transport, protocol in ((first, serving), (second, newcomer)):
            transport.close()
            protocol.connection_lost(None)

    asyncio.run(main())
