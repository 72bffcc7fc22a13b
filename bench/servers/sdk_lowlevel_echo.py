"""Benchmark server: one ``echo`` tool, written with the official SDK's low-level ``Server`` (mcp 2.x)."""

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

ECHO = types.Tool(
    name="echo",
    description="Echo the text back.",
    input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx, params):
    if params.name != "echo":
        return types.CallToolResult(content=[types.TextContent(text=f"Unknown tool: {params.name}")], is_error=True)
    text = (params.arguments or {}).get("text")
    if not isinstance(text, str):
        return types.CallToolResult(content=[types.TextContent(text="'text' must be a string")], is_error=True)
    return types.CallToolResult(content=[types.TextContent(text=text)])


server = Server("bench-echo", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
