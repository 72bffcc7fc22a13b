"""What changes at run time: the trigger tools, list_changed and resource updates, in both eras.

Legacy clients get list changes once initialized and resource updates after resources/subscribe;
2026-07-28 clients only on a subscriptions/listen stream whose filter names them.
"""

from __future__ import annotations

import anyio
import pytest
from plainmcp import MCPError
from plainmcp.testing import connect_in_memory
from plainmcp_everything import Config, build_server

from .support import ERAS, LEGACY, MODERN, QUICK, SUBSCRIPTION_ID, Recorder, connect, only_text

pytestmark = pytest.mark.anyio

TRIGGERS = [
    # (tool, what it toggles, list method, list key, identifying field, notification)
    (
        "test_trigger_tool_change",
        "tool test_dynamic_tool",
        "tools/list",
        "tools",
        "name",
        "notifications/tools/list_changed",
    ),
    (
        "test_trigger_prompt_change",
        "prompt test_dynamic_prompt",
        "prompts/list",
        "prompts",
        "name",
        "notifications/prompts/list_changed",
    ),
    (
        "test_trigger_resource_change",
        "resource test://dynamic-resource",
        "resources/list",
        "resources",
        "uri",
        "notifications/resources/list_changed",
    ),
]


async def call(client, name):
    with anyio.fail_after(QUICK):
        return only_text(await client.call_tool(name, {}))


async def listed(client, method, key, field):
    with anyio.fail_after(QUICK):
        return [entry[field] for entry in (await client.request(method))[key]]


@pytest.mark.parametrize(("tool", "toggled", "method", "key", "field", "notification"), TRIGGERS)
async def test_legacy_trigger_removes_then_restores_and_notifies(tool, toggled, method, key, field, notification):
    recorder = Recorder()
    target = toggled.split(" ", 1)[1]
    async with connect(LEGACY, recorder) as client:
        assert target in await listed(client, method, key, field)
        assert await call(client, tool) == f"Removed {toggled}"
        assert target not in await listed(client, method, key, field)
        assert recorder.params_of(notification) == [{}]
        assert await call(client, tool) == f"Added {toggled}"
        assert (await listed(client, method, key, field))[-1] == target
    assert recorder.methods() == [notification, notification]


@pytest.mark.parametrize("era", ERAS)
async def test_a_removed_tool_cannot_be_called(era):
    async with connect(era) as client:
        await call(client, "test_trigger_tool_change")
        with pytest.raises(MCPError) as caught, anyio.fail_after(QUICK):
            await client.call_tool("test_dynamic_tool", {})
        assert caught.value.code == -32602
        await call(client, "test_trigger_tool_change")
        assert await call(client, "test_dynamic_tool") == "This tool can be removed and added back at run time."


async def test_legacy_resource_update_reaches_only_subscribers():
    recorder = Recorder()
    async with connect(LEGACY, recorder) as client:
        assert await call(client, "test_trigger_resource_update") == "Updated test://watched-resource to revision 1"
        assert recorder.notifications == []  # not subscribed yet
        await client.subscribe("test://watched-resource")
        assert await call(client, "test_trigger_resource_update") == "Updated test://watched-resource to revision 2"
        assert recorder.params_of("notifications/resources/updated") == [{"uri": "test://watched-resource"}]
        with anyio.fail_after(QUICK):
            contents = (await client.read_resource("test://watched-resource"))["contents"]
        assert contents == [
            {
                "uri": "test://watched-resource",
                "mimeType": "text/plain",
                "text": "Watched resource content (revision 2)",
            }
        ]
        await client.unsubscribe("test://watched-resource")
        await call(client, "test_trigger_resource_update")
    assert recorder.methods() == ["notifications/resources/updated"]


async def test_modern_listen_gets_tools_list_changed_tagged_with_its_id():
    async with connect(MODERN) as client:
        async with client.listen(tools=True) as subscription:
            assert subscription.agreed == {"toolsListChanged": True}
            assert await call(client, "test_trigger_tool_change") == "Removed tool test_dynamic_tool"
            notification = await subscription.next(timeout=QUICK)
    assert notification.method == "notifications/tools/list_changed"
    assert notification.params == {"_meta": {SUBSCRIPTION_ID: subscription.id}}


@pytest.mark.parametrize(("tool", "toggled", "method", "key", "field", "notification"), TRIGGERS)
async def test_modern_listen_filters_by_type(tool, toggled, method, key, field, notification):
    """A stream gets only what its filter names: trigger every kind, and only the wanted one arrives."""
    async with connect(MODERN) as client:
        async with client.listen(**{key: True}) as subscription:  # tools=True, prompts=True, resources=True
            for other, *_ in TRIGGERS:
                await call(client, other)
            first = await subscription.next(timeout=QUICK)
            with pytest.raises(TimeoutError):
                await subscription.next(timeout=0.2)
    assert first.method == notification


async def test_modern_listen_for_a_resource_gets_its_updates():
    async with connect(MODERN) as client:
        async with client.listen(uris=["test://watched-resource"]) as subscription:
            assert subscription.agreed == {"resourceSubscriptions": ["test://watched-resource"]}
            await call(client, "test_trigger_resource_change")  # a list change: not asked for
            await call(client, "test_trigger_resource_update")
            notification = await subscription.next(timeout=QUICK)
    assert notification.method == "notifications/resources/updated"
    assert notification.params == {"uri": "test://watched-resource", "_meta": {SUBSCRIPTION_ID: subscription.id}}


async def test_modern_client_without_a_listen_gets_no_change_notifications():
    recorder = Recorder()
    async with connect(MODERN, recorder) as client:
        for tool, *_ in TRIGGERS:
            await call(client, tool)
        await call(client, "test_trigger_resource_update")
    assert recorder.notifications == []


async def test_changes_reach_other_clients_of_the_same_server():
    """One server, two clients of different eras: a change one makes is published to the other."""
    server = build_server(Config())
    legacy_recorder = Recorder()
    async with connect_in_memory(server, protocol_version=MODERN) as modern:
        async with connect(LEGACY, legacy_recorder, server=server) as legacy:
            async with modern.listen(prompts=True) as subscription:
                assert await call(legacy, "test_trigger_prompt_change") == "Removed prompt test_dynamic_prompt"
                notification = await subscription.next(timeout=QUICK)
                assert await call(modern, "test_trigger_prompt_change") == "Added prompt test_dynamic_prompt"
                await legacy_recorder.wait_for("notifications/prompts/list_changed", count=2)
    assert notification.method == "notifications/prompts/list_changed"


@pytest.mark.parametrize("era", ERAS)
async def test_each_server_has_its_own_state(era):
    """build_server() keeps no module-level state: a change on one server leaves another as it was."""
    async with connect(era) as one, connect(era) as other:
        await call(one, "test_trigger_tool_change")
        await call(one, "test_trigger_resource_update")
        assert "test_dynamic_tool" in await listed(other, "tools/list", "tools", "name")
        with anyio.fail_after(QUICK):
            contents = (await other.read_resource("test://watched-resource"))["contents"]
        assert contents[0]["text"] == "Watched resource content"
