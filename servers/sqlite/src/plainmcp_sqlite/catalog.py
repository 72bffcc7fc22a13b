"""What the database holds: tables and views, their columns, keys and indexes, and the schema text.

A name from a model is never put into SQL as it came. It is looked up in ``sqlite_schema`` (the
catalogue) with a bound parameter first; unknown names are refused with the names that do exist.
Describing then uses SQLite's table-valued pragma functions (``pragma_table_xinfo(?)``...), which
take the name as a bound parameter too. Only where SQLite takes no parameter, a table in ``FROM``
for a row count or a sample, is a name written into SQL: the catalogue's own spelling, quoted by
:func:`quote_identifier`.
"""

from __future__ import annotations

import difflib
import time
from typing import Any

from .engine import Database, DatabaseError, DeadlineExceeded

#: Tables listed at most (a database with more gets ``truncated``).
MAX_TABLES = 1000
#: A row count is "cheap" when it takes at most this long; then it is shown, else left null.
COUNT_TIMEOUT = 0.1
#: Time all the row counts of one listing may take together.
COUNT_BUDGET = 0.5

_NAMES = (
    "SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table', 'view') "
    "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
)
_COLUMNS = (
    "SELECT m.name, p.name FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS p "
    "WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY m.name, p.cid"
)
_FIND = "SELECT name, type, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE"
_XINFO = 'SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid'
_FOREIGN_KEYS = (
    'SELECT id, "table", "from", "to", on_update, on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq'
)
_INDEXES = (
    'SELECT il.name, il."unique", il.origin, il.partial, ii.name FROM pragma_index_list(?) AS il '
    "JOIN pragma_index_info(il.name) AS ii ORDER BY il.seq, ii.seqno"
)
_SCHEMA = (
    "SELECT type, name, sql FROM sqlite_schema WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
    "ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 WHEN 'index' THEN 2 ELSE 3 END, tbl_name, name"
)

_ORIGINS = {"c": "CREATE INDEX", "u": "UNIQUE constraint", "pk": "PRIMARY KEY"}


class UnknownTable(DatabaseError):
    """No table or view has this name."""


def quote_identifier(name: str) -> str:
    """``name`` as an SQL identifier. Only for names read from the catalogue, never from a caller."""
    return '"' + name.replace('"', '""') + '"'


def is_virtual(sql: str | None) -> bool:
    return bool(sql) and sql.lstrip()[:14].upper() == "CREATE VIRTUAL"


async def names(db: Database) -> list[str]:
    """Names of the tables and views, sorted (for completion and error hints)."""
    outcome = await db.run(_NAMES, max_rows=MAX_TABLES)
    return [row[0] for row in outcome.rows]


async def resolve(db: Database, name: str) -> tuple[str, str, str | None]:
    """The catalogue's ``(name, type, sql)`` of the table or view called ``name`` (any case).

    Raises:
        UnknownTable: with the closest existing names, when there is none.
    """
    outcome = await db.run(_FIND, (name,), max_rows=2)
    if outcome.rows:
        exact = [row for row in outcome.rows if row[0] == name]
        found = (exact or outcome.rows)[0]
        return found[0], found[1], found[2]
    known = await names(db)
    close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    listed = ", ".join(close or known[:20]) or "(none: the database is empty)"
    label = "Did you mean" if close else "Tables and views"
    raise UnknownTable(f"Unknown table {name!r}. {label}: {listed}.")


async def count_rows(db: Database, name: str, timeout: float = COUNT_TIMEOUT) -> int | None:
    """``count(*)`` of a table from the catalogue, or None when it takes longer than ``timeout``."""
    try:
        outcome = await db.run(f"SELECT count(*) FROM {quote_identifier(name)}", max_rows=1, timeout=timeout)
    except DeadlineExceeded:
        return None
    return int(outcome.rows[0][0])


