"""The tools' schemas and descriptions: what a host shows the model on every turn (name, description, input
schema), kept lean (issue 21: at most 110 tokens a tool on average, ``tests/servers/test_tool_budget.py``), and
the complete output schemas the server checks its own results against.

Input schemas are portable: one type per schema (``anyOf`` where a value may be of several), never a ``type``
array, which single-type dialects (Gemini's, OpenAI's strict mode) reject.
"""

from __future__ import annotations

from typing import Any

from .config import Config

# Its length bounds (1 to MAX_SQL_LENGTH) are checked by statement(), not shown: every tool that takes SQL
# would pay for them in the model's context on every turn.
_SQL = {"type": "string"}
# One schema per type inside anyOf, never a ``type`` array: single-type dialects (Gemini's, OpenAI's
# strict mode) and the Inspector's portability check accept only that. The cells are left open here,
# and bind() refuses anything but scalars with a message that names the place.
_PARAMS = {
    "anyOf": [{"type": "array"}, {"type": "object"}],
    "description": "Values for ? (array) or :name (object): strings, numbers, booleans, null.",
}
# Output schemas are spelled portably too (the Inspector's --strict check): anyOf, never a type array.
_INTEGER_OR_NULL = {"anyOf": [{"type": "integer"}, {"type": "null"}]}
_TEXT_OR_NULL = {"anyOf": [{"type": "string"}, {"type": "null"}]}
#: One SQLite value as JSON (results.cell): null, a number, a text, or a blob as {"blob", "bytes"}.
_CELL = {"anyOf": [{"type": "null"}, {"type": "number"}, {"type": "string"}, {"type": "object"}]}
RESULT_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "columns": {"type": "array", "items": {"type": "string"}},
        # Each row is an array of cells in the order of ``columns``. Not written as ``items``: the
        # server checks its own result against this schema on every call, and an ``items`` check
        # costs a few calls per row (about as much as serializing the result); the rows are
        # lists by construction (results.json_rows).
        "rows": {"type": "array", "description": "One array per row: its cells in the order of columns."},
        "row_count": {"type": "integer"},
        "truncated": {"type": "boolean"},
        "hint": {"type": "string"},
        "cells_truncated": {"type": "integer"},
        "next_cursor": {"type": "string"},
    },
    "required": ["columns", "rows", "row_count", "truncated"],
}


QUERY_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sql": _SQL,
        "params": _PARAMS,
        # ``maximum`` and the default are the operator's: see query_input().
        "max_rows": {"type": "integer", "minimum": 1},
        "cursor": {"type": "string"},
    },
    "required": ["sql"],
    "additionalProperties": False,
}
LIST_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tables": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "type": {"type": "string"},
                    "columns": {"type": "array", "items": {"type": "string"}},
                    "rows": _INTEGER_OR_NULL,
                },
                "required": ["name", "type", "columns", "rows"],
            },
        },
        "truncated": {"type": "boolean"},
    },
    "required": ["tables", "truncated"],
}
DESCRIBE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "table": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1000,
            "description": "As list_tables names it.",
        }
    },
    "required": ["table"],
    "additionalProperties": False,
}
DESCRIBE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "type": {"type": "string"},
        "columns": {"type": "array"},
        "primary_key": {"type": "array"},
        "foreign_keys": {"type": "array"},
        "indexes": {"type": "array"},
        "rows": _INTEGER_OR_NULL,
        "sql": _TEXT_OR_NULL,
        "description": {"type": "string"},
    },
    "required": ["name", "type", "columns", "primary_key", "foreign_keys", "indexes"],
}
OVERVIEW_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tables": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "rows": _INTEGER_OR_NULL,
                    "references": {"type": "array", "items": {"type": "string"}},
                    "description": {"type": "string"},
                },
                "required": ["name", "rows"],
            },
        },
        "views": {"type": "array", "items": {"type": "string"}},
        "truncated": {"type": "boolean"},
        "description": {"type": "string"},
    },
    "required": ["tables", "views", "truncated"],
}
SAMPLE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"table": {"type": "string"}, "rows": {"type": "integer", "minimum": 1, "maximum": 20}},
    "required": ["table"],
    "additionalProperties": False,
}
SAMPLE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "table": {"type": "string"},
        "columns": {"type": "array", "items": {"type": "string"}},
        "rows": {"type": "array", "description": "One array per row: its cells in the order of columns."},
        "profiled_rows": {"type": "integer"},
        "profile": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "column": {"type": "string"},
                    "nulls": {"type": "integer"},
                    "distinct": {"type": "integer"},
                    "min": _CELL,
                    "max": _CELL,
                },
                "required": ["column", "nulls", "distinct", "min", "max"],
            },
        },
    },
    "required": ["table", "columns", "rows", "profiled_rows", "profile"],
}
EXPLAIN_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {"sql": _SQL, "params": _PARAMS},
    "required": ["sql"],
    "additionalProperties": False,
}
EXECUTE_INPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sql": _SQL,
        "params": _PARAMS,
    },
    "required": ["sql"],
    "additionalProperties": False,
}
EXECUTE_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "changes": {"type": "integer"},
        "last_row_id": _INTEGER_OR_NULL,
        **RESULT_OUTPUT["properties"],
    },
    "required": ["changes", "last_row_id"],
}


# What a host puts in front of the model on every turn, with the name and input schema: one line
# each, saying when to use the tool, how, and what it must not do (issue 21's budget: 110 tokens a tool).
QUERY_DOC = (
    "Run one read-only statement (SELECT, WITH, VALUES, read-only PRAGMA); rows come back as JSON. Never "
    "write values into the SQL: use params. When truncated, repeat the call with cursor: next_cursor."
)
LIST_DOC = "List tables and views with their column names and row counts (null when slow to count)."
DESCRIBE_DOC = "One table or view in detail: column types, nullability, defaults, keys, foreign keys, indexes, CREATE."
EXPLAIN_DOC = "Show how SQLite would run a statement (EXPLAIN QUERY PLAN: indexes, full scans) without running it."
OVERVIEW_DOC = (
    "The whole database in one short answer: every table with its row count and the tables its foreign keys "
    "point to, and the views. Use it first; describe_table gives a table's columns."
)
SAMPLE_DOC = (
    "A table's first rows (default 5) and per column: nulls, distinct values, min, max (over at most 10,000 "
    "rows). To see what the data looks like before writing a query."
)
EXECUTE_DOC = (
    "Change the database with one statement (INSERT, UPDATE, DELETE, CREATE...) in its own transaction, rolled "
    "back on error; the user may be asked to confirm first. Returns changes, last_row_id, RETURNING rows. "
    "No ATTACH, VACUUM, settings."
)


def query_input(config: Config) -> dict[str, Any]:
    """:data:`QUERY_INPUT` with the operator's row limits: ``max_rows`` at most ``--max-rows``,
    its default ``--default-rows``."""
    max_rows = {
        **QUERY_INPUT["properties"]["max_rows"],
        "maximum": config.max_rows,
        "description": f"Default {config.rows_by_default}.",
    }
    return {**QUERY_INPUT, "properties": {**QUERY_INPUT["properties"], "max_rows": max_rows}}
