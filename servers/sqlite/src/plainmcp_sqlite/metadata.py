"""Datasette-compatible metadata (``--metadata metadata.yml`` or ``.json``): descriptions of databases,
tables and columns, shown by ``describe_database`` and ``describe_table``; and canned queries, each served
as a tool of its own with named parameters, its own mode (``write: true``) and row cap (``max_rows``, our
addition: Datasette has none).

The file is Datasette's (https://docs.datasette.io/en/stable/metadata.html), read at start-up::

    databases:
      shop:                      # a database's name (--db shop=...), or its file name without extension
        description: The bookshop
        tables:
          orders:
            description: One row per order
            columns: {total: Amount in euros, including VAT}
        queries:
          orders_of:
            sql: SELECT id, total FROM orders WHERE customer_id = :customer
            description: The orders of one customer
            max_rows: 50

Anything else in the file (``title``, ``license``, plugins, ...) is ignored. YAML needs PyYAML
(``pip install plainmcp-sqlite[yaml]``); JSON needs nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: A canned query's tool name (MCP's tool-name rule, shortened) and a parameter's name (SQLite's :name).
TOOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,63}")
PARAM_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
#: The server's own tools: a canned query may not take their names.
BUILT_IN_TOOLS = frozenset(
    {"query", "list_tables", "describe_database", "describe_table", "sample_rows", "explain_query", "execute"}
)
#: ``:name`` in a statement, as Datasette finds a canned query's parameters when it lists none
#: (``::`` casts and quoted text aside, which is good enough for the statements metadata holds).
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class CannedQuery:
    """One canned query: a tool called ``name`` over ``database``."""

    name: str
    database: str
    sql: str
    params: tuple[str, ...]
    description: str
    write: bool = False
    max_rows: int | None = None


@dataclass(frozen=True, slots=True)
class Metadata:
    """What the file says, by our database names."""

    descriptions: dict[str, str] = field(default_factory=dict)
    #: database -> table -> {"description": ..., "columns": {column: description}}
    tables: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    queries: tuple[CannedQuery, ...] = ()

    def table(self, database: str, table: str) -> dict[str, Any]:
        """What the file says about a table (any case of its name), or an empty dict."""
        found = self.tables.get(database, {})
        return found.get(table) or next((v for k, v in found.items() if k.casefold() == table.casefold()), {})


def load(path: Path, databases: Iterable[tuple[str, Path]]) -> Metadata:
    """Read ``path`` for the databases served, as (name, file) pairs: a section applies to the database
    of that name, or else to the one whose file name (without extension) it is, as in Datasette.

    Raises:
        ValueError: the file cannot be read, is not valid YAML/JSON of Datasette's shape, names a
            database that is not served, or holds a canned query that is wrong (the message says which).
    """
    document = _parse(path)
    sections = document.get("databases") or {}
    if not isinstance(sections, dict):
        raise ValueError(f"--metadata {path}: 'databases' must be a mapping of database names")
    served = list(databases)
    descriptions: dict[str, str] = {}
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    queries: list[CannedQuery] = []
    for key, section in sections.items():
        name = next((n for n, _ in served if n == key), None) or next((n for n, p in served if p.stem == key), None)
        if name is None:
            raise ValueError(f"--metadata {path}: database {key!r} is not served (--db {key}=PATH names it)")
        if not isinstance(section, dict):
            raise ValueError(f"--metadata {path}: databases.{key} must be a mapping")
        if isinstance(section.get("description"), str):
            descriptions[name] = section["description"]
        tables[name] = _tables(path, key, section.get("tables") or {})
        for query, spec in (section.get("queries") or {}).items():
            if any(known.name == str(query) for known in queries):
                raise ValueError(f"--metadata {path}: two canned queries are called {query} (each becomes a tool)")
            queries.append(_canned(path, f"databases.{key}.queries.{query}", name, str(query), spec))
    return Metadata(descriptions, tables, tuple(queries))


def _parse(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as failure:
        raise ValueError(f"--metadata {path} cannot be read: {getattr(failure, 'strerror', None) or failure}") from None
    if path.suffix.lower() in (".yml", ".yaml"):
        try:
            import yaml  # optional: plainmcp-sqlite[yaml]
        except ImportError:
            raise ValueError(
                f"--metadata {path}: YAML needs PyYAML (pip install 'plainmcp-sqlite[yaml]'), or use JSON"
            ) from None
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as failure:
            raise ValueError(f"--metadata {path} is not valid YAML: {failure}") from None
    else:
        try:
            document = json.loads(text)
        except ValueError as failure:
            raise ValueError(f"--metadata {path} is not valid JSON: {failure}") from None
    if not isinstance(document, dict):
        raise ValueError(f"--metadata {path} must hold a mapping (Datasette's metadata)")
    return document


def _tables(path: Path, key: str, section: Any) -> dict[str, dict[str, Any]]:
    if not isinstance(section, dict):
        raise ValueError(f"--metadata {path}: databases.{key}.tables must be a mapping")
    found: dict[str, dict[str, Any]] = {}
    for table, spec in section.items():
        spec = spec if isinstance(spec, dict) else {}
        listed = spec.get("columns")
        columns = listed if isinstance(listed, dict) else {}
        entry: dict[str, Any] = {"columns": {str(c): str(d) for c, d in columns.items() if isinstance(d, str)}}
        if isinstance(spec.get("description"), str):
            entry["description"] = spec["description"]
        found[str(table)] = entry
    return found


def _canned(path: Path, where: str, database: str, name: str, spec: Any) -> CannedQuery:
    if isinstance(spec, str):
        spec = {"sql": spec}  # Datasette's short form: the name maps to the SQL itself
    if not isinstance(spec, dict) or not isinstance(spec.get("sql"), str) or not spec["sql"].strip():
        raise ValueError(f"--metadata {path}: {where} needs sql")
    if not TOOL_NAME.fullmatch(name):
        raise ValueError(f"--metadata {path}: {where}: a query's name must be a letter then letters, digits, _ or -")
    if name in BUILT_IN_TOOLS:
        raise ValueError(f"--metadata {path}: {where}: {name} is the name of one of the server's own tools")
    params = spec.get("params")
    found = list(dict.fromkeys(_NAMED.findall(spec["sql"])))
    names = found if params is None else params
    if not isinstance(names, list) or not all(isinstance(p, str) and PARAM_NAME.fullmatch(p) for p in names):
        raise ValueError(f"--metadata {path}: {where}.params must be a list of parameter names")
    missing = [name for name in found if name not in names]
    if missing:
        raise ValueError(f"--metadata {path}: {where}: the sql uses :{missing[0]}, which params does not list")
    max_rows = spec.get("max_rows")
    if max_rows is not None and (not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1):
        raise ValueError(f"--metadata {path}: {where}.max_rows must be a positive integer")
    text = spec.get("description") or spec.get("title") or f"Canned query on {database}."
    return CannedQuery(name, database, spec["sql"], tuple(names), str(text), spec.get("write") is True, max_rows)
