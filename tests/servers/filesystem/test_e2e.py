"""Subscriptions end to end with real processes: stdio and HTTP, both eras, our client and the SDK's.

The server runs as ``python -m plainmcp_filesystem`` on a real temporary tree with its real watcher.
The watcher starts when the first client connects, so a test changes the file until the first
notification arrives (each wait bounded), then checks what came.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp.http_client import connect_http

from tests.e2e.http_server import server_process

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

MODERN = "2026-07-28"
ATTEMPTS = 20
PER_ATTEMPT = 0.5


def command(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", str(root), "--debounce-ms", "100", *extra]


async def poke_until(path: Path, arrived: Callable[[], bool]) -> None:
    """Rewrite ``path`` until ``arrived()`` (bounded: ATTEMPTS x PER_ATTEMPT seconds)."""
    for attempt in range(ATTEMPTS):
        path.write_text(f"revision {attempt}\n")
        with anyio.move_on_after(PER_ATTEMPT):
            while not arrived():
                await anyio.sleep(0.02)
        if arrived():
            return
    raise AssertionError(f"no notification for {path} after {ATTEMPTS} changes")


class Inbox:
    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, notification: Any) -> None:
        self.items.append((notification.method, notification.params or {}))

    def has(self, method: str, uri: str | None = None) -> bool:
        return any(m == method and (uri is None or p.get("uri") == uri) for m, p in self.items)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "watched.txt").write_text("start\n")
    return tmp_path


async def legacy_roundtrip(client: Any, inbox: Inbox, root: Path) -> None:
    uri = (root / "watched.txt").as_uri()
    await client.subscribe(uri)
    await poke_until(root / "watched.txt", lambda: inbox.has("notifications/resources/updated", uri))
    (root / "created.txt").write_text("new")
    with anyio.fail_after(10):
        while not inbox.has("notifications/resources/list_changed"):
            await anyio.sleep(0.02)
    read = await client.read_resource(uri)
    assert read["contents"][0]["text"].startswith("revision")


async def modern_roundtrip(client: Any, root: Path) -> None:
    uri = (root / "watched.txt").as_uri()
    methods: list[str] = []

    async with client.listen(resources=True, uris=[uri]) as subscription:

        async def drain() -> None:
            async for notification in subscription:
                methods.append(notification.method)

        async with anyio.create_task_group() as group:
            group.start_soon(drain)
            await poke_until(root / "watched.txt", lambda: "notifications/resources/updated" in methods)
            (root / "created.txt").write_text("new")
            with anyio.fail_after(10):
                while "notifications/resources/list_changed" not in methods:
                    await anyio.sleep(0.02)
            group.cancel_scope.cancel()


async def test_e2e_stdio_legacy_subscription(root: Path) -> None:
    inbox = Inbox()
    async with connect_stdio(command(root), on_notification=inbox) as client:
        await legacy_roundtrip(client, inbox, root)


async def test_e2e_stdio_modern_listen(root: Path) -> None:
    async with connect_stdio(command(root), protocol_version=MODERN) as client:
        await modern_roundtrip(client, root)


async def test_e2e_http_legacy_subscription(root: Path) -> None:
    inbox = Inbox()
    with server_process(str(root), "--debounce-ms", "100", module="plainmcp_filesystem", transport="http") as server:
        async with connect_http(server.url, on_notification=inbox) as client:
            await legacy_roundtrip(client, inbox, root)


async def test_e2e_http_modern_listen(root: Path) -> None:
    with server_process(str(root), "--debounce-ms", "100", module="plainmcp_filesystem", transport="http") as server:
        async with connect_http(server.url, protocol_version=MODERN) as client:
            await modern_roundtrip(client, root)


async def test_e2e_stdio_read_only_and_write_flags(root: Path) -> None:
    async with connect_stdio(command(root)) as client:
        names = {tool["name"] for tool in await client.list_all_tools()}
        assert "write_file" not in names and "read_text_file" in names
    async with connect_stdio(command(root, "--allow-write", "--allow-delete")) as client:
        names = {tool["name"] for tool in await client.list_all_tools()}
        assert {"write_file", "delete_file"} <= names
        assert client.server_info["name"] == "plainmcp-filesystem"


async def test_e2e_missing_directory_exits_with_a_message(tmp_path: Path) -> None:
    result = await anyio.run_process(
        [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path / "missing")], check=False
    )
    assert result.returncode != 0
    assert b"name at least one existing directory" in result.stderr
    assert result.stdout == b""


# ------------------------------------------------------------------------------ the official SDK


async def test_e2e_sdk_stdio_legacy_subscription(root: Path) -> None:
    from tests.interop.sdk_client import connect

    uri = (root / "watched.txt").as_uri()
    async with connect(command(root)) as conn:
        assert conn.init.capabilities.resources.subscribe is True
        with anyio.fail_after(10):
            await conn.session.subscribe_resource(uri)

        def arrived() -> bool:
            return any(
                m.get("params", {}).get("uri") == uri for m in conn.wire.inbound_with("notifications/resources/updated")
            )

        await poke_until(root / "watched.txt", arrived)
        with anyio.fail_after(10):
            read = await conn.session.read_resource(uri)
        assert read.contents[0].text.startswith("revision")


async def test_e2e_sdk_http_modern_listen(root: Path) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    with server_process(str(root), "--debounce-ms", "100", module="plainmcp_filesystem", transport="http") as server:
        with anyio.fail_after(60):
            async with Client(streamable_http_client(server.url), mode=MODERN) as client:
                await _sdk_listen_until_updated(client, root)


async def _sdk_listen_until_updated(client: Any, root: Path) -> None:
    from mcp.client.subscriptions import ResourceUpdated

    uri = (root / "watched.txt").as_uri()
    async with client.listen(resource_subscriptions=[uri]) as subscription:
        seen: list[Any] = []

        async def drain() -> None:
            async for event in subscription:
                seen.append(event)

        async with anyio.create_task_group() as group:
            group.start_soon(drain)
            await poke_until(root / "watched.txt", lambda: ResourceUpdated(uri=uri) in seen)
            group.cancel_scope.cancel()


async def test_e2e_sdk_stdio_modern_listen(root: Path) -> None:
    from tests.interop.sdk_modern import connect

    async with connect(command(root)) as conn:
        await _sdk_listen_until_updated(conn.client, root)


async def test_e2e_sdk_http_legacy_subscription(root: Path) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    uri = (root / "watched.txt").as_uri()
    updates: list[str] = []

    async def on_message(message: Any) -> None:
        params = getattr(message, "params", None)
        if getattr(message, "method", None) == "notifications/resources/updated" and params is not None:
            updates.append(str(params.uri))

    with server_process(str(root), "--debounce-ms", "100", module="plainmcp_filesystem", transport="http") as server:
        with anyio.fail_after(60):
            async with Client(streamable_http_client(server.url), mode="legacy", message_handler=on_message) as client:
                await client.subscribe_resource(uri)
                await poke_until(root / "watched.txt", lambda: uri in updates)


async def test_e2e_benchmark_smoke_run(tmp_path: Path) -> None:
    """The benchmark runs (ours only, a tiny tree): it is not a test of speed, only that it works."""
    script = Path(__file__).resolve().parents[3] / "bench" / "filesystem_bench.py"
    result = await anyio.run_process(
        [sys.executable, str(script), "--files", "300", "--reps", "1", "--no-peer", "--base", str(tmp_path)],
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    output = result.stdout.decode()
    for operation in ("directory_tree", "search_files", "list_directory"):
        assert operation in output
