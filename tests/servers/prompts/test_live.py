"""Live reload in process: real files, real watchfiles, notifications in both eras."""

from __future__ import annotations

import dataclasses
import os

import anyio
import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_prompts.server import build_server, default_deps

from .support import GREETING, LIVE_TIMEOUT, MODERN, config_over, text_of, write

PROMPTS_CHANGED = "notifications/prompts/list_changed"


class Inbox:
    """Notifications a legacy client received, with a bounded wait for the next one of a method."""

    def __init__(self) -> None:
        self.received: list[str] = []
        self._arrived = anyio.Event()

    def __call__(self, notification) -> None:
        self.received.append(notification.method)
        self._arrived.set()
        self._arrived = anyio.Event()

    async def wait(self, method: str, count: int = 1) -> None:
        with anyio.fail_after(LIVE_TIMEOUT):
            while self.received.count(method) < count:
                await self._arrived.wait()


class Watched:
    """A watching server over ``directory``, and the moment its watcher has caught up."""

    def __init__(self, directory) -> None:
        config = config_over(directory, watch=True, debounce_ms=30)
        self._caught_up = anyio.Event()
        self.server = build_server(config, dataclasses.replace(default_deps(config), caught_up=self._caught_up.set))

    async def caught_up(self) -> None:
        """Wait (bounded) until the watcher runs and has caught up: it sees every change from then on."""
        with anyio.fail_after(LIVE_TIMEOUT):
            await self._caught_up.wait()


@pytest.mark.anyio
async def test_legacy_client_gets_list_changed_on_add_edit_and_remove(tmp_path):
    inbox = Inbox()
    watched = Watched(tmp_path)
    async with connect_in_memory(watched.server, on_notification=inbox) as client:
        await watched.caught_up()
        write(tmp_path, "greet.md", GREETING)
        await inbox.wait(PROMPTS_CHANGED, 1)
        assert [p["name"] for p in await client.list_all_prompts()] == ["greet"]

        write(tmp_path, "greet.md", "Hello {{who}}!")
        await inbox.wait(PROMPTS_CHANGED, 2)
        assert text_of((await client.get_prompt("greet", {"who": "Ada"}))["messages"][0]) == "Hello Ada!"

        os.unlink(tmp_path / "greet.md")
        await inbox.wait(PROMPTS_CHANGED, 3)
        assert await client.list_all_prompts() == []
        assert "notifications/resources/list_changed" in inbox.received


@pytest.mark.anyio
async def test_modern_listener_gets_list_changed_and_a_broken_edit_keeps_the_last_version(tmp_path):
    path = write(tmp_path, "greet.md", GREETING)
    watched = Watched(tmp_path)
    async with connect_in_memory(watched.server, protocol_version=MODERN) as client:
        async with client.listen(prompts=True) as subscription:
            await watched.caught_up()
            path.write_text("---\narguments: [who\n---\nBroken {{who}}", encoding="utf-8")
            # A broken save publishes nothing: the last valid version is still served.
            with anyio.move_on_after(1.0):
                await subscription.next()
                pytest.fail("a broken edit was published")
            result = await client.get_prompt("greet", {"who": "Ada"})
            assert text_of(result["messages"][0]) == "Say hello to Ada, warmly."

            path.write_text("---\narguments: [who]\n---\nFixed {{who}}", encoding="utf-8")
            notification = await subscription.next(timeout=LIVE_TIMEOUT)
            assert notification.method == PROMPTS_CHANGED
            result = await client.get_prompt("greet", {"who": "Ada"})
            assert text_of(result["messages"][0]) == "Fixed Ada"


@pytest.mark.anyio
async def test_saving_without_a_change_publishes_nothing(tmp_path):
    path = write(tmp_path, "greet.md", GREETING)
    inbox = Inbox()
    watched = Watched(tmp_path)
    async with connect_in_memory(watched.server, on_notification=inbox):
        await watched.caught_up()
        path.write_text(path.read_text(), encoding="utf-8")
        write(tmp_path, "notes.txt", "not a prompt")
        await anyio.sleep(1.0)
        assert PROMPTS_CHANGED not in inbox.received


@pytest.mark.anyio
async def test_subscribed_source_gets_resource_updated(tmp_path):
    path = write(tmp_path, "greet.md", GREETING)
    inbox = Inbox()
    watched = Watched(tmp_path)
    async with connect_in_memory(watched.server, on_notification=inbox) as client:
        await client.subscribe("prompts://source/greet")
        await watched.caught_up()
        path.write_text("Hi {{who}}", encoding="utf-8")
        await inbox.wait("notifications/resources/updated")
        assert (await client.read_resource("prompts://source/greet"))["contents"][0]["text"] == "Hi {{who}}"
