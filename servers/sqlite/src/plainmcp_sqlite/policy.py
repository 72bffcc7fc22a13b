"""What a statement may do: the SQLite authorizer for each access mode.

SQLite asks the authorizer about every action while it *prepares* a statement (reading a column,
writing a table, attaching a file, running a pragma or a function). Answering here, instead of
inspecting the SQL text, means a write hidden behind ``WITH``, a trigger or a view is seen for what
it is. The authorizer is one of several layers (see ``engine.py``): a read-only connection is also
opened with ``mode=ro`` and ``PRAGMA query_only``, and may attach nothing.

Modes:

- ``read``: ``SELECT``, reading any table, functions except the ones below, recursive CTEs, and
  the read-only pragmas of :data:`READ_PRAGMAS`.
- ``write``: ``read``, plus changing and creating things in the ``main`` database. Never: attaching
  (``ATTACH``, and ``VACUUM`` which attaches its output), temporary objects, transaction control
  (the engine wraps each statement in its own transaction), pragmas that change settings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

OK, DENY = sqlite3.SQLITE_OK, sqlite3.SQLITE_DENY

#: Pragmas that only read. Those in :data:`PRAGMAS_WITH_ARGUMENT` take a table or index name; the
#: others are allowed only without an argument (``PRAGMA user_version`` reads, ``= 3`` would write).
#: Not here on purpose: ``database_list`` (it shows the host path of the file), anything that sets.
READ_PRAGMAS = frozenset(
    {
        "application_id",
        "collation_list",
        "compile_options",
        "data_version",
        "encoding",
        "foreign_key_check",
        "foreign_key_list",
        "foreign_keys",
        "freelist_count",
        "function_list",
        "index_info",
        "index_list",
        "index_xinfo",
        "integrity_check",
        "journal_mode",
        "module_list",
        "page_count",
        "page_size",
        "pragma_list",
        "quick_check",
        "schema_version",
        "table_info",
        "table_list",
        "table_xinfo",
        "user_version",
    }
)
PRAGMAS_WITH_ARGUMENT = frozenset(
    {
        "foreign_key_check",
        "foreign_key_list",
        "index_info",
        "index_list",
        "index_xinfo",
        "integrity_check",
        "quick_check",
        "table_info",
        "table_list",
        "table_xinfo",
    }
)

#: Functions refused in every mode: loading native code, and the FTS3 tokenizer pointer function.
#: (Extension loading is also switched off on the connection; this is the second lock.)
DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer"})

#: The tables that hold the schema itself.
SCHEMA_TABLES = frozenset({"sqlite_master", "sqlite_temp_master"})

_READ_ACTIONS = frozenset({sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE})

# Changes to the main database that the write mode allows (arg 3 of the callback is the database).
_WRITE_ACTIONS = frozenset(
    {
        sqlite3.SQLITE_INSERT,
        sqlite3.SQLITE_UPDATE,
        sqlite3.SQLITE_DELETE,
        sqlite3.SQLITE_CREATE_TABLE,
        sqlite3.SQLITE_CREATE_INDEX,
        sqlite3.SQLITE_CREATE_VIEW,
        sqlite3.SQLITE_CREATE_TRIGGER,
        sqlite3.SQLITE_CREATE_VTABLE,
        sqlite3.SQLITE_DROP_TABLE,
        sqlite3.SQLITE_DROP_INDEX,
        sqlite3.SQLITE_DROP_VIEW,
        sqlite3.SQLITE_DROP_TRIGGER,
        sqlite3.SQLITE_DROP_VTABLE,
        sqlite3.SQLITE_ALTER_TABLE,
        sqlite3.SQLITE_REINDEX,
        sqlite3.SQLITE_ANALYZE,
    }
)

_ACTION_WORDS = {
    sqlite3.SQLITE_INSERT: "inserting into {0}",
    sqlite3.SQLITE_UPDATE: "updating {0}",
    sqlite3.SQLITE_DELETE: "deleting from {0}",
    sqlite3.SQLITE_CREATE_TABLE: "creating table {0}",
    sqlite3.SQLITE_CREATE_INDEX: "creating index {0}",
    sqlite3.SQLITE_CREATE_VIEW: "creating view {0}",
    sqlite3.SQLITE_CREATE_TRIGGER: "creating trigger {0}",
    sqlite3.SQLITE_CREATE_VTABLE: "creating virtual table {0}",
    sqlite3.SQLITE_CREATE_TEMP_TABLE: "creating temporary table {0}",
    sqlite3.SQLITE_CREATE_TEMP_INDEX: "creating temporary index {0}",
    sqlite3.SQLITE_CREATE_TEMP_VIEW: "creating temporary view {0}",
    sqlite3.SQLITE_CREATE_TEMP_TRIGGER: "creating temporary trigger {0}",
    sqlite3.SQLITE_DROP_TABLE: "dropping table {0}",
    sqlite3.SQLITE_DROP_INDEX: "dropping index {0}",
    sqlite3.SQLITE_DROP_VIEW: "dropping view {0}",
    sqlite3.SQLITE_DROP_TRIGGER: "dropping trigger {0}",
    sqlite3.SQLITE_DROP_VTABLE: "dropping virtual table {0}",
    sqlite3.SQLITE_DROP_TEMP_TABLE: "dropping temporary table {0}",
    sqlite3.SQLITE_DROP_TEMP_INDEX: "dropping temporary index {0}",
    sqlite3.SQLITE_DROP_TEMP_VIEW: "dropping temporary view {0}",
    sqlite3.SQLITE_DROP_TEMP_TRIGGER: "dropping temporary trigger {0}",
    sqlite3.SQLITE_ALTER_TABLE: "altering table {1}",
    sqlite3.SQLITE_REINDEX: "reindexing {0}",
    sqlite3.SQLITE_ANALYZE: "analyzing {0}",
    sqlite3.SQLITE_TRANSACTION: "transaction control ({0})",
    sqlite3.SQLITE_SAVEPOINT: "savepoints",
    sqlite3.SQLITE_ATTACH: "attaching a database file (ATTACH, VACUUM)",
    sqlite3.SQLITE_DETACH: "detaching a database",
}

Authorizer = Callable[[int, str | None, str | None, str | None, str | None], int]


def describe(action: int, arg1: str | None, arg2: str | None, database: str | None = None) -> str:
    """A short phrase for a refused action, for the error the model reads (never a host path:
    the ATTACH phrase leaves out the file name)."""
    if database == "temp":
        return "creating or changing temporary objects"
    if arg1 in SCHEMA_TABLES and action in (sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE):
        return "changing the schema"
    if action == sqlite3.SQLITE_PRAGMA:
        return f"PRAGMA {arg1}" + (" with a value" if arg2 is not None and arg1 not in PRAGMAS_WITH_ARGUMENT else "")
    if action == sqlite3.SQLITE_FUNCTION:
        return f"the function {arg2}()"
    words = _ACTION_WORDS.get(action)
    if words is None:
        return f"SQLite action {action}"
    return words.format(arg1 or "?", arg2 or "?")


def changes_data(action: int, table: str | None) -> bool:
    """Whether an allowed action changes what the database holds (for a confirmation's wording):
    the write actions, except the bookkeeping of the schema table that comes with every DDL."""
    return action in _WRITE_ACTIONS and table not in SCHEMA_TABLES


def decide(mode: str, action: int, arg1: str | None, arg2: str | None, database: str | None) -> bool:
    """Whether ``mode`` (``"read"`` or ``"write"``) allows this authorizer action."""
    if action in _READ_ACTIONS:
        return True
    if action == sqlite3.SQLITE_FUNCTION:
        return (arg2 or "").lower() not in DENIED_FUNCTIONS
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        return name in READ_PRAGMAS and (arg2 is None or name in PRAGMAS_WITH_ARGUMENT)
    if action == sqlite3.SQLITE_UPDATE and arg1 == "sqlite_master" and database == "main":
        # Table-valued pragma functions (``pragma_table_info(?)``) declare their virtual table
        # through a nested statement that SQLite authorizes as an update of sqlite_master; it
        # writes nothing. A real ``UPDATE sqlite_master`` stays impossible: SQLite refuses it
        # without ``writable_schema`` (a pragma refused above), and in read mode ``mode=ro`` and
        # ``query_only`` refuse every write anyway.
        return True
    if mode == "write" and action in _WRITE_ACTIONS:
        # ALTER TABLE names the database in arg1; the others in ``database``.
        return (arg1 if action == sqlite3.SQLITE_ALTER_TABLE else database) == "main"
    return False
