"""Regression: notifications/cancelled with requestId {} crashed the whole session (unhashable
dict as a table key), and requestId true or 1.0 cancelled the request whose id is 1 (Python's
True == 1.0 == 1). Same for progressToken on notifications/progress. Found by the e2e wire tests."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp.jsonrpc import Notification, Request, Response
from plainmcp.session import InFlight, Outbound, Session
from plainmcp.testing import memory_pair

pytestmark = pytest.mark.anyio


class Sleeper:
    def accepts_batches(self) -> bool:
        return False

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        await anyio.sleep(0.2)
        return {"id": request.id}

    async def handle_notification(self, notification: Notification) -> None:
        pass


@pytest.mark.parametrize("bad", [{}, [], True, 1.0, None])
async def test_odd_ids_in_cancel_and_progress_are_ignored(bad: Any) -> None:
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        session = Session(server_read, server_write, Sleeper())
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(session.run)
            await client_write.send(Outbound(Request(1, "slow")))
            await client_write.send(Outbound(Notification("notifications/cancelled", {"requestId": bad})))
            await client_write.send(
                Outbound(Notification("notifications/progress", {"progressToken": bad, "progress": 1}))
            )
            with anyio.fail_after(3):
                assert await client_read.receive() == Response(1, {"id": 1})
            task_group.cancel_scope.cancel()
