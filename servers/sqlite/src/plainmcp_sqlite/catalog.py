"""What the database holds: tables and views, their columns, keys and indexes, and the schema text.

A name from a model is never put into SQL as it came. It is looked up in ``sqlite_schema`` (the
catalogue) with a bound parameter first; unknown names are refused with the names that do exist.
Describing then uses SQLite's table-valued pragma functions (``pragma_table_xinfo(?)``...), which
take the name as a bound parameter too. Only where SQLite takes no parameter, a table in ``FROM``
for a row count or a sample, is a name written into SQL: the catalogue's own spelling, quoted by
:func:`quote_identifier`.

:class:`Catalog` caches all of it for one read connection. Every call first reads
``schema_version`` and ``data_version`` (one statement); what depends on the schema is kept while
the first stays, row counts while both stay. Another process's commit changes ``data_version`` as
seen by this connection, so the next call sees it.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass
from typing import Any

from .engine import MAX_VALUE_BYTES, Database, DatabaseError, DeadlineExceeded
from .probe import VERSIONS as _VERSIONS
from .probe import VersionProbe

#: Tables listed at most (a database with more gets ``truncated``).
MAX_TABLES = 1000
#: A row count is "cheap" when it takes at most this long; then it is shown, else left null.
COUNT_TIMEOUT = 0.1
#: Time all the row counts of one listing may take together.
COUNT_BUDGET = 0.5
#: Bytes of sample rows read at most (the first row is always read); their cells are shown cut.
SAMPLE_BYTES = 1 << 20

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


_REFERENCES = (
    'SELECT m.name, f."table" FROM sqlite_schema AS m JOIN pragma_foreign_key_list(m.name) AS f '
    "WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY m.name, f.id"
)

_ORIGINS = {"c": "CREATE INDEX", "u": "UNIQUE constraint", "pk": "PRIMARY KEY"}


class UnknownTable(DatabaseError):
    """No table or view has this name."""


def quote_identifier(name: str) -> str:
    """``name`` as an SQL identifier. Only for names read from the catalogue, never from a caller."""
    return '"' + name.replace('"', '""') + '"'


def value_bound(description: dict[str, Any], computed_value_bytes: int) -> int:
    """The longest value a read of a described table or view may build: any stored value
    (:data:`MAX_VALUE_BYTES`), but only ``computed_value_bytes`` where reading computes values (a
    view, a generated column). A hostile view's function whose cost is the square of its values
    (``instr``, ``replace``) runs in one step neither the deadline nor a cancellation can stop;
    the size of those values is what bounds it, as it does for ``query``."""
    computed = description["type"] != "table" or any(column.get("generated") for column in description["columns"])
    return computed_value_bytes if computed else MAX_VALUE_BYTES


def is_virtual(sql: str | None) -> bool:
    return sql is not None and sql.lstrip()[:14].upper() == "CREATE VIRTUAL"


@dataclass(frozen=True, slots=True)
class Versions:
    """What a cached answer is valid for: the connection it was read on, SQLite's schema cookie
    (any change to a table, view, index or trigger, by anyone), and ``data_version`` (a commit
    by another connection: another process, or this server's write connection)."""

    connection: int
    schema: int
    data: int

    @property
    def schema_key(self) -> tuple[int, int]:
        return self.connection, self.schema


class Catalog:
    """The catalogue of one read connection, cached until the database changes.

    Each call starts with one cheap statement (:data:`_VERSIONS`). What depends only on the schema
    (names, columns, keys, indexes, the ``CREATE`` text) is kept while ``schema_version`` stays;
    row counts are kept while ``data_version`` stays too. So repeated calls count and describe
    nothing, and a change made by anyone, another process included, is seen by the next call.
    """

    def __init__(self, db: Database, probe: VersionProbe | None = None) -> None:
        self.db = db
        self.probe = probe
        self._schema_key: tuple[int, int] | None = None
        self._data_key: Versions | None = None
        # Filled as asked, emptied when the schema changes:
        self._listing: tuple[list[tuple[str, str, str | None]], dict[str, list[str]], bool] | None = None
        self._schema_sql: str | None = None
        self._references: dict[str, list[str]] | None = None
        self._resolved: dict[str, tuple[str, str, str | None]] = {}
        self._descriptions: dict[str, dict[str, Any]] = {}
        # Emptied when the data (or the schema) changes: table -> count, None when too slow.
        self._counts: dict[str, int | None] = {}

    async def versions(self) -> Versions:
        """Read the versions and drop what they make stale."""
        probe = self.probe
        read = probe.read() if probe is not None else None
        if probe is not None and read is not None:
            # The probe's own connection: negative numbers keep its values apart from the read
            # connection's (a switch between the two only drops the cache, never keeps a stale one).
            versions = Versions(-probe.opened, *read)
        else:
            outcome = await self.db.run(_VERSIONS, max_rows=1)
            schema, data = outcome.rows[0]
            versions = Versions(self.db.connections_opened, int(schema), int(data))
        if versions.schema_key != self._schema_key:
            self._schema_key = versions.schema_key
            self._listing, self._schema_sql, self._references = None, None, None
            self._resolved.clear()
            self._descriptions.clear()
        if versions != self._data_key:
            self._data_key = versions
            self._counts.clear()
        return versions

    async def names(self) -> list[str]:
        """Names of the tables and views, sorted (for completion and error hints)."""
        await self.versions()
        listed, _columns, _truncated = await self._list()
        return [name for name, _kind, _sql in listed]

    async def _list(self) -> tuple[list[tuple[str, str, str | None]], dict[str, list[str]], bool]:
        if self._listing is None:
            key = self._schema_key
            listed = await self.db.run(_NAMES, max_rows=MAX_TABLES)
            try:
                column_rows = (await self.db.run(_COLUMNS, max_rows=100_000)).rows
            except DatabaseError:
                column_rows = []  # a broken view (one naming a dropped table) breaks the join; list names only
            columns: dict[str, list[str]] = {}
            for table, column in column_rows:
                columns.setdefault(table, []).append(column)
            listing = (listed.rows, columns, listed.more)
            # Kept only if no concurrent call saw the schema change while this one read it.
            if key == self._schema_key:
                self._listing = listing
            return listing
        return self._listing

    async def resolve(self, name: str) -> tuple[str, str, str | None]:
        """The catalogue's ``(name, type, sql)`` of the table or view called ``name`` (any case).

        Raises:
            UnknownTable: with the closest existing names, when there is none.
        """
        await self.versions()
        return await self._resolve(name)

    async def _resolve(self, name: str) -> tuple[str, str, str | None]:
        found = self._resolved.get(name)
        if found is not None:
            return found
        outcome = await self.db.run(_FIND, (name,), max_rows=2)
        if outcome.rows:
            exact = [row for row in outcome.rows if row[0] == name]
            row = (exact or outcome.rows)[0]
            if len(self._resolved) < MAX_TABLES:
                self._resolved[name] = (row[0], row[1], row[2])
            return row[0], row[1], row[2]
        listed, _columns, _truncated = await self._list()
        known = [known_name for known_name, _kind, _sql in listed]
        close = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
        listed_names = ", ".join(close or known[:20]) or "(none: the database is empty)"
        label = "Did you mean" if close else "Tables and views"
        raise UnknownTable(f"Unknown table {name!r}. {label}: {listed_names}.")

    async def _count(self, name: str, timeout: float = COUNT_TIMEOUT) -> int | None:
        """``count(*)`` of a table from the catalogue, or None when it takes longer than ``timeout``.
        Kept until the data changes, unless it was stopped early by a shorter ``timeout``."""
        if name in self._counts:
            return self._counts[name]
        try:
            outcome = await self.db.run(f"SELECT count(*) FROM {quote_identifier(name)}", max_rows=1, timeout=timeout)
        except DeadlineExceeded:
            if timeout >= COUNT_TIMEOUT:
                self._counts[name] = None  # too big to count quickly, until the data changes
            return None
        self._counts[name] = count = int(outcome.rows[0][0])
        return count

    async def list_tables(self) -> dict[str, Any]:
        """``{"tables": [{name, type, columns, rows}], "truncated"}``; ``rows`` is null for views,
        virtual tables and tables too large to count quickly. A fresh value on every call."""
        await self.versions()
        listed, columns, truncated = await self._list()
        tables = []
        budget_end = time.monotonic() + COUNT_BUDGET
        for name, kind, sql in listed:
            rows: int | None = None
            if kind == "table" and not is_virtual(sql):
                if name in self._counts:
                    rows = self._counts[name]
                elif (left := budget_end - time.monotonic()) > 0:
                    rows = await self._count(name, min(COUNT_TIMEOUT, left))
            tables.append({"name": name, "type": kind, "columns": list(columns.get(name, ())), "rows": rows})
        return {"tables": tables, "truncated": truncated}

    async def describe(self, name: str) -> dict[str, Any]:
        """Columns (type, nullability, default, primary-key position), foreign keys, indexes, the
        ``CREATE`` statement and the row count (when cheap) of one table or view. A fresh dict on
        every call (callers add to it); the lists in it are shared with the cache: do not change them.

        Raises:
            UnknownTable: no such table or view.
        """
        await self.versions()
        canonical, kind, sql = await self._resolve(name)
        description = self._descriptions.get(canonical)
        if description is None:
            key = self._schema_key
            description = await _describe(self.db, canonical, kind, sql)
            if key == self._schema_key and len(self._descriptions) < MAX_TABLES:
                self._descriptions[canonical] = description
        rows = await self._count(canonical) if kind == "table" and not is_virtual(sql) else None
        return {**description, "rows": rows, "sql": sql}

    async def sample(
        self, name: str, limit: int, max_value_bytes: int = MAX_VALUE_BYTES
    ) -> tuple[list[str], list[tuple[Any, ...]]]:
        """The first ``limit`` rows of a table or view named by the catalogue, fewer when they pass
        :data:`SAMPLE_BYTES` (their cells are shown cut anyway); values up to ``max_value_bytes``."""
        outcome = await self.db.run(
            f"SELECT * FROM {quote_identifier(name)} LIMIT ?",
            (limit,),
            max_rows=limit,
            max_bytes=SAMPLE_BYTES,
            max_value_bytes=max_value_bytes,
        )
        return outcome.columns, outcome.rows

    async def references(self) -> dict[str, list[str]]:
        """The foreign-key graph: each table that has foreign keys, and the tables they name (once each)."""
        await self.versions()
        if self._references is None:
            graph: dict[str, list[str]] = {}
            for table, target in (await self.db.run(_REFERENCES, max_rows=100_000)).rows:
                if target not in graph.setdefault(table, []):
                    graph[table].append(target)
            self._references = graph
        return self._references

    async def schema_sql(self) -> str:
        """Every ``CREATE`` statement of the database: tables, views, indexes, triggers."""
        await self.versions()
        if self._schema_sql is None:
            outcome = await self.db.run(_SCHEMA, max_rows=100_000)
            if not outcome.rows:
                self._schema_sql = "-- The database is empty: it has no tables.\n"
            else:
                self._schema_sql = (
                    "".join(f"{sql.rstrip().rstrip(';')};\n\n" for _kind, _name, sql in outcome.rows).rstrip() + "\n"
                )
        return self._schema_sql


async def _describe(db: Database, canonical: str, kind: str, sql: str | None) -> dict[str, Any]:
    """What :meth:`Catalog.describe` gives, but the row count and the ``CREATE`` text."""
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
    for key_id, table, source, target, on_update, on_delete in (
        await db.run(_FOREIGN_KEYS, (canonical,), max_rows=10_000)
    ).rows:
        entry = foreign.setdefault(
            key_id,
            {
                "columns": [],
                "references": {"table": table, "columns": []},
                "on_update": on_update,
                "on_delete": on_delete,
            },
        )
        entry["columns"].append(source)
        entry["references"]["columns"].append(target)  # None: the referenced table's primary key
    indexes: dict[str, dict[str, Any]] = {}
    for index, unique, origin, partial, column in (await db.run(_INDEXES, (canonical,), max_rows=10_000)).rows:
        entry = indexes.setdefault(
            index,
            {
                "name": index,
                "unique": bool(unique),
                "origin": _ORIGINS.get(origin, origin),
                "partial": bool(partial),
                "columns": [],
            },
        )
        entry["columns"].append(column)  # None: an expression
    return {
        "name": canonical,
        "type": kind,
        "columns": columns,
        "primary_key": primary_key,
        "foreign_keys": list(foreign.values()),
        "indexes": list(indexes.values()),
        "rows": None,
        "sql": sql,
    }
