"""The resources: the whole schema, and one resource per table or view (a template).

- ``sqlite://schema`` (``application/sql``): every ``CREATE`` statement of the database.
- ``sqlite://table/{table}`` (``application/json``): one table or view, as ``describe_table`` gives
  it, plus its first rows (``sample_rows``, at most :data:`SAMPLE_ROWS`). The ``table`` variable
  completes from the catalogue.

Both can be subscribed to; ``watch.py`` sends the updates.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from plainmcp import Context, ErrorCode, MCPError, Server

from . import catalog, results
from .config import Config
from .engine import DatabaseError

SCHEMA_URI = "sqlite://schema"
TABLE_TEMPLATE = "sqlite://table/{table}"
SAMPLE_ROWS = 5
#: Names offered for one completion request at most.
MAX_COMPLETIONS = 100


def table_uri(name: str) -> str:
    """The resource URI of a table or view."""
    return "sqlite://table/" + quote(name, safe="")


class DatabaseResources:
    """The schema and table resources over ``catalogue``, cells cut to ``config``'s limit."""

    def __init__(self, config: Config, catalogue: catalog.Catalog) -> None:
        self.config = config
        self.catalogue = catalogue

    async def complete_table(self, ctx: Context, value: str, others: dict[str, str]) -> list[str]:
        """Table and view names starting with ``value`` (any case), at most :data:`MAX_COMPLETIONS`."""
        prefix = value.casefold()
        try:
            known = await self.catalogue.names()
        except DatabaseError:
            return []
        return [name for name in known if name.casefold().startswith(prefix)][:MAX_COMPLETIONS]

    async def schema(self, ctx: Context, uri: str) -> str:
        """Every CREATE statement of the database: tables, views, indexes and triggers."""
        return await _read(self.catalogue.schema_sql())

    async def table(self, ctx: Context, uri: str, variables: dict[str, str]) -> str | None:
        """One table or view: columns, keys, indexes, row count and its first rows."""
        try:
            description = await self.catalogue.describe(variables["table"])
        except catalog.UnknownTable:
            return None  # resources/read answers "resource not found"
        except DatabaseError as failure:
            raise _read_error(failure) from None
        bound = catalog.value_bound(description, self.config.max_result_bytes)
        columns, rows = await _read(self.catalogue.sample(description["name"], SAMPLE_ROWS, bound))
        description["sample_rows"] = [
            dict(zip(columns, (results.cell(value, self.config.max_cell_chars)[0] for value in row), strict=True))
            for row in rows
        ]
        return json.dumps(description, ensure_ascii=False, indent=1)


def register(server: Server, resources: DatabaseResources) -> None:
    """Add the resources of ``resources`` to ``server``."""
    server.resource(SCHEMA_URI, "schema", title="Database schema", mime_type="application/sql")(resources.schema)
    server.resource_template(
        TABLE_TEMPLATE,
        "table",
        title="Table",
        mime_type="application/json",
        complete={"table": resources.complete_table},
    )(resources.table)


async def _read(awaitable: Any) -> Any:
    try:
        return await awaitable
    except DatabaseError as failure:
        raise _read_error(failure) from None


def _read_error(failure: DatabaseError) -> MCPError:
    return MCPError(ErrorCode.INTERNAL_ERROR, f"Reading the database failed: {failure}")
