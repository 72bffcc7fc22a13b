"""Regression: a notifications/cancelled read in the same batch of input as the request it names
(before that request's task had started) was ignored as "unknown id", and the request ran and was
answered. Requests are now registered as in flight when read, not when their task starts."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp.jsonrpc import Notification, Request, Response
from plainmcp.session import InFlight, Outbound, Session

pytestmark = pytest.mark.anyio


class Counter:
    def __init__(self) -> None:
        self.ran: list[Any] = []

    def accepts_batches(self) -> bool:
        return False

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        self.ran.append(request.id)
        return {"id": request.id}

    async def handle_notification(self, notification: Notification) -> None:
        pass


async def test_cancel_queued_with_its_request_prevents_the_answer() -> None:
    # Plain streams (no relay task in between), filled before the session runs: it reads all
    # three messages in one go, as it does when they arrive in one read from a pipe.
    input_send, input_receive = anyio.create_memory_object_stream[Any](8)
    output_send, output_receive = anyio.create_memory_object_stream[Outbound](8)
    handler = Counter()
    session = Session(input_receive, output_send, handler)
    input_send.send_nowait(Request(1, "work"))
    input_send.send_nowait(Notification("notifications/cancelled", {"requestId": 1}))
    input_send.send_nowait(Request(2, "work"))
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(session.run)
        with anyio.fail_after(3):
            assert (await output_receive.receive()).message == Response(2, {"id": 2})
        with anyio.move_on_after(0.3):
            extra = await output_receive.receive()
            pytest.fail(f"the cancelled request was answered: {extra}")
        task_group.cancel_scope.cancel()
    assert handler.ran == [2]
