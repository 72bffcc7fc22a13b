"""Real processes: live reload over stdio and Streamable HTTP, both eras, through our client and the
official SDK client. Each test edits a real file after connecting and waits (bounded) for the list
change; the server's watcher rescans once when it starts, so an edit made before it runs is seen too.
"""

from __future__ import annotations

import anyio
import pytest
from mcp import Client as SDKClient
from mcp.client.subscriptions import PromptsListChanged
from plainmcp import connect_stdio
from plainmcp.http_client import connect_http

from tests.e2e.http_server import server_process
from tests.interop import sdk_client, sdk_modern

from .support import GREETING, LIVE_TIMEOUT, MODERN, dir_args, stdio_command, text_of, write

LEGACY = "2025-11-25"
PROMPTS_CHANGED = "notifications/prompts/list_changed"


class Inbox:
    def __init__(self) -> None:
        self.methods: list[str] = []

    def __call__(self, notification) -> None:
        self.methods.append(notification.method)

    async def wait(self, method: str) -> None:
        with anyio.fail_after(LIVE_TIMEOUT):
            while method not in self.methods:
                await anyio.sleep(0.02)


async def keep_editing(path, done) -> None:
    """Edit ``path`` (a real change each time) until ``done()``, bounded. Over legacy HTTP a
    notification reaches a client only once its session's GET stream is open, which a client opens
    in the background: an edit made before that is published to nobody."""
    with anyio.fail_after(LIVE_TIMEOUT):
        edit = 0
        while not done():
            edit += 1
            path.write_text(f"Edit {edit} for {{{{who}}}}", encoding="utf-8")
            with anyio.move_on_after(0.5):
                while not done():
                    await anyio.sleep(0.02)


# ------------------------------------------------------------------------------------ our client


@pytest.mark.anyio
async def test_stdio_legacy_our_client_sees_a_new_prompt(tmp_path):
    inbox = Inbox()
    async with connect_stdio(stdio_command(tmp_path), protocol_version=LEGACY, on_notification=inbox) as client:
        assert await client.list_all_prompts() == []
        write(tmp_path, "greet.md", GREETING)
        await inbox.wait(PROMPTS_CHANGED)
        result = await client.get_prompt("greet", {"who": "Ada"})
    assert text_of(result["messages"][0]) == "Say hello to Ada, warmly."


@pytest.mark.anyio
async def test_stdio_modern_our_client_listener_sees_an_edit(tmp_path):
    path = write(tmp_path, "greet.md", GREETING)
    async with connect_stdio(stdio_command(tmp_path), protocol_version=MODERN) as client:
        assert client.modern
        async with client.listen(prompts=True) as subscription:
            path.write_text("Edited for {{who}}", encoding="utf-8")
            notification = await subscription.next(timeout=LIVE_TIMEOUT)
        assert notification.method == PROMPTS_CHANGED
        result = await client.get_prompt("greet", {"who": "Ada"})
    assert text_of(result["messages"][0]) == "Edited for Ada"


@pytest.mark.anyio
@pytest.mark.parametrize("era", [LEGACY, MODERN])
async def test_http_our_client_sees_a_new_prompt(tmp_path, era):
    with server_process(*dir_args(tmp_path), module="plainmcp_prompts", transport="http") as server:
        inbox = Inbox()
        async with connect_http(server.url, protocol_version=era, on_notification=inbox) as client:
            if era == MODERN:
                async with client.listen(prompts=True) as subscription:
                    write(tmp_path, "greet.md", "Edit 1 for {{who}}")
                    notification = await subscription.next(timeout=LIVE_TIMEOUT)
                assert notification.method == PROMPTS_CHANGED
            else:
                await keep_editing(tmp_path / "greet.md", lambda: PROMPTS_CHANGED in inbox.methods)
            result = await client.get_prompt("greet", {"who": "Ada"})
    assert text_of(result["messages"][0]).endswith(" for Ada")


# ------------------------------------------------------------------------------ the official SDK


@pytest.mark.anyio
async def test_stdio_legacy_sdk_client_gets_list_changed_and_the_new_prompt(tmp_path):
    async with sdk_client.connect(stdio_command(tmp_path)) as conn:
        assert conn.init.capabilities.prompts.list_changed is True
        write(tmp_path, "greet.md", GREETING)
        await conn.wire.wait_for(lambda: conn.wire.inbound_with(PROMPTS_CHANGED), timeout=LIVE_TIMEOUT)
        with anyio.fail_after(LIVE_TIMEOUT):
            listed = await conn.session.list_prompts()
            result = await conn.session.get_prompt("greet", {"who": "Ada"})
            completion = await conn.session.complete(
                {"type": "ref/prompt", "name": "greet"}, {"name": "tone", "value": "f"}
            )
    assert [p.name for p in listed.prompts] == ["greet"]
    assert result.messages[0].content.text == "Say hello to Ada, warmly."
    assert completion.completion.values == ["formal"]


@pytest.mark.anyio
async def test_stdio_modern_sdk_client_listen_gets_prompts_list_changed(tmp_path):
    path = write(tmp_path, "greet.md", GREETING)
    async with sdk_modern.connect(stdio_command(tmp_path)) as conn:
        with anyio.fail_after(LIVE_TIMEOUT):
            async with conn.client.listen(prompts_list_changed=True) as subscription:
                assert subscription.honored.prompts_list_changed is True
                path.write_text("Edited for {{who}}", encoding="utf-8")
                assert await subscription.__anext__() == PromptsListChanged()
            result = await conn.client.get_prompt("greet", {"who": "Ada"})
    assert result.messages[0].content.text == "Edited for Ada"
    assert all(r.get("params", {}).get("_meta") for r in conn.wire.outbound_with("prompts/get"))


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_http_sdk_client_sees_an_edit(tmp_path, mode):
    path = write(tmp_path, "greet.md", GREETING)
    changed = anyio.Event()

    async def on_message(message) -> None:
        if getattr(getattr(message, "root", message), "method", None) == PROMPTS_CHANGED:
            changed.set()

    with server_process(*dir_args(tmp_path), module="plainmcp_prompts", transport="http") as server:
        with anyio.fail_after(LIVE_TIMEOUT * 2):
            async with SDKClient(server.url, mode=mode, cache=None, message_handler=on_message) as client:
                assert client.protocol_version == (LEGACY if mode == "legacy" else MODERN)
                if mode == MODERN:
                    async with client.listen(prompts_list_changed=True) as subscription:
                        path.write_text("Edit 1 for {{who}}", encoding="utf-8")
                        assert await subscription.__anext__() == PromptsListChanged()
                else:
                    await keep_editing(path, changed.is_set)
                result = await client.get_prompt("greet", {"who": "Ada"})
    assert result.messages[0].content.text.endswith(" for Ada")
