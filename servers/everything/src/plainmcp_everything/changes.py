"""What changes while the server runs, and the tools that change it.

- ``test_trigger_tool_change`` / ``test_trigger_prompt_change`` / ``test_trigger_resource_change``
  take ``test_dynamic_tool`` / ``test_dynamic_prompt`` / ``test://dynamic-resource`` out of their
  list, or put them back, and publish the ``list_changed`` notification.
- ``test_trigger_resource_update`` gives ``test://watched-resource`` a new revision and publishes
  ``notifications/resources/updated`` for it.

The core delivers a publication to every client that asked for it: a 2025-11-25 session gets list
changes once initialized and resource updates after ``resources/subscribe``; a 2026-07-28 client gets
them on its ``subscriptions/listen`` stream, if its filter names them, tagged with the subscription id.
The state here belongs to one ``build_server()`` call (one :class:`Changes`): no module-level state.
"""

from __future__ import annotations

from typing import Any

from plainmcp import Context, Prompt, Resource, Server, Tool, ToolResult

from .tools import text_result

WATCHED_URI = "test://watched-resource"
WATCHED_TEXT = "Watched resource content"
DYNAMIC_URI = "test://dynamic-resource"


async def dynamic_tool(ctx: Context, args: dict[str, Any]) -> ToolResult:
    return text_result("This tool can be removed and added back at run time.")


async def dynamic_prompt(ctx: Context, args: dict[str, str]) -> str:
    return "This prompt can be removed and added back at run time."


async def read_dynamic(ctx: Context, uri: str) -> str:
    return "This resource can be removed and added back at run time."


class Changes:
    """What one server changes at run time: the watched resource's revision, and the dynamic tool, prompt
    and resource the trigger tools take away and bring back. Its ``test_trigger_*`` methods are those tools.
    """

    def __init__(self, server: Server) -> None:
        self.server = server
        self.revision = 0
        self.watched = Resource(
            WATCHED_URI,
            "watched-resource",
            self.read_watched,
            title="Watched Resource",
            description="A resource to subscribe to: test_trigger_resource_update changes it",
            mime_type="text/plain",
        )
        self.tool = Tool(
            "test_dynamic_tool",
            dynamic_tool,
            description="Dynamically added/removed tool: test_trigger_tool_change takes it away or brings it back",
        )
        self.prompt = Prompt(
            "test_dynamic_prompt",
            dynamic_prompt,
            description="Dynamically added/removed prompt: test_trigger_prompt_change takes it away or brings it back",
        )
        self.resource = Resource(
            DYNAMIC_URI,
            "dynamic-resource",
            read_dynamic,
            description="Dynamically added/removed resource: test_trigger_resource_change takes it away or brings it back",
            mime_type="text/plain",
        )

    async def read_watched(self, ctx: Context, uri: str) -> str:
        return WATCHED_TEXT if self.revision == 0 else f"{WATCHED_TEXT} (revision {self.revision})"

    async def test_trigger_tool_change(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Removes test_dynamic_tool, or adds it back, and sends notifications/tools/list_changed"""
        if self.tool.name in self.server.tools:
            self.server.remove_tool(self.tool.name)
            done = "Removed"
        else:
            self.server.add_tool(self.tool)
            done = "Added"
        await ctx.notify_tools_changed()
        return text_result(f"{done} tool {self.tool.name}")

    async def test_trigger_prompt_change(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Removes test_dynamic_prompt, or adds it back, and sends notifications/prompts/list_changed"""
        if self.prompt.name in self.server.prompts:
            self.server.remove_prompt(self.prompt.name)
            done = "Removed"
        else:
            self.server.add_prompt(self.prompt)
            done = "Added"
        await ctx.notify_prompts_changed()
        return text_result(f"{done} prompt {self.prompt.name}")

    async def test_trigger_resource_change(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Removes test://dynamic-resource, or adds it back, and sends notifications/resources/list_changed"""
        if self.resource.uri in self.server.resources:
            self.server.remove_resource(self.resource.uri)
            done = "Removed"
        else:
            self.server.add_resource(self.resource)
            done = "Added"
        await ctx.notify_resources_changed()
        return text_result(f"{done} resource {self.resource.uri}")

    async def test_trigger_resource_update(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Gives test://watched-resource a new revision and sends notifications/resources/updated to its subscribers"""
        self.revision += 1
        await ctx.notify_resource_updated(WATCHED_URI)
        return text_result(f"Updated {WATCHED_URI} to revision {self.revision}")


def register(server: Server) -> None:
    """Register the watched and dynamic fixtures, then the trigger tools, in listing order."""
    changes = Changes(server)
    server.add_resource(changes.watched)
    server.add_tool(changes.tool)
    server.add_prompt(changes.prompt)
    server.add_resource(changes.resource)
    server.tool()(changes.test_trigger_tool_change)
    server.tool()(changes.test_trigger_prompt_change)
    server.tool()(changes.test_trigger_resource_change)
    server.tool()(changes.test_trigger_resource_update)
