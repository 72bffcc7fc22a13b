"""The server's lifetime hooks: background tasks run while a transport serves, and the bus tells a
publisher who is listening (so a watcher can start with the first subscriber and stop with the last)."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.testing import connect_in_memory

from tests.e2e.http_server import app_in_thread

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def files_server() -> Server:
    server = Server("lifetime-test", "0", resource_subscriptions=True)

    @server.resource_template("file:///{+path}", "file")
    async def read_file(ctx: Any, uri: str, variables: dict[str, str]) -> str:
        return variables["path"]

    return server


async def test_background_task_runs_while_served_and_is_cancelled_after() -> None:
    server = files_server()
    events: list[str] = []
    started = anyio.Event()

    @server.background
    async def watcher(served: Server) -> None:
        assert served is server
        events.append("started")
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            events.append("stopped")

    async with connect_in_memory(server):
        with anyio.fail_after(5):
            await started.wait()
        assert events == ["started"]
    assert events == ["started", "stopped"]


async def test_nested_running_shares_one_set_of_tasks() -> None:
    server = files_server()
    starts: list[int] = []

    @server.background
    async def task(served: Server) -> None:
        starts.append(1)
        await anyio.sleep_forever()

    async with server.running(), server.running():
        await anyio.sleep(0.01)
    assert starts == [1]


def test_http_app_lifespan_runs_background_tasks() -> None:
    server = files_server()
    state: dict[str, bool] = {}

    @server.background
    async def task(served: Server) -> None:
        state["running"] = True
        try:
            await anyio.sleep_forever()
        finally:
            state["running"] = False

    with app_in_thread(MCPApp(server)) as running:
        with httpx.Client(trust_env=False) as http:
            assert http.get(f"{running.base_url}/health").status_code == 200
        assert state == {"running": True}
    assert state == {"running": False}


async def test_legacy_subscribe_and_unsubscribe_change_the_interest() -> None:
    server = files_server()
    async with connect_in_memory(server) as client:
        assert server.bus.subscribed_uris() == set()
        woke = anyio.Event()

        async def wait() -> None:
            await server.bus.wait_changed()
            woke.set()

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(wait)
            await anyio.sleep(0)
            await client.subscribe("file:///a/b.txt")
            with anyio.fail_after(5):
                await woke.wait()
        assert server.bus.subscribed_uris() == {"file:///a/b.txt"}
        await client.unsubscribe("file:///a/b.txt")
        assert server.bus.subscribed_uris() == set()
    assert len(server.bus) == 0


async def test_modern_listen_counts_as_interest_until_it_closes() -> None:
    server = files_server()
    async with connect_in_memory(server, protocol_version=MODERN) as client:
        async with client.listen(uris=["file:///dir"]):
            assert server.bus.subscribed_uris() == {"file:///dir"}
        with anyio.fail_after(5):
            while server.bus.subscribed_uris():
                await server.bus.wait_changed()


async def test_legacy_subscription_to_a_folder_covers_the_files_below_it() -> None:
    server = files_server()
    updates: list[str] = []
    async with connect_in_memory(
        server,
        on_notification=lambda n: updates.append(n.params["uri"]) if n.method.endswith("/updated") else None,
    ) as client:
        await client.subscribe("file:///dir")
        await server.notify_resource_updated("file:///dirty.txt")  # a prefix, not a child: not covered
        await server.notify_resource_updated("file:///dir/x.txt")
        await server.notify_resource_updated("file:///dir")
        with anyio.fail_after(5):
            while len(updates) < 2:
                await anyio.sleep(0.01)
        await client.ping()
    assert updates == ["file:///dir/x.txt", "file:///dir"]


# ------------------------------------------------------------------ libraries that come and go


async def test_declared_capabilities_answer_empty_lists_instead_of_method_not_found() -> None:
    server = Server("empty-library", "0", declare={"prompts", "resources"})
    assert {"prompts", "resources", "completions"} <= set(server.capabilities())
    assert "tools" not in server.capabilities()
    async with connect_in_memory(server) as client:
        assert await client.list_all_prompts() == []
        assert await client.list_all_resources() == []


def test_declare_refuses_what_is_not_a_capability_it_can_declare() -> None:
    with pytest.raises(ValueError, match="declare takes"):
        Server("x", "0", declare={"sampling"})


async def test_replace_prompts_swaps_the_whole_set() -> None:
    from plainmcp import Prompt

    async def text(ctx: Any, args: dict[str, Any]) -> str:
        return "hi"

    server = Server("swap", "0")
    server.add_prompt(Prompt("old", text))
    server.replace_prompts([Prompt("new-a", text), Prompt("new-b", text)])
    async with connect_in_memory(server) as client:
        assert [prompt["name"] for prompt in await client.list_all_prompts()] == ["new-a", "new-b"]
    with pytest.raises(ValueError, match="two prompts named 'dup'"):
        server.replace_prompts([Prompt("dup", text), Prompt("dup", text)])
    assert list(server.prompts) == ["new-a", "new-b"]  # a refused swap changes nothing


async def test_replace_resources_swaps_the_static_resources() -> None:
    from plainmcp import Resource

    async def read(ctx: Any, uri: str) -> str:
        return uri

    server = Server("swap", "0")
    server.add_resource(Resource("mem://old", "old", read))
    server.replace_resources([Resource("mem://new", "new", read)])
    async with connect_in_memory(server) as client:
        assert [resource["uri"] for resource in await client.list_all_resources()] == ["mem://new"]
    with pytest.raises(ValueError, match="two resources"):
        server.replace_resources([Resource("mem://x", "x", read), Resource("mem://x", "y", read)])


async def test_background_tasks_start_again_after_overlapping_entries_end_out_of_order() -> None:
    # Regression: the first entry reset the count to 0 while a nested one was still in; the nested
    # exit then left it at -1, which counted as "running", so no later entry started the tasks.
    server = files_server()
    starts: list[int] = []

    @server.background
    async def task(served: Server) -> None:
        starts.append(1)
        await anyio.sleep_forever()

    first = server.running()
    second = server.running()
    await first.__aenter__()
    await second.__aenter__()
    await anyio.sleep(0.01)
    await first.__aexit__(None, None, None)
    await second.__aexit__(None, None, None)
    async with server.running():
        await anyio.sleep(0.01)
    assert starts == [1, 1]
