"""CoalescedWrites on a real TCP connection over 127.0.0.1: one transport write per loop step, the
bytes whole and in order, close and abort as the transport's own, memory bounded."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from plainmcp.http.coalesced_writes import MAX_PENDING, CoalescedWrites


class Counted:
    """The real transport, with its write calls counted (what coalescing saves)."""

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))
        self.transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


async def _connected() -> tuple[CoalescedWrites, Counted, asyncio.StreamReader, asyncio.Server]:
    accepted: asyncio.Queue[asyncio.StreamReader] = asyncio.Queue()

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put(reader)

    server = await asyncio.start_server(on_client, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    loop = asyncio.get_running_loop()
    transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
    counted = Counted(transport)  # type: ignore[arg-type]
    return CoalescedWrites(counted, loop), counted, await accepted.get(), server


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, 10))


def test_coalesced_writes_of_one_step_reach_the_transport_as_one_write():
    async def scenario() -> None:
        writes, counted, peer, server = await _connected()
        writes.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        writes.write(b"{}")
        assert counted.writes == []  # nothing yet: the step is not over
        assert writes.get_write_buffer_size() == 40
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert counted.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
        assert await peer.readexactly(40) == b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"
        writes.close()
        server.close()

    run(scenario())


def test_coalesced_writes_across_steps_all_arrive_in_order():
    async def scenario() -> None:
        writes, counted, peer, server = await _connected()
        expected = b""
        for index in range(50):
            chunk = f"event {index}\n".encode()
            writes.write(chunk)
            expected += chunk
            if index % 3 == 0:
                await asyncio.sleep(0)
        writes.close()  # what is still pending goes out before the close
        assert await peer.read() == expected
        assert len(counted.writes) < 50
        server.close()

    run(scenario())


def test_coalesced_writes_close_hands_over_pending_bytes_then_eof():
    async def scenario() -> None:
        writes, _, peer, server = await _connected()
        writes.write(b"last words")
        writes.close()
        assert await peer.read() == b"last words"  # read() returns at EOF
        server.close()

    run(scenario())


def test_coalesced_writes_abort_drops_pending_bytes():
    async def scenario() -> None:
        writes, counted, peer, server = await _connected()
        writes.write(b"never sent")
        writes.abort()
        await asyncio.sleep(0.05)
        assert counted.writes == []
        try:
            received = await peer.read()
        except ConnectionResetError:
            received = b""
        assert received == b""
        server.close()

    run(scenario())


def test_coalesced_writes_past_the_bound_go_out_at_once():
    async def scenario() -> None:
        writes, counted, peer, server = await _connected()
        writes.write(b"a" * (MAX_PENDING - 1))
        assert counted.writes == []
        writes.write(b"bc")  # over the bound: to the transport now, where flow control sees it
        assert [len(data) for data in counted.writes] == [MAX_PENDING + 1]
        writes.write(b"d")
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        assert [len(data) for data in counted.writes] == [MAX_PENDING + 1, 1]
        assert await peer.readexactly(MAX_PENDING + 2) == b"a" * (MAX_PENDING - 1) + b"bcd"
        writes.close()
        server.close()

    run(scenario())


def test_coalesced_writes_write_eof_hands_over_pending_bytes_first():
    async def scenario() -> None:
        writes, _, peer, server = await _connected()
        writes.write(b"body")
        writes.write_eof()
        assert await peer.read() == b"body"
        writes.close()
        server.close()

    run(scenario())


def test_coalesced_writes_to_a_transport_closed_within_the_step_are_dropped_without_an_error():
    # uvloop (what run_http uses when installed) raises on a write to a closed transport; in the flush
    # callback that would be an "Exception in callback" error line for every peer that reset.
    uvloop = pytest.importorskip("uvloop")
    errors: list[dict[str, Any]] = []

    async def scenario() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        writes, counted, _, server = await _connected()
        writes.write(b"a response nobody will read")
        writes.transport.transport.abort()  # the connection lost under the pending bytes
        await asyncio.sleep(0.05)
        assert counted.writes == []
        server.close()

    uvloop.run(asyncio.wait_for(scenario(), 10))
    assert errors == []
