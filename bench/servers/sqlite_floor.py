"""Benchmark floor for ``sqlite_bench.py --floor``: the least an MCP server can do to answer the
1,000-row SELECT and ``list_tables``, on plainmcp's core: sqlite3 on the event loop, the rows returned
as structured JSON with a one-word text, no checks, caps, deadlines or readable table. Not a server
to use; a measure of what the protocol, JSON and sqlite3 cost by themselves.

    python bench/servers/sqlite_floor.py DATABASE
"""

import sqlite3
import sys

from plainmcp import Server, ToolResult, content, run_stdio

database = sqlite3.connect(sys.argv[1])
server = Server("sqlite-floor", "0")


@server.tool(input_schema={"type": "object"})
async def query(ctx, args):
    """Run the SQL; return its first 1,000 rows."""
    cursor = database.execute(args["sql"])
    rows = cursor.fetchmany(1000)
    return ToolResult([content.text("rows")], structured={"columns": [c[0] for c in cursor.description], "rows": rows})


@server.tool(input_schema={"type": "object"})
async def list_tables(ctx, args):
    """The table names."""
    names = [row[0] for row in database.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
    return ToolResult([content.text("tables")], structured={"tables": names})


if __name__ == "__main__":
    run_stdio(server)
