"""The session engine on its own: concurrency, cancellation, progress, timeouts, id bookkeeping.

Two raw sessions face each other through the in-memory pair (real serialization in between), so
every test sees exactly what a peer would see.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from plainmcp.errors import ErrorCode, MCPError
from plainmcp.jsonrpc import Notification, Request, Response
from plainmcp.session import InFlight, Outbound, Session
from plainmcp.testing import memory_pair

pytestmark = pytest.mark.anyio


class Recorder:
    """A handler that runs scripted methods and records what it saw."""

    def __init__(self) -> None:
        self.notifications: list[Notification] = []
        self.cancelled: list[Any] = []
        self.started = anyio.Event()

    def accepts_batches(self) -> bool:
        return False

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        params = request.params or {}
        if request.method == "sleep":
            self.started.set()
            try:
                await anyio.sleep(params.get("seconds", 30))
            except anyio.get_cancelled_exc_class():
                self.cancelled.append(request.id)
                raise
            return {"slept": True}
        if request.method == "echo":
            return params
        if request.method == "progress":
            for value in params["values"]:
                await call.report_progress(value, 10, f"at {value}")
            return {"done": True}
        if request.method == "boom":
            raise ValueError("private detail")
        if request.method == "refuse":
            raise MCPError(-32099, "nope", {"why": "because"})
        raise MCPError(ErrorCode.METHOD_NOT_FOUND, "Method not found")

    async def handle_notification(self, notification: Notification) -> None:
        self.notifications.append(notification)


@asynccontextmanager
async def two_sessions(**options: Any) -> AsyncIterator[tuple[Session, Session, Recorder, Recorder]]:
    async with memory_pair() as ((a_read, a_write), (b_read, b_write)):
        a_handler, b_handler = Recorder(), Recorder()
        a = Session(a_read, a_write, a_handler, **options)
        b = Session(b_read, b_write, b_handler, **options)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(a.run)
            task_group.start_soon(b.run)
            yield a, b, a_handler, b_handler
            task_group.cancel_scope.cancel()


async def test_slow_request_does_not_hold_up_others() -> None:
    async with two_sessions() as (a, b, a_handler, _):
        order: list[str] = []
        async with anyio.create_task_group() as task_group:

            async def slow() -> None:
                await b.request("sleep", {"seconds": 0.3})
                order.append("slow")

            task_group.start_soon(slow)
            await a_handler.started.wait()
            assert await b.request("echo", {"x": 1}) == {"x": 1}
            order.append("fast")
        assert order == ["fast", "slow"]


async def test_caller_cancellation_notifies_peer_and_peer_sends_no_response() -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        handler = Recorder()
        server = Session(server_read, server_write, handler)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.run)
            # The client side is driven by hand so we can see every message the server sends.
            await client_write.send(Outbound(Request(7, "sleep", {"seconds": 30})))
            await handler.started.wait()
            await client_write.send(
                Outbound(Notification("notifications/cancelled", {"requestId": 7, "reason": "user"}))
            )
            await client_write.send(Outbound(Request(8, "echo", {"after": True})))
            with anyio.fail_after(2):
                reply = await client_read.receive()
            assert reply == Response(8, {"after": True})
            assert handler.cancelled == [7]
            with anyio.move_on_after(0.2):
                extra = await client_read.receive()
                pytest.fail(f"a cancelled request was answered: {extra}")
            task_group.cancel_scope.cancel()


async def test_progress_strictly_increases_and_stops_after_response() -> None:
    async with two_sessions() as (a, b, _, _):
        seen: list[tuple[float, float | None, str | None]] = []
        result = await b.request("progress", {"values": [1, 3, 3, 2, 5]}, on_progress=lambda *p: seen.append(p))
        assert result == {"done": True}
        assert seen == [(1, 10, "at 1"), (3, 10, "at 3"), (5, 10, "at 5")]


async def test_progress_without_token_sends_nothing() -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        server = Session(server_read, server_write, Recorder())
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.run)
            await client_write.send(Outbound(Request(1, "progress", {"values": [1, 2]})))
            with anyio.fail_after(2):
                assert await client_read.receive() == Response(1, {"done": True})
            task_group.cancel_scope.cancel()


async def test_request_timeout_raises_cancels_remotely_and_cleans_pending() -> None:
    async with two_sessions() as (a, b, a_handler, _):
        error = None
        try:
            await b.request("sleep", {"seconds": 30}, timeout=0.2)
        except MCPError as raised:
            error = raised
        assert error is not None and error.code == ErrorCode.REQUEST_TIMEOUT
        assert b._pending == {} and b._progress_routes == {}
        with anyio.fail_after(2):
            while not a_handler.cancelled:
                await anyio.sleep(0.01)
        assert a_handler.cancelled == [1]


async def test_errors_keep_their_code_and_unexpected_ones_become_generic() -> None:
    async with two_sessions() as (a, b, _, _):
        with pytest.raises(MCPError) as raised:
            await b.request("refuse")
        assert (raised.value.code, raised.value.message, raised.value.data) == (-32099, "nope", {"why": "because"})
        with pytest.raises(MCPError) as raised:
            await b.request("boom")
        assert (raised.value.code, raised.value.message, raised.value.data) == (-32603, "Internal error", None)


async def test_duplicate_in_flight_id_is_refused() -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        handler = Recorder()
        server = Session(server_read, server_write, handler)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.run)
            await client_write.send(Outbound(Request("same", "sleep", {"seconds": 0.2})))
            await handler.started.wait()
            await client_write.send(Outbound(Request("same", "echo", {})))
            with anyio.fail_after(2):
                first = await client_read.receive()
                second = await client_read.receive()
            assert first.error["code"] == ErrorCode.INVALID_REQUEST and first.id == "same"
            assert second == Response("same", {"slept": True})
            task_group.cancel_scope.cancel()


async def test_response_with_unknown_id_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        server = Session(server_read, server_write, Recorder())
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.run)
            await client_write.send(Outbound(Response(999, {})))
            await client_write.send(Outbound(Request(1, "echo", {"still": "alive"})))
            with anyio.fail_after(2):
                assert await client_read.receive() == Response(1, {"still": "alive"})
            task_group.cancel_scope.cancel()
    assert "unknown id 999" in caplog.text


async def test_end_of_input_lets_in_flight_work_finish_within_grace() -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        server = Session(server_read, server_write, Recorder(), shutdown_grace=2.0)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(server.run)
            await client_write.send(Outbound(Request(1, "sleep", {"seconds": 0.2})))
            await client_write.aclose()  # end of input with a request in flight
            with anyio.fail_after(2):
                assert await client_read.receive() == Response(1, {"slept": True})
            task_group.cancel_scope.cancel()


async def test_end_of_input_cancels_work_past_the_grace_period() -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        handler = Recorder()
        server = Session(server_read, server_write, handler, shutdown_grace=0.1)
        with anyio.fail_after(3):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(server.run)
                await client_write.send(Outbound(Request(1, "sleep", {"seconds": 30})))
                await handler.started.wait()
                await client_write.aclose()
        assert handler.cancelled == [1]


async def test_our_pending_requests_fail_when_input_ends() -> None:
    async with memory_pair() as ((a_read, a_write), (b_read, b_write)):
        a = Session(a_read, a_write, Recorder())
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(a.run)

            async def close_soon() -> None:
                await b_read.receive()  # the request arrived; now the peer goes away
                await b_write.aclose()

            task_group.start_soon(close_soon)
            with pytest.raises(MCPError) as raised, anyio.fail_after(2):
                await a.request("anything", timeout=None)
            assert raised.value.code == ErrorCode.REQUEST_TIMEOUT and "closed" in raised.value.message
