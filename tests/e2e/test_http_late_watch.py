"""2026-07-28 over Streamable HTTP: the watchers of a client leaving start late, from one sweeper task.

A call answered within ``WATCH_AFTER_SECONDS`` never gets a watcher; the sweeper that starts the
watchers of slower calls stays while calls keep coming. It once ended whenever it found no call
waiting, so under load a new sweeper task was started for nearly every call.
"""

from __future__ import annotations

import gc
import json
from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.http.stateless import SWEEPER_NAME, WATCH_AFTER_SECONDS, ModernExchange

from .asgi_scope import post_scope
from .http_server import modern_body, modern_headers

pytestmark = pytest.mark.anyio


def quick_server() -> Server:
    server = Server("late-watch-test", "0")

    @server.tool()
    async def quick(ctx: Any, args: dict[str, Any]) -> str:
        """Answers at once."""
        return "quick"

    return server


async def post(app: MCPApp, request_id: int) -> int:
    """One 2026-07-28 tools/call POST straight into the ASGI app; its status."""
    body = modern_body(request_id, "tools/call", {"name": "quick", "arguments": {}})
    headers = [(name.lower().encode(), value.encode()) for name, value in modern_headers(body).items()]
    scope = post_scope("/mcp", headers)
    delivered = False
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await app(scope, receive, send)
    return statuses[0]


def sweepers() -> set[int]:
    return {task.id for task in anyio.get_running_tasks() if task.name == SWEEPER_NAME}


async def test_one_sweeper_serves_a_run_of_calls_and_ends_after_them() -> None:
    app = MCPApp(quick_server())
    seen: set[int] = set()
    async with app.running():
        # Calls one after another for several sweeper periods: each is answered at once, so at
        # every wake-up the sweeper finds no call waiting.
        request_id = 0
        until = anyio.current_time() + 6 * WATCH_AFTER_SECONDS
        while anyio.current_time() < until:
            request_id += 1
            assert await post(app, request_id) == 200
            await anyio.sleep(0)  # the sweeper runs in between
            seen |= sweepers()
        assert len(seen) == 1, f"{len(seen)} sweeper tasks for {request_id} calls"
        with anyio.fail_after(5):
            while sweepers():  # no call for a whole period: it ends
                await anyio.sleep(WATCH_AFTER_SECONDS)


async def test_an_answered_exchange_is_freed_without_the_cyclic_collector() -> None:
    """The exchange's connection and session hold its write stream in reference cycles; the
    stream lets go of the exchange once it is over, so the request's objects do not wait for a
    garbage collection (which, under load, every request in flight waits for)."""
    app = MCPApp(quick_server())
    async with app.running():
        assert await post(app, 0) == 200
        gc.collect()
        gc.disable()
        try:
            for request_id in range(1, 21):
                assert await post(app, request_id) == 200
            alive = sum(1 for thing in gc.get_objects() if isinstance(thing, ModernExchange))
        finally:
            gc.enable()
    assert alive == 0
