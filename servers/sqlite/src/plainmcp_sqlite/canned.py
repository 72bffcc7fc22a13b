"""Canned queries from the Datasette metadata, each served as a tool of its own: its name, its description,
its named parameters (strings, as Datasette passes them; SQLite's type affinity compares them with numbers),
its database, its mode (read-only, or ``write: true``, which goes through ``execute``'s confirmation) and its
row cap. The SQL is the operator's; only the values come from the model, always bound."""

from __future__ import annotations

from typing import Any

from plainmcp import Context, Server, ToolResult, content

from . import results, tools
from .metadata import CannedQuery, Metadata
from .schemas import EXECUTE_OUTPUT, RESULT_OUTPUT


def input_schema(query: CannedQuery) -> dict[str, Any]:
    """Every parameter a required string."""
    return {
        "type": "object",
        "properties": {name: {"type": "string"} for name in query.params},
        "required": list(query.params),
        "additionalProperties": False,
    }


def handler(query: CannedQuery, read: tools.ReadTools, write: tools.WriteTools | None) -> Any:
    """The tool's handler: runs ``query`` with the call's values."""
    config = read.config

    async def run(ctx: Context, args: dict[str, Any]) -> ToolResult:
        params = {name: args[name] for name in query.params}
        if query.write:
            assert write is not None  # Config refuses a writing query on a read-only database
            return await write.change(ctx, write.writers[query.database], query.sql, params)
        want = min(query.max_rows or config.rows_by_default, config.max_rows)
        budget = min(config.result_budget, config.max_result_bytes)
        outcome = await tools.run_statement(read.catalogues[query.database].db, query.sql, params, want, budget)
        result = tools.shaped(outcome, config)
        return ToolResult(content=[content.text(results.summary(result))], structured=result)

    run.__name__ = query.name
    return run


def register(server: Server, metadata: Metadata, read: tools.ReadTools, write: tools.WriteTools | None) -> None:
    """Add a tool for each canned query of ``metadata``."""
    for query in metadata.queries:
        server.tool(
            query.name,
            description=query.description,
            input_schema=input_schema(query),
            output_schema=EXECUTE_OUTPUT if query.write else RESULT_OUTPUT,
            annotations=tools.WRITES if query.write else tools.READ_ONLY,
        )(handler(query, read, write))
