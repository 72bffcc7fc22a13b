"""Public hooks a server uses instead of the core's internals: ``Server.roots_changed`` (a legacy
client's roots changed) and ``Server.listeners()`` (how many clients a notification would reach)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Context, Server
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


async def test_roots_changed_runs_with_the_connection_the_clients_requests_name() -> None:
    server = Server("hooks-test", "0")
    seen: list[Any] = []
    called = anyio.Event()

    @server.tool()
    async def whoami(ctx: Context, args: dict[str, Any]) -> str:
        seen.append(ctx.connection)
        return "ok"

    @server.roots_changed
    async def forget(connection: Any) -> None:
        seen.append(connection)
        called.set()

    async with connect_in_memory(server, roots=[{"uri": "file:///a"}]) as client:
        await client.call_tool("whoami")
        await client.set_roots([{"uri": "file:///b"}])
        with anyio.fail_after(5):
            await called.wait()
    assert len(seen) == 2 and seen[0] is seen[1] and seen[0] is not None


async def test_listeners_counts_sessions_and_listen_streams_subscribed_or_not() -> None:
    server = Server("hooks-test", "0", resource_subscriptions=True)

    @server.resource("file:///x", "x")
    async def read(ctx: Context, uri: str) -> str:
        return "x"

    assert server.listeners() == 0
    async with connect_in_memory(server):
        assert server.listeners() == 1  # a connection hears list changes without subscribing
        async with connect_in_memory(server, protocol_version=MODERN) as modern:
            assert server.listeners() == 2
            async with modern.listen(resources=True):
                assert server.listeners() == 3  # and a listen stream is one more
            with anyio.fail_after(5):
                while server.listeners() != 2:
                    await server.subscriptions_changed()
        with anyio.fail_after(5):
            while server.listeners() != 1:
                await server.subscriptions_changed()
    assert server.listeners() == 0
