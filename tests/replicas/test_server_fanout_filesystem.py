"""filesystem on two real replicas (``plainmcp-filesystem --transport http --redis URL``) over one
directory: a listener on replica A hears a file written through replica B exactly once, also when
listeners on both replicas make both watch the directory."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from plainmcp.http_client import connect_http

from tests.e2e.http_server import server_process

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
WAIT = 10.0
#: After the first notification, how long nothing more may come (past the bus's 1 s dedupe window).
QUIET = 1.5
UPDATED = "notifications/resources/updated"


@contextlib.contextmanager
def two_replicas(root: Path, redis_url: str):
    options = (str(root), "--allow-write", "--debounce-ms", "100", "--redis", redis_url)
    module = "plainmcp_filesystem"
    with server_process(*options, module=module) as one, server_process(*options, module=module) as two:
        yield one, two


@contextlib.asynccontextmanager
async def listening(url: str, uri: str, heard: list[str], ready: Path) -> AsyncIterator[None]:
    """A 2026-07-28 listen stream for ``uri``, appending each update's URI to ``heard``; yields once
    the replica's watcher is seen to work (a change to ``ready``, which is watched too, was heard)."""
    warm: list[str] = []
    async with connect_http(url, protocol_version=MODERN) as client:
        async with client.listen(uris=[uri, ready.as_uri()]) as subscription:

            async def drain() -> None:
                async for notification in subscription:
                    if notification.method == UPDATED:
                        changed = notification.params["uri"]
                        (heard if changed == uri else warm).append(changed)

            async with anyio.create_task_group() as group:
                group.start_soon(drain)
                with anyio.fail_after(WAIT):
                    while not warm:
                        ready.write_text(f"poke {anyio.current_time()}")
                        await anyio.sleep(0.2)
                yield
                group.cancel_scope.cancel()


async def write_through(url: str, path: Path, text: str) -> None:
    async with connect_http(url, protocol_version=MODERN) as client:
        result = await client.call_tool("write_file", {"path": str(path), "content": text})
    assert not result.get("isError"), result


async def heard_once(heard: list[str], uri: str) -> None:
    with anyio.fail_after(WAIT):
        while not heard:
            await anyio.sleep(0.02)
    await anyio.sleep(QUIET)
    assert heard == [uri]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("first")
    (tmp_path / "ready-1.txt").write_text("")
    (tmp_path / "ready-2.txt").write_text("")
    return tmp_path


async def test_a_listener_on_one_replica_hears_a_write_through_the_other_once(root, redis_url):
    target = root / "notes.txt"
    heard: list[str] = []
    with two_replicas(root, redis_url) as (one, two):
        async with listening(one.url, target.as_uri(), heard, root / "ready-1.txt"):
            await write_through(two.url, target, "second")
            await heard_once(heard, target.as_uri())
    assert target.read_text() == "second"


async def test_listeners_on_both_replicas_each_hear_a_write_once(root, redis_url):
    target = root / "notes.txt"
    on_one: list[str] = []
    on_two: list[str] = []
    with two_replicas(root, redis_url) as (one, two):
        async with (
            listening(one.url, target.as_uri(), on_one, root / "ready-1.txt"),
            listening(two.url, target.as_uri(), on_two, root / "ready-2.txt"),
        ):
            await write_through(two.url, target, "third")  # replica two watches too: it is told once, by itself
            await heard_once(on_one, target.as_uri())
            await heard_once(on_two, target.as_uri())