async def list_tables(db: Database) -> dict[str, Any]:
    """``{"tables": [{name, type, columns, rows}], "truncated"}``; ``rows`` is null for views,
    virtual tables and tables too large to count quickly."""
    listed = await db.run(_NAMES, max_rows=MAX_TABLES)
    try:
        column_rows = (await db.run(_COLUMNS, max_rows=100_000)).rows
    except DatabaseError:
        column_rows = []  # a broken view (one naming a dropped table) breaks the join; list names only
    columns: dict[str, list[str]] = {}
    for table, column in column_rows:
        columns.setdefault(table, []).append(column)
    tables = []
    budget_end = time.monotonic() + COUNT_BUDGET
    for name, kind, sql in listed.rows:
        rows: int | None = None
        left = budget_end - time.monotonic()
        if kind == "table" and not is_virtual(sql) and left > 0:
            rows = await count_rows(db, name, min(COUNT_TIMEOUT, left))
        tables.append({"name": name, "type": kind, "columns": columns.get(name, []), "rows": rows})
    return {"tables": tables, "truncated": listed.more}


async def describe(db: Database, name: str) -> dict[str, Any]:
    """Columns (type, nullability, default, primary-key position), foreign keys, indexes, the
    ``CREATE`` statement and the row count (when cheap) of one table or view.

    Raises:
        UnknownTable: no such table or view.
    """
    canonical, kind, sql = await resolve(db, name)
    xinfo = await db.run(_XINFO, (canonical,), max_rows=10_000)
    columns = [
        {
            "name": col_name,
            "type": col_type or None,
            "nullable": not notnull,
            "default": default,
            "primary_key": pk or None,  # position in the key, 1-based
            **({"generated": True} if hidden in (2, 3) else {}),
        }
        for col_name, col_type, notnull, default, pk, hidden in xinfo.rows
        if hidden != 1  # 1: a virtual table's hidden column
    ]
    primary_key = [c["name"] for c in sorted(columns, key=lambda c: c["primary_key"] or 0) if c["primary_key"]]
    foreign: dict[int, dict[str, Any]] = {}
    for key_id, table, source, target, on_update, on_delete in (await db.run(_FOREIGN_KEYS, (canonical,), max_rows=10_000)).rows:
        entry = foreign.setdefault(key_id, {"columns": [], "references": {"table": table, "columns": []},
                                            "on_update": on_update, "on_delete": on_delete})
        entry["columns"].append(source)
        entry["references"]["columns"].append(target)  # None: the referenced table's primary key
    indexes: dict[str, dict[str, Any]] = {}
    for index, unique, origin, partial, column in (await db.run(_INDEXES, (canonical,), max_rows=10_000)).rows:
        entry = indexes.setdefault(index, {"name": index, "unique": bool(unique),
                                           "origin": _ORIGINS.get(origin, origin), "partial": bool(partial),
                                           "columns": []})
        entry["columns"].append(column)  # None: an expression
    rows = await count_rows(db, canonical) if kind == "table" and not is_virtual(sql) else None
    return {
        "name": canonical,
        "type": kind,
        "columns": columns,
        "primary_key": primary_key,
        "foreign_keys": list(foreign.values()),
        "indexes": list(indexes.values()),
        "rows": rows,
        "sql": sql,
    }


async def sample(db: Database, name: str, limit: int) -> tuple[list[str], list[tuple[Any, ...]]]:
    """The first ``limit`` rows of a table or view named by the catalogue."""
    outcome = await db.run(f"SELECT * FROM {quote_identifier(name)} LIMIT ?", (limit,), max_rows=limit)
    return outcome.columns, outcome.rows


async def schema_sql(db: Database) -> str:
    """Every ``CREATE`` statement of the database: tables, views, indexes, triggers."""
    outcome = await db.run(_SCHEMA, max_rows=100_000)
    if not outcome.rows:
        return "-- The database is empty: it has no tables.\n"
    return "".join(f"{sql.rstrip().rstrip(';')};\n\n" for _kind, _name, sql in outcome.rows).rstrip() + "\n"
