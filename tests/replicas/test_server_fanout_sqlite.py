"""sqlite on two real replicas (``plainmcp-sqlite --transport http --redis URL``) over one database file:
a listener on replica A hears a change made through replica B exactly once, also when listeners on
both replicas make both watch the file."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import pytest
from plainmcp.http_client import connect_http

from tests.e2e.http_server import server_process
from tests.servers.sqlite.support import make_shop

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
URI = "sqlite://table/customers"
WAIT = 10.0
#: After the first notification, how long nothing more may come (past the bus's 1 s dedupe window).
QUIET = 1.5
UPDATED = "notifications/resources/updated"


@contextlib.contextmanager
def two_replicas(path, redis_url: str):
    options = ("--db", str(path), "--allow-write", "--confirm-writes", "never", "--redis", redis_url)
    with (
        server_process(*options, module="plainmcp_sqlite") as one,
        server_process(*options, module="plainmcp_sqlite") as two,
    ):
        yield one, two


@contextlib.asynccontextmanager
async def listening(url: str, heard: list[str]) -> AsyncIterator[None]:
    """A 2026-07-28 listen stream on ``url`` for :data:`URI`, appending each update's URI to ``heard``."""
    async with connect_http(url, protocol_version=MODERN) as client, client.listen(uris=[URI]) as subscription:

        async def drain() -> None:
            async for notification in subscription:
                if notification.method == UPDATED:
                    heard.append(notification.params["uri"])

        async with anyio.create_task_group() as group:
            group.start_soon(drain)
            await anyio.sleep(0.5)  # the replica's watcher starts on the subscription
            yield
            group.cancel_scope.cancel()


async def insert_through(url: str, name: str) -> None:
    async with connect_http(url, protocol_version=MODERN) as client:
        result = await client.call_tool("execute", {"sql": f"INSERT INTO customers (name) VALUES ('{name}')"})
    assert not result.get("isError"), result


async def heard_once(heard: list[str]) -> None:
    with anyio.fail_after(WAIT):
        while not heard:
            await anyio.sleep(0.02)
    await anyio.sleep(QUIET)
    assert heard == [URI]


async def test_a_listener_on_one_replica_hears_a_write_through_the_other_once(tmp_path, redis_url):
    path = make_shop(tmp_path)
    heard: list[str] = []
    with two_replicas(path, redis_url) as (one, two):
        async with listening(one.url, heard):
            await insert_through(two.url, "Eve")
            await heard_once(heard)


async def test_listeners_on_both_replicas_each_hear_a_write_once(tmp_path, redis_url):
    path = make_shop(tmp_path)
    on_one: list[str] = []
    on_two: list[str] = []
    with two_replicas(path, redis_url) as (one, two):
        async with listening(one.url, on_one), listening(two.url, on_two):  # both replicas watch the file
            await insert_through(two.url, "Mallory")
            await heard_once(on_one)
            await heard_once(on_two)


async def test_a_legacy_subscriber_on_one_replica_hears_a_write_through_the_other_once(tmp_path, redis_url):
    path = make_shop(tmp_path)
    heard: list[str] = []

    async def on_notification(notification) -> None:
        if notification.method == UPDATED:
            heard.append(notification.params["uri"])

    with two_replicas(path, redis_url) as (one, two):
        async with connect_http(one.url, on_notification=on_notification) as client:
            await client.subscribe(URI)
            await anyio.sleep(0.5)
            await insert_through(two.url, "Trent")
            await heard_once(heard)
