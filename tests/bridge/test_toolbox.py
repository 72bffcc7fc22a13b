"""Several real servers over stdio: tools namespaced on collision, calls routed, the list kept current
(tools/list_changed in both eras) and the system prompt rebuilt from it."""

from __future__ import annotations

import re
import sys

import anyio
import pytest
from plainmcp_bridge.prompt import build_system_prompt
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.toolbox import MAX_TOOLS, Toolbox, open_toolbox

pytestmark = pytest.mark.anyio

EVERYTHING = (sys.executable, "-m", "plainmcp_everything", "--log-level", "warning")


async def test_tools_keep_their_names_and_calls_are_routed() -> None:
    specs = [ServerSpec("everything", command=EVERYTHING)]
    async with open_toolbox(specs, stderr="discard") as toolbox:
        names = [tool["name"] for tool in toolbox.tools]
        assert "test_simple_text" in names and not any("__" in name for name in names)
        result = await toolbox.call("test_simple_text", {})
        assert not result.get("isError")
        assert toolbox.route("test_simple_text") == ("everything", "test_simple_text")


async def test_colliding_names_are_namespaced_by_server() -> None:
    specs = [ServerSpec("one", command=EVERYTHING), ServerSpec("two.b", command=EVERYTHING)]
    async with open_toolbox(specs, stderr="discard") as toolbox:
        names = {tool["name"] for tool in toolbox.tools}
        assert {"one__test_simple_text", "two_b__test_simple_text"} <= names
        assert "test_simple_text" not in names
        assert toolbox.route("two_b__test_simple_text") == ("two.b", "test_simple_text")
        result = await toolbox.call("two_b__test_simple_text", {})
        assert not result.get("isError")
        with pytest.raises(KeyError):
            toolbox.route("test_simple_text")


@pytest.mark.parametrize("version", ["auto", "2025-11-25"])
async def test_list_changed_refreshes_the_tools_and_the_prompt(version: str) -> None:
    # 2026-07-28 (auto) sends the notification on a listen stream; the legacy era on the connection itself.
    specs = [ServerSpec("everything", command=EVERYTHING)]
    async with open_toolbox(specs, protocol_version=version, stderr="discard") as toolbox:
        assert toolbox.servers["everything"].modern == (version == "auto")
        assert "\ntest_dynamic_tool: " in build_system_prompt(toolbox.tools)
        before = toolbox.version
        await toolbox.call("test_trigger_tool_change", {})
        for _ in range(100):  # the notification may trail the result a little
            if toolbox.stale:
                break
            await anyio.sleep(0.02)
        assert await toolbox.refresh_if_stale()
        assert toolbox.version == before + 1
        assert "\ntest_dynamic_tool: " not in build_system_prompt(toolbox.tools)
        assert "test_dynamic_tool" not in [tool["name"] for tool in toolbox.tools]
        assert not await toolbox.refresh_if_stale()


async def test_an_error_in_the_block_comes_out_as_itself() -> None:
    # Both eras: the 2026-07-28 listen stream adds a task group that would otherwise wrap it.
    with pytest.raises(KeyError):
        async with open_toolbox([ServerSpec("everything", command=EVERYTHING)], stderr="discard") as toolbox:
            toolbox.route("no_such_tool")


class ListingOnly:
    """A server that only lists tools: enough to check how the toolbox names them."""

    def __init__(self, names: list[str]) -> None:
        self.names = names

    async def list_all_tools(self) -> list[dict]:
        return [{"name": name, "inputSchema": {"type": "object"}} for name in self.names]


async def test_names_the_chat_apis_would_refuse_are_made_acceptable_and_routed_back() -> None:
    toolbox = Toolbox()
    long = "x" * 70
    await toolbox.add("odd", ListingOnly(["get weather", "get_weather", long, "", "ünïcode"]))  # type: ignore[arg-type]
    names = [tool["name"] for tool in toolbox.tools]
    # A name that is acceptable keeps it; the renamed ones go around it.
    assert names == ["get_weather_2", "get_weather", "x" * 64, "tool", "_n_code"]
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name) for name in names)
    assert toolbox.route("get_weather") == ("odd", "get_weather")
    assert toolbox.route("get_weather_2") == ("odd", "get weather")
    assert toolbox.route("x" * 64) == ("odd", long)


async def test_at_most_128_tools_are_offered() -> None:
    toolbox = Toolbox()
    await toolbox.add("many", ListingOnly([f"tool_{i}" for i in range(300)]))  # type: ignore[arg-type]
    assert len(toolbox.tools) == MAX_TOOLS == 128
    assert toolbox.tools[-1]["name"] == "tool_127"
