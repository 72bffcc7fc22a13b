"""Rows as JSON: how each SQLite value is shown, the cell cap, and the readable table.

SQLite has five storage classes; each becomes JSON like this:

- NULL, INTEGER, TEXT: ``null``, a number, a string. (Integers beyond 2**53 stay exact in the JSON
  text; a JavaScript client may round them: select them as text with ``CAST(x AS TEXT)`` to be safe.)
- REAL: a number; the infinities SQLite can hold (``1e999``) become the strings ``"Infinity"`` and
  ``"-Infinity"``, as JSON has no number for them.
- BLOB: an object ``{"blob": "<base64>", "bytes": <size>}``, so bytes are never mistaken for text.

Cells are capped: a text longer than ``max_cell_chars`` characters is cut and ends with
``… [N more characters]``; a blob keeps its first ``max_cell_chars`` bytes and gets
``"truncated": true``. The result says how many cells were cut.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Sequence
from typing import Any

from .engine import Outcome

#: Characters of one cell in the readable table, before it is cut with "…" (the structured result
#: keeps up to the cell cap; ``substr(column, start, length)`` reads any part of a long value).
TABLE_CELL_CHARS = 200


def cell(value: Any, max_chars: int) -> tuple[Any, bool]:
    """One SQLite value as JSON, and whether it was cut."""
    if value is None or isinstance(value, int):
        return value, False
    if isinstance(value, str):
        if len(value) <= max_chars:
            return value, False
        return f"{value[:max_chars]}… [{len(value) - max_chars} more characters]", True
    if isinstance(value, float):
        if math.isinf(value):
            return ("Infinity" if value > 0 else "-Infinity"), False
        return value, False
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        shown: dict[str, Any] = {"blob": base64.b64encode(data[:max_chars]).decode("ascii"), "bytes": len(data)}
        if len(data) > max_chars:
            shown["truncated"] = True
            return shown, True
        return shown, False
    return str(value), False  # not produced by sqlite3; kept total rather than crash


def to_json(outcome: Outcome, *, max_cell_chars: int, max_rows: int) -> dict[str, Any]:
    """The structured result of a statement: ``{columns, rows, row_count, truncated}``, with
    ``hint`` when rows were left out and ``cells_truncated`` when cells were cut."""
    cut = 0
    rows: list[list[Any]] = []
    for raw in outcome.rows:
        row = []
        for value in raw:
            shown, was_cut = cell(value, max_cell_chars)
            cut += was_cut
            row.append(shown)
        rows.append(row)
    result: dict[str, Any] = {
        "columns": outcome.columns,
        "rows": rows,
        "row_count": len(rows),
        "truncated": outcome.more,
    }
    if outcome.more:
        result["hint"] = page_hint(len(rows), outcome.capped_by, max_rows)
    if cut:
        result["cells_truncated"] = cut
    return result


def page_hint(shown: int, capped_by: str | None, max_rows: int) -> str:
    why = (
        f"the result reached the size limit after {shown} rows"
        if capped_by == "bytes"
        else f"only the first {shown} rows are shown"
    )
    more = f", or pass max_rows (up to {max_rows})" if capped_by != "bytes" and shown < max_rows else ""
    return (
        f"More rows exist: {why}. Page with a stable ORDER BY and LIMIT {shown} OFFSET {shown}{more}; "
        "or aggregate (COUNT, GROUP BY) instead of listing rows."
    )


def render_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> tuple[str, bool]:
    """A Markdown table of JSON-shaped rows, and whether a cell was shortened to
    :data:`TABLE_CELL_CHARS` in it."""
    shortened = [False]

    def show(value: Any) -> str:
        if value is None:
            text = "NULL"
        elif isinstance(value, dict):  # a blob
            text = f"<blob {value['bytes']} bytes>"
        else:
            text = str(value)
        if len(text) > TABLE_CELL_CHARS:
            text = text[: TABLE_CELL_CHARS - 1] + "…"
            shortened[0] = True
        return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")

    if not columns:
        return "", False
    lines = ["| " + " | ".join(show(name) for name in columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines.extend("| " + " | ".join(show(value) for value in row) + " |" for row in rows)
    return "\n".join(lines), shortened[0]


def summary(result: dict[str, Any]) -> str:
    """The readable form of a structured result: a count line, the table, then the hint."""
    count = result["row_count"]
    head = f"{count} row{'s' if count != 1 else ''}" + (" (truncated)" if result["truncated"] else "")
    parts = [head]
    table, shortened = render_table(result["columns"], result["rows"])
    if table and count:
        parts.append(table)
        if shortened:
            parts.append(
                f"Cells longer than {TABLE_CELL_CHARS} characters are shortened in this table (the "
                "structured result has them); select substr(column, start, length) to read a part."
            )
    if result.get("cells_truncated"):
        parts.append(f"{result['cells_truncated']} long cell(s) were cut.")
    if "hint" in result:
        parts.append(result["hint"])
    return "\n\n".join(parts)
