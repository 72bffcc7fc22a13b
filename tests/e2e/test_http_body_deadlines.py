"""A request body that does not arrive in time is answered 408, whoever keeps the clock: the app's
sweeper inside its lifespan (one task for every request, no timer each), or a timer of the
request's own when the app is called outside it. A body that arrives in time is never cut off."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.http.body_deadlines import SWEEPER_NAME

from .asgi_scope import post_scope

pytestmark = pytest.mark.anyio

TIMEOUT = 0.2


def tiny_server() -> Server:
    server = Server("body-deadline-test", "0")

    @server.tool()
    async def echo(ctx: Any, args: dict[str, Any]) -> str:
        """Echoes ``text``."""
        return str(args.get("text"))

    return server


async def post(app: MCPApp, chunks: list[bytes], pause: float = 0.0) -> int:
    """A POST to the gateway whose body comes in ``chunks``, ``pause`` seconds apart, and then
    never ends when ``chunks`` is not the whole of it; the status of the answer."""
    scope = post_scope("/mcp/call", [(b"content-type", b"application/json")])
    pending = list(chunks)
    complete = chunks[-1].endswith(b"}")
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        if pending:
            await anyio.sleep(pause)
            chunk = pending.pop(0)
            return {"type": "http.request", "body": chunk, "more_body": bool(pending) or not complete}
        await anyio.sleep_forever()  # the rest of the body never comes; the client stays
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    with anyio.fail_after(5):
        await app(scope, receive, send)
    return statuses[0]


BODY = [b'{"jsonrpc":"2.0","id":1,', b'"method":"tools/call",', b'"params":{"name":"echo","arguments":{}}}']


async def test_inside_the_lifespan_the_sweeper_answers_a_late_body_408() -> None:
    app = MCPApp(tiny_server(), body_timeout=TIMEOUT)
    async with app.running():
        statuses: list[int] = []

        async def late() -> None:
            statuses.append(await post(app, BODY[:1]))

        async with anyio.create_task_group() as group:
            group.start_soon(late)
            await anyio.sleep(TIMEOUT / 2)
            assert any(task.name == SWEEPER_NAME for task in anyio.get_running_tasks())
        assert statuses == [408]
        # In time, in pieces: served (the clock stops when the body is in).
        assert await post(app, BODY, pause=TIMEOUT / 4) == 200
        await anyio.sleep(TIMEOUT * 2)  # past the deadline the served request would have had
        assert await post(app, BODY) == 200


async def test_outside_the_lifespan_a_late_body_is_408_all_the_same() -> None:
    app = MCPApp(tiny_server(), body_timeout=TIMEOUT)
    statuses: list[int] = []

    async def late() -> None:
        statuses.append(await post(app, BODY[:1]))

    async with anyio.create_task_group() as group:
        group.start_soon(late)
        await anyio.sleep(TIMEOUT / 2)
        assert not any(task.name == SWEEPER_NAME for task in anyio.get_running_tasks())
    assert statuses == [408]
    assert await post(app, BODY, pause=TIMEOUT / 4) == 200
