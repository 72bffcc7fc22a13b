"""Subscriptions end to end in memory: a real watcher (watchfiles) on a real tree, both eras."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.config import Config
from plainmcp_filesystem.server import Deps, build_server, default_deps

from .conftest import Tree

pytestmark = pytest.mark.anyio

WAIT = 10.0  # generous bound; notifications normally arrive within debounce + 50 ms


def watched(tree: Tree, **options: Any) -> tuple[Server, Deps]:
    """A server on ``tree``, and the deps it was built with (the test watches its watcher)."""
    options.setdefault("debounce_ms", 200)
    config = Config(roots=(str(tree.root),), **options)
    deps = default_deps(config)
    return build_server(config, deps), deps


class Inbox:
    """Notifications a client received, with a bounded wait for the next matching one."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []
        self._arrived = anyio.Event()

    def __call__(self, notification: Any) -> None:
        self.items.append((notification.method, notification.params or {}))
        self._arrived.set()
        self._arrived = anyio.Event()

    async def wait_for(self, method: str, uri: str | None = None) -> None:
        with anyio.fail_after(WAIT):
            while not any(m == method and (uri is None or p.get("uri") == uri) for m, p in self.items):
                await self._arrived.wait()

    def count(self, method: str) -> int:
        return sum(1 for m, _ in self.items if m == method)


async def ready(deps: Deps) -> None:
    assert deps.watcher is not None
    with anyio.fail_after(WAIT):
        await deps.watcher.ready.wait()


async def test_watch_legacy_subscription_gets_updates_for_changes_on_disk(tree: Tree) -> None:
    server, deps = watched(tree)
    inbox = Inbox()
    uri = (tree.root / "hello.txt").as_uri()
    async with connect_in_memory(server, on_notification=inbox) as client:
        await client.subscribe(uri)
        await ready(deps)
        (tree.root / "hello.txt").write_text("changed\n")
        await inbox.wait_for("notifications/resources/updated", uri)
        (tree.root / "sub" / "created.txt").write_text("new\n")
        await inbox.wait_for("notifications/resources/list_changed")
        # A change to another file is not announced for this subscription.
        assert all(p.get("uri") == uri for m, p in inbox.items if m == "notifications/resources/updated")


async def test_watch_directory_subscription_covers_files_below_it(tree: Tree) -> None:
    server, deps = watched(tree)
    inbox = Inbox()
    directory = (tree.root / "sub").as_uri()
    async with connect_in_memory(server, on_notification=inbox) as client:
        await client.subscribe(directory)
        await ready(deps)
        (tree.root / "sub" / "deep" / "code.py").write_text("changed\n")
        await inbox.wait_for("notifications/resources/updated", directory)


async def test_watch_modern_listen_gets_updates_and_list_changes(tree: Tree) -> None:
    server, deps = watched(tree)
    uri = (tree.root / "hello.txt").as_uri()
    async with connect_in_memory(server, protocol_version="2026-07-28") as client:
        async with client.listen(resources=True, uris=[uri]) as subscription:
            await ready(deps)
            (tree.root / "hello.txt").write_text("changed\n")
            seen = set()
            with anyio.fail_after(WAIT):
                while "notifications/resources/updated" not in seen:
                    seen.add((await subscription.next()).method)
            (tree.root / "brand-new.txt").write_text("x")
            with anyio.fail_after(WAIT):
                while "notifications/resources/list_changed" not in seen:
                    seen.add((await subscription.next()).method)


async def test_watch_new_directories_are_watched_after_a_rebuild(tree: Tree) -> None:
    server, deps = watched(tree)
    inbox = Inbox()
    async with connect_in_memory(server, on_notification=inbox) as client:
        fresh = tree.root / "fresh"
        await client.subscribe(fresh.as_uri() + "/inner.txt")
        await ready(deps)
        fresh.mkdir()
        await inbox.wait_for("notifications/resources/list_changed")
        with anyio.fail_after(WAIT):
            while str(fresh) not in deps.watcher.directories:  # type: ignore[union-attr]
                await anyio.sleep(0.02)
        await ready(deps)
        (fresh / "inner.txt").write_text("hello")
        await inbox.wait_for("notifications/resources/updated", fresh.as_uri() + "/inner.txt")


async def test_watch_a_burst_of_thousands_of_changes_is_a_few_notifications(tree: Tree) -> None:
    server, deps = watched(tree, debounce_ms=500)
    inbox = Inbox()
    directory = (tree.root / "sub").as_uri()
    async with connect_in_memory(server, on_notification=inbox) as client:
        await client.subscribe(directory)
        await ready(deps)
        for index in range(3000):
            (tree.root / "sub" / f"burst{index}.txt").write_text("x")
        await inbox.wait_for("notifications/resources/list_changed")
        await anyio.sleep(1.0)  # let the tail of the burst arrive
    assert inbox.count("notifications/resources/updated") <= 10
    assert inbox.count("notifications/resources/list_changed") <= 10


async def test_watch_starts_lazily_and_stops_when_nobody_listens(tree: Tree) -> None:
    server, deps = watched(tree)
    watcher = deps.watcher
    assert watcher is not None
    async with server.running():
        await anyio.sleep(0.1)
        assert watcher.watching is False  # nobody connected: nothing watched
        async with connect_in_memory(server):
            await ready(deps)
            assert watcher.watching is True
        with anyio.fail_after(WAIT):
            while watcher.watching:
                await anyio.sleep(0.02)


async def test_watch_off_still_announces_the_servers_own_writes(tree: Tree) -> None:
    server, _ = watched(tree, watch=False, allow_write=True)
    inbox = Inbox()
    uri = (tree.root / "hello.txt").as_uri()
    async with connect_in_memory(server, on_notification=inbox) as client:
        await client.subscribe(uri)
        await client.call_tool("write_file", {"path": "hello.txt", "content": "new"})
        await inbox.wait_for("notifications/resources/updated", uri)
        await client.call_tool("write_file", {"path": "other.txt", "content": "new"})
        await inbox.wait_for("notifications/resources/list_changed")


async def test_watch_never_watches_through_a_link_out(tree: Tree) -> None:
    tree.link("out", tree.outside)
    server, deps = watched(tree)
    inbox = Inbox()
    outside_uri = (tree.root / "out" / "secret.txt").as_uri()
    marker_uri = (tree.root / "hello.txt").as_uri()
    async with connect_in_memory(server, on_notification=inbox) as client:
        await client.subscribe(outside_uri)
        await client.subscribe(marker_uri)
        await ready(deps)
        assert not any(d.startswith(str(tree.outside)) for d in deps.watcher.directories)  # type: ignore[union-attr]
        (tree.outside / "secret.txt").write_text("changed")
        (tree.outside / "dir" / "x.txt").write_text("new")
        await anyio.sleep(0.3)
        (tree.root / "hello.txt").write_text("marker")  # a change inside: the watcher is alive
        await inbox.wait_for("notifications/resources/updated", marker_uri)
    assert [p["uri"] for m, p in inbox.items if m == "notifications/resources/updated"] == [marker_uri]
