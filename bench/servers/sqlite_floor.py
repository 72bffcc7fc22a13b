"""Benchmark floor for ``sqlite_bench.py --floor``: the least an MCP server can do to answer the
1,000-row SELECT and ``list_tables``, on plainmcp's core: sqlite3 on the event loop, the rows returned
as structured JSON with a one-word text, no checks, caps, deadlines or readable table. Not a server
to use; a measure of what the protocol, JSON and sqlite3 cost by themselves.

    python bench/servers/sqlite_floor.py DATABASE [STEP]

``STEP`` (0 by default) adds, one at a time, the work plainmcp-sqlite does on every ``query``, with
plainmcp-sqlite's own code, so ``sqlite_bench.py --floor-steps`` can say what each costs:

1. the statement runs on a worker thread (one thread hop; the event loop never waits on SQLite);
2. the rows are fetched one at a time and measured against a byte budget (memory bounded before
   anything is materialised);
3. the values are checked as JSON (blobs, infinities, over-long cells);
4. the text is the readable Markdown table of the rows instead of one word.
"""

import sqlite3
import sys

from plainmcp import Server, ToolResult, content, run_stdio

database = sqlite3.connect(sys.argv[1], check_same_thread=False)
STEP = int(sys.argv[2]) if len(sys.argv) > 2 else 0
server = Server("sqlite-floor", "0")


def rows_of(sql: str) -> tuple[dict, str]:
    """The structured result and the text of ``sql``'s first 1,000 rows, as far as STEP goes."""
    cursor = database.execute(sql)
    if STEP < 2:
        rows = cursor.fetchmany(1000)
        return {"columns": [c[0] for c in cursor.description], "rows": rows}, "rows"
    from plainmcp_sqlite import fetch, results

    outcome = fetch.fetch_rows(cursor, 1000, 1_000_000, partial=True)
    cursor.close()
    if STEP < 3:
        return {"columns": outcome.columns, "rows": outcome.rows}, "rows"
    if STEP < 4:
        return results.to_json(outcome, max_cell_chars=2000, max_rows=1000), "rows"
    structured, table = results.shape_with_table(outcome, max_cell_chars=2000, max_rows=1000)
    return structured, results.summary(structured, table)


worker = None
if STEP >= 1:
    from plainmcp_sqlite.worker import Worker

    worker = Worker("sqlite-floor")


@server.tool(input_schema={"type": "object"})
async def query(ctx, args):
    """Run the SQL; return its first 1,000 rows."""
    structured, text = rows_of(args["sql"]) if worker is None else await worker.call(rows_of, args["sql"])
    return ToolResult([content.text(text)], structured=structured)


@server.tool(input_schema={"type": "object"})
async def list_tables(ctx, args):
    """The table names."""
    names = [row[0] for row in database.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")]
    return ToolResult([content.text("tables")], structured={"tables": names})


if __name__ == "__main__":
    run_stdio(server)
