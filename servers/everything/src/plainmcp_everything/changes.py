"""What changes while the server runs, and the tools that change it.

- ``test_trigger_tool_change`` / ``test_trigger_prompt_change`` / ``test_trigger_resource_change``
  take ``test_dynamic_tool`` / ``test_dynamic_prompt`` / ``test://dynamic-resource`` out of their
  list, or put them back, and publish the ``list_changed`` notification.
- ``test_trigger_resource_update`` gives ``test://watched-resource`` a new revision and publishes
  ``notifications/resources/updated`` for it.

The core delivers a publication to every client that asked for it: a 2025-11-25 session gets list
changes once initialized and resource updates after ``resources/subscribe``; a 2026-07-28 client gets
them on its ``subscriptions/listen`` stream, if its filter names them, tagged with the subscription id.
The state here belongs to one ``build_server()`` call: no module-level state.
"""

from __future__ import annotations

from plainmcp import Prompt, Resource, Server, Tool

WATCHED_URI = "test://watched-resource"
WATCHED_TEXT = "Watched resource content"
DYNAMIC_URI = "test://dynamic-resource"


def register(server: Server) -> None:
    revision = 0

    async def read_watched(ctx, uri):
        return WATCHED_TEXT if revision == 0 else f"{WATCHED_TEXT} (revision {revision})"

    server.add_resource(
        Resource(
            WATCHED_URI,
            "watched-resource",
            read_watched,
            title="Watched Resource",
            description="A resource to subscribe to: test_trigger_resource_update changes it",
            mime_type="text/plain",
        )
    )

    async def dynamic_tool(ctx, args):
        return "This tool can be removed and added back at run time."

    async def dynamic_prompt(ctx, args):
        return "This prompt can be removed and added back at run time."

    async def read_dynamic(ctx, uri):
        return "This resource can be removed and added back at run time."

    tool = server.add_tool(
        Tool(
            "test_dynamic_tool",
            dynamic_tool,
            description="Dynamically added/removed tool: test_trigger_tool_change takes it away or brings it back",
        )
    )
    prompt = server.add_prompt(
        Prompt(
            "test_dynamic_prompt",
            dynamic_prompt,
            description="Dynamically added/removed prompt: test_trigger_prompt_change takes it away or brings it back",
        )
    )
    resource = server.add_resource(
        Resource(
            DYNAMIC_URI,
            "dynamic-resource",
            read_dynamic,
            description="Dynamically added/removed resource: test_trigger_resource_change takes it away or brings it back",
            mime_type="text/plain",
        )
    )

    @server.tool()
    async def test_trigger_tool_change(ctx, args):
        """Removes test_dynamic_tool, or adds it back, and sends notifications/tools/list_changed"""
        if tool.name in server.tools:
            server.remove_tool(tool.name)
            done = "Removed"
        else:
            server.add_tool(tool)
            done = "Added"
        await ctx.notify_tools_changed()
        return f"{done} tool {tool.name}"

    @server.tool()
    async def test_trigger_prompt_change(ctx, args):
        """Removes test_dynamic_prompt, or adds it back, and sends notifications/prompts/list_changed"""
        if prompt.name in server.prompts:
            server.remove_prompt(prompt.name)
            done = "Removed"
        else:
            server.add_prompt(prompt)
            done = "Added"
        await ctx.notify_prompts_changed()
        return f"{done} prompt {prompt.name}"

    @server.tool()
    async def test_trigger_resource_change(ctx, args):
        """Removes test://dynamic-resource, or adds it back, and sends notifications/resources/list_changed"""
        if resource.uri in server.resources:
            server.remove_resource(resource.uri)
            done = "Removed"
        else:
            server.add_resource(resource)
            done = "Added"
        await ctx.notify_resources_changed()
        return f"{done} resource {resource.uri}"

    @server.tool()
    async def test_trigger_resource_update(ctx, args):
        """Gives test://watched-resource a new revision and sends notifications/resources/updated to its subscribers"""
        nonlocal revision
        revision += 1
        await ctx.notify_resource_updated(WATCHED_URI)
        return f"Updated {WATCHED_URI} to revision {revision}"
