"""A digest of exactly what one write statement changes, so that a confirmed write commits only the
changes the user was shown (not merely as many rows).

For a confirmed statement the engine learns, before it runs, which tables it may write (SQLite's
authorizer sees every table a statement, its triggers and its foreign-key actions write while it
prepares ``EXPLAIN <statement>``). It then creates, inside the statement's own transaction,
temporary ``AFTER INSERT/UPDATE/DELETE`` triggers on exactly those tables; each passes the row's
old and new values (and its rowid) to :data:`FUNCTION`, which feeds them into a SHA-256. The
schema is digested before and after. The triggers are dropped before the transaction ends, so no
other statement ever runs with them.

Only these triggers may call :data:`FUNCTION`: the guard refuses a call from top-level SQL or from
any trigger or view but these (SQLite names the trigger responsible for each call), and with
``trusted_schema = OFF`` a trigger or view of the database file cannot call it at all. A statement
so cannot feed the digest values of its own choosing.

Not seen: rows deleted by ``REPLACE`` conflict resolution (SQLite fires no delete trigger for
them unless ``recursive_triggers`` is on; the row inserted in their place is seen), and the
contents of virtual tables (no trigger can be put on one).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import struct
from collections.abc import Iterable
from typing import Any

#: The SQL function the watching triggers call.
FUNCTION = "plainmcp_change"
#: Values passed per call (SQLite allows 127 arguments to a function by default).
_CHUNK = 100
_OPERATIONS = (("INSERT", ("NEW",)), ("UPDATE", ("OLD", "NEW")), ("DELETE", ("OLD",)))


def quote(identifier: str) -> str:
    """``identifier`` as a quoted SQL identifier (any text; the schema's names are not ours)."""
    return '"' + identifier.replace('"', '""') + '"'


def _encode(values: tuple[Any, ...]) -> bytes:
    """One call's values, unambiguously: each a type tag and a length-prefixed body."""
    parts = [struct.pack(">Q", len(values))]
    for value in values:
        if value is None:
            tag, body = b"n", b""
        elif isinstance(value, int):
            tag, body = b"i", str(value).encode("ascii")
        elif isinstance(value, float):
            tag, body = b"f", value.hex().encode("ascii")
        elif isinstance(value, str):
            tag, body = b"s", value.encode("utf-8", "surrogatepass")
        else:
            tag, body = b"b", bytes(value)
        parts.append(tag + struct.pack(">Q", len(body)) + body)
    return b"".join(parts)


class ChangeLog:
    """The digest of one statement's changes on one write connection (used on its worker thread)."""

    def __init__(self) -> None:
        #: A per-connection prefix, so the triggers' names cannot be those of the database's own.
        self.prefix = f"plainmcp_{os.urandom(6).hex()}_"
        #: The names of the watching triggers while a statement is watched.
        self.triggers: frozenset[str] = frozenset()
        self._hash: Any = None

    def install(self, connection: sqlite3.Connection) -> None:
        connection.create_function(FUNCTION, -1, self._feed)

    def allows(self, source: str | None) -> bool:
        """Whether a call of :data:`FUNCTION` from ``source`` (the trigger SQLite names) is ours."""
        return source is not None and source in self.triggers

    def _feed(self, *values: Any) -> None:
        if self._hash is not None:
            self._hash.update(_encode(values))

    def watch(self, connection: sqlite3.Connection, tables: Iterable[str]) -> None:
        """Start the digest: the schema as it is, and a watching trigger per table and operation.
        Run inside the statement's transaction, as the engine's own SQL (past the authorizer)."""
        self._hash = hashlib.sha256()
        self._schema(connection, "before")
        names: list[str] = []
        for index, table in enumerate(sorted(set(tables))):
            found = None if table.lower().startswith("sqlite_") else _table(connection, table)
            if found is None:
                # A view (its INSTEAD OF triggers write tables, watched themselves), a virtual table, or
                # SQLite's own bookkeeping (sqlite_sequence), which takes no trigger.
                continue
            self._feed("table", index, table)
            columns, rowid = found
            for operation, images in _OPERATIONS:
                name = f"{self.prefix}{index}_{operation[0]}"
                connection.execute(_trigger_sql(name, table, index, operation, images, columns, rowid)).close()
                names.append(name)
        self.triggers = frozenset(names)

    def finish(self, connection: sqlite3.Connection) -> str:
        """End the digest: the schema after the statement; drop the triggers; the hex digest."""
        self._schema(connection, "after")
        for name in sorted(self.triggers):
            # A statement that dropped the table dropped its triggers with it.
            connection.execute(f"DROP TRIGGER IF EXISTS temp.{quote(name)}").close()
        digest: str = self._hash.hexdigest()
        self.reset()
        return digest

    def reset(self) -> None:
        """Forget the running digest (a failed statement: its rollback drops the triggers)."""
        self._hash, self.triggers = None, frozenset()

    def _schema(self, connection: sqlite3.Connection, when: str) -> None:
        self._feed("schema", when)
        cursor = connection.execute("SELECT type, name, tbl_name, sql FROM main.sqlite_schema ORDER BY type, name")
        try:
            for row in cursor:
                self._feed(*row)
        finally:
            cursor.close()


def _table(connection: sqlite3.Connection, table: str) -> tuple[list[str], bool] | None:
    """An ordinary table's columns and whether it has a rowid; None for anything else."""
    found = connection.execute("SELECT type, wr FROM pragma_table_list(?1) WHERE schema = 'main'", (table,)).fetchone()
    if found is None or found[0] not in ("table", "shadow"):
        return None
    cursor = connection.execute("SELECT name FROM pragma_table_xinfo(?1, 'main') ORDER BY cid", (table,))
    try:
        columns = [str(row[0]) for row in cursor]
    finally:
        cursor.close()
    return columns, not found[1]


def _trigger_sql(
    name: str, table: str, index: int, operation: str, images: tuple[str, ...], columns: list[str], rowid: bool
) -> str:
    """The watching trigger: the row's images, in calls of at most :data:`_CHUNK` values."""
    references = (["rowid"] if rowid else []) + [quote(column) for column in columns]
    values = [f"{image}.{reference}" for image in images for reference in references]
    calls = [
        f"SELECT {FUNCTION}({index}, '{operation[0]}', {start}, {', '.join(values[start : start + _CHUNK])});"
        for start in range(0, len(values), _CHUNK)
    ]
    return f"CREATE TEMP TRIGGER {quote(name)} AFTER {operation} ON main.{quote(table)} BEGIN {' '.join(calls)} END"
