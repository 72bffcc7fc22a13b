"""``Server.subscription_ready``: gates a server's watcher uses so that a subscription is acknowledged only
once the change it asks about would be reported (``resources/subscribe``'s result, ``subscriptions/listen``'s
acknowledgement). In memory, both eras; the filesystem server's use of it over stdio is
tests/servers/filesystem/test_subscribe_ready.py."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.testing import connect_in_memory

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

MODERN = "2026-07-28"
URI = "note://a"


def gated_server() -> tuple[Server, list[frozenset[str]], anyio.Event]:
    """A server whose gate records the URIs it is asked about and returns once the event is set."""
    server = Server("gate-test", "0", resource_subscriptions=True)
    asked: list[frozenset[str]] = []
    release = anyio.Event()

    @server.resource(URI, "a")
    async def read(ctx: Any, uri: str) -> str:
        return "a"

    @server.subscription_ready
    async def gate(uris: frozenset[str]) -> None:
        asked.append(uris)
        await release.wait()

    return server, asked, release


async def test_subscription_ready_holds_the_legacy_subscribe_result_until_the_gate_returns() -> None:
    server, asked, release = gated_server()
    answered = anyio.Event()
    with anyio.fail_after(10):
        async with connect_in_memory(server) as client, anyio.create_task_group() as group:

            async def subscribe() -> None:
                await client.subscribe(URI)
                answered.set()

            group.start_soon(subscribe)
            while not asked:
                await anyio.sleep(0.01)
            await anyio.wait_all_tasks_blocked()
            assert not answered.is_set()
            release.set()
            await answered.wait()
    assert asked == [frozenset({URI})]


async def test_subscription_ready_holds_the_listen_acknowledgement_until_the_gate_returns() -> None:
    server, asked, release = gated_server()
    acknowledged = anyio.Event()
    with anyio.fail_after(10):
        async with connect_in_memory(server, protocol_version=MODERN) as client, anyio.create_task_group() as group:

            async def listen() -> None:
                async with client.listen(uris=[URI]):
                    acknowledged.set()

            group.start_soon(listen)
            while not asked:
                await anyio.sleep(0.01)
            await anyio.wait_all_tasks_blocked()
            assert not acknowledged.is_set()
            release.set()
            await acknowledged.wait()
    assert asked == [frozenset({URI})]
