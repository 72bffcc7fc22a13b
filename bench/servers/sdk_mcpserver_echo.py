"""Benchmark server: one ``echo`` tool, written with the official SDK's high-level ``MCPServer`` (mcp 2.x)."""

from mcp.server import MCPServer

server = MCPServer("bench-echo", version="1.0.0")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run()
