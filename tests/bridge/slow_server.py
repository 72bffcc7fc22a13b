"""A stdio MCP server with one tool that waits until it is cancelled, and writes down that it was.

Run as ``python slow_server.py MARKER``: when a ``wait`` call is cancelled (``notifications/cancelled``),
the word ``cancelled`` is written to MARKER, so a test can tell the cancellation reached the server.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
from plainmcp import Server, ToolAnnotations, run_stdio


def build_server(marker: Path) -> Server:
    server = Server("slow-server", "1.0.0")

    @server.tool(input_schema={"type": "object", "properties": {}}, annotations=ToolAnnotations(read_only=True))
    async def wait(ctx, args):
        """Wait (a long time) before answering."""
        try:
            await anyio.sleep(60)
        except anyio.get_cancelled_exc_class():
            marker.write_text("cancelled", encoding="utf-8")
            raise
        return "waited"

    return server


if __name__ == "__main__":
    run_stdio(build_server(Path(sys.argv[1])))
