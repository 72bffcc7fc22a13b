"""The database at a glance, for a model meeting it first: ``describe_database`` (every table with its
row count and foreign-key links, the views; short enough for 100 tables in about 2k tokens) and
``sample_rows`` (a table's first rows and a profile of each column: nulls, distinct values, smallest
and largest, over at most :data:`PROFILE_ROWS` rows so that it stays within the deadline).

Names come from the catalogue and are quoted by :func:`catalog.quote_identifier`; nothing the model
sent is written into SQL (the row count is a bound parameter).
"""

from __future__ import annotations

from typing import Any

from . import catalog, results
from .metadata import Metadata

#: Rows a profile reads at most: enough to characterise a column, few enough for the deadline.
PROFILE_ROWS = 10_000
#: Columns profiled at most (one statement; wide tables get their first ones).
PROFILE_COLUMNS = 50
#: Characters of a smallest or largest value shown.
PROFILE_CHARS = 40


async def database_overview(
    catalogue: catalog.Catalog, metadata: Metadata | None = None, database: str = "main"
) -> dict[str, Any]:
    """``{"tables": [{name, rows, references?, description?}], "views": [...], "truncated",
    "description"?}``; ``rows`` is null where counting is slow, ``references`` the tables a table's
    foreign keys name, the descriptions those of ``metadata`` for ``database``."""
    listing = await catalogue.list_tables()
    graph = await catalogue.references()
    tables: list[dict[str, Any]] = []
    views: list[str] = []
    for table in listing["tables"]:
        if table["type"] == "view":
            views.append(table["name"])
            continue
        entry: dict[str, Any] = {"name": table["name"], "rows": table["rows"]}
        if graph.get(table["name"]):
            entry["references"] = graph[table["name"]]
        if metadata is not None and "description" in metadata.table(database, table["name"]):
            entry["description"] = metadata.table(database, table["name"])["description"]
        tables.append(entry)
    found: dict[str, Any] = {"tables": tables, "views": views, "truncated": listing["truncated"]}
    if metadata is not None and database in metadata.descriptions:
        found["description"] = metadata.descriptions[database]
    return found


def overview_text(overview: dict[str, Any]) -> str:
    """One short line per table: ``orders (3 rows) -> customers``; then the views."""
    tables, views = overview["tables"], overview["views"]
    lines = [f"{len(tables)} table(s), {len(views)} view(s); describe_table gives a table's columns."]
    if overview.get("description"):
        lines.insert(0, overview["description"])
    for table in tables:
        rows = "?" if table["rows"] is None else table["rows"]
        links = f" -> {', '.join(table['references'])}" if table.get("references") else ""
        note = f": {table['description']}" if table.get("description") else ""
        lines.append(f"{table['name']} ({rows} rows){links}{note}")
    if views:
        lines.append("views: " + ", ".join(views))
    if overview["truncated"]:
        lines.append(f"(only the first {catalog.MAX_TABLES} are listed)")
    return "\n".join(lines)


async def sample_with_profile(
    catalogue: catalog.Catalog, name: str, limit: int, max_cell_chars: int, computed_value_bytes: int
) -> dict[str, Any]:
    """The first ``limit`` rows of a table or view and a profile of its columns.

    A stored value of any size may be read (its cell is shown cut); a computed one (a view, a
    generated column) up to ``computed_value_bytes`` (see :func:`catalog.value_bound`).

    Raises:
        catalog.UnknownTable: no such table or view.
        DatabaseError: reading failed (the deadline included).
    """
    description = await catalogue.describe(name)
    canonical = description["name"]
    value_bytes = catalog.value_bound(description, computed_value_bytes)
    columns, rows = await catalogue.sample(canonical, limit, value_bytes)
    shown, _cut = results.json_rows(rows, max_cell_chars)
    profiled = [column["name"] for column in description["columns"]][:PROFILE_COLUMNS]
    counted, profile = await _profile(catalogue, canonical, profiled, value_bytes)
    return {"table": canonical, "columns": columns, "rows": shown, "profiled_rows": counted, "profile": profile}


async def _profile(
    catalogue: catalog.Catalog, table: str, columns: list[str], value_bytes: int
) -> tuple[int, list[dict[str, Any]]]:
    if not columns:
        return 0, []
    parts = []
    for column in columns:
        quoted = catalog.quote_identifier(column)
        parts.append(f"count({quoted}), count(DISTINCT {quoted}), min({quoted}), max({quoted})")
    sql = f"SELECT count(*), {', '.join(parts)} FROM (SELECT * FROM {catalog.quote_identifier(table)} LIMIT ?)"
    outcome = await catalogue.db.run(sql, (PROFILE_ROWS,), max_rows=1, max_value_bytes=value_bytes)
    counted, *values = outcome.rows[0]
    profile = []
    for index, column in enumerate(columns):
        present, distinct, smallest, largest = values[4 * index : 4 * index + 4]
        profile.append(
            {
                "column": column,
                "nulls": counted - present,
                "distinct": distinct,
                "min": results.cell(smallest, PROFILE_CHARS)[0],
                "max": results.cell(largest, PROFILE_CHARS)[0],
            }
        )
    return counted, profile


def sample_text(sample: dict[str, Any]) -> str:
    """The sample rows as a table, then one line per profiled column."""
    table, _shortened = results.render_table(sample["columns"], sample["rows"])
    lines = [f"{sample['table']}: first {len(sample['rows'])} row(s)", table or "(no columns)", ""]
    lines.append(f"profile over {sample['profiled_rows']} row(s):")
    for column in sample["profile"]:
        lines.append(
            f"  {column['column']}: {column['nulls']} null, {column['distinct']} distinct, "
            f"min {column['min']!r}, max {column['max']!r}"
        )
    return "\n".join(lines)
