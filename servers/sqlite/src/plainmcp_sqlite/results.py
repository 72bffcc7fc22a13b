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
from operator import itemgetter
from typing import Any

from plainmcp import json_codec

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


_NULL = type(None)
_INTEGERS = frozenset({int, _NULL})
_NUMBERS = frozenset({int, float, _NULL})
_TEXTS = frozenset({str, _NULL})
_FLOATS = frozenset({float})
_STRINGS = frozenset({str})
_INFINITIES = (math.inf, -math.inf)


#: One column of a result: its values, and the set of their types.
Column = tuple[Sequence[Any], set[type]]
#: A Markdown table, and whether a cell was shortened in it (:func:`render_table`).
Table = tuple[str, bool]


def json_column(values: Sequence[Any], max_chars: int, kinds: set[type] | None = None) -> tuple[Sequence[Any], int]:
    """:func:`cell` over one column: the values as JSON, and how many were cut (``kinds``: the
    values' types, when already known).

    A column of integers, NULLs, finite reals or short texts is already JSON and is returned as it
    is, after a few checks that run over the whole column at once; only a column holding a blob, an
    infinity or an over-long text (or a mix of these with other kinds) is converted cell by cell."""
    if kinds is None:
        kinds = set(map(type, values))
    if kinds <= _INTEGERS:
        return values, 0
    if kinds == _FLOATS:
        # One pass: the sum is finite unless a value is infinite (or the sum overflows, which only
        # sends the column to the cell-by-cell path).
        if math.isfinite(sum(values)):
            return values, 0
    elif kinds <= _NUMBERS:
        if not any(infinity in values for infinity in _INFINITIES):
            return values, 0
    elif kinds == _STRINGS:
        if max(map(len, values)) <= max_chars:
            return values, 0
    elif kinds <= _TEXTS:
        if max(map(len, filter(None, values)), default=0) <= max_chars:
            return values, 0
    shown = [cell(value, max_chars) for value in values]
    return [value for value, _ in shown], sum(cut for _, cut in shown)


def _by_column(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """The values of each column of ``rows`` (all of one width).

    Not ``zip(*rows)``: that makes an iterator per row at once, which sets off a garbage collection
    over the young rows on nearly every call; ``map`` with ``itemgetter`` allocates nothing per row."""
    return [list(map(itemgetter(index), rows)) for index in range(len(rows[0]))] if rows else []


def json_columns(rows: Sequence[Sequence[Any]], max_chars: int) -> tuple[list[Column], int, bool]:
    """The columns of ``rows`` as JSON (:func:`json_column`) with their types, the number of cells
    cut, and whether a column had to be converted."""
    found: list[Column] = []
    cut = 0
    converted = False
    for values in _by_column(rows):
        kinds = set(map(type, values))
        shown, column_cut = json_column(values, max_chars, kinds)
        if shown is not values:
            kinds = set(map(type, shown))
            converted = True
            cut += column_cut
        found.append((shown, kinds))
    return found, cut, converted


def json_rows(rows: Sequence[Sequence[Any]], max_chars: int) -> tuple[list[Sequence[Any]], int]:
    """Rows of SQLite values as JSON rows, converted a column at a time; and the number of cells cut
    (see :func:`cell`).

    A row is any sequence (JSON writes a tuple as an array): rows that are already JSON come back as
    they are, the very tuples sqlite3 made, without a copy."""
    shown, cut, _columns = _json_rows(rows, max_chars)
    return shown, cut


def _json_rows(rows: Sequence[Sequence[Any]], max_chars: int) -> tuple[list[Sequence[Any]], int, list[Column]]:
    if not rows:
        return [], 0, []
    columns, cut, converted = json_columns(rows, max_chars)
    if converted:
        rows = list(zip(*(values for values, _ in columns), strict=True))
    if any(_NULL in kinds for _, kinds in columns):
        # Beside a null, the core's codec checks its output by reading it back (a NaN would be
        # written as null too), and a tuple reads back as a list: rows with a NULL go out as lists,
        # or the message would be encoded a second time, by the slower standard library.
        return list(map(list, rows)), cut, columns
    return rows if isinstance(rows, list) else list(rows), cut, columns


def to_json(outcome: Outcome, *, max_cell_chars: int, max_rows: int) -> dict[str, Any]:
    """The structured result of a statement: ``{columns, rows, row_count, truncated}``, with
    ``hint`` when rows were left out and ``cells_truncated`` when cells were cut."""
    return shape(outcome, max_cell_chars=max_cell_chars, max_rows=max_rows)[0]


def shape(outcome: Outcome, *, max_cell_chars: int, max_rows: int) -> tuple[dict[str, Any], list[Column]]:
    """:func:`to_json`'s result, and its rows by column (for :func:`render_table`, which then need
    not take them apart again)."""
    rows, cut, columns = _json_rows(outcome.rows, max_cell_chars)
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
    return result, columns


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


def table_cell(value: Any) -> tuple[str, bool]:
    """One JSON cell as Markdown table text, and whether it was shortened. A number is written as
    the JSON of the result writes it."""
    if value is None:
        text = "NULL"
    elif isinstance(value, dict):  # a blob
        text = f"<blob {value['bytes']} bytes>"
    elif isinstance(value, float) and math.isfinite(value):
        text = json_codec.dumps(value).decode("ascii")
    else:
        text = str(value)
    shortened = len(text) > TABLE_CELL_CHARS
    if shortened:
        text = text[: TABLE_CELL_CHARS - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " "), shortened


_SPECIAL = ("\\", "|", "\r", "\n")


def table_column(values: Sequence[Any], kinds: set[type] | None = None) -> tuple[Sequence[str], bool]:
    """:func:`table_cell` over one column: the texts, and whether one was shortened (``kinds``: the
    values' types, when already known).

    Numbers need no escaping and texts rarely do: a column of numbers is written in one call of the
    JSON encoder (which writes a float several times faster than ``str``), and a column of texts is
    checked whole (one join) and escaped only if it must be."""
    if kinds is None:
        kinds = set(map(type, values))
    if kinds <= _NUMBERS:
        try:
            texts = json_codec.dumps(values)[1:-1].decode("ascii").split(",")
        except ValueError:  # an infinity (JSON-shaped rows have none): cell by cell below
            pass
        else:
            if _NULL in kinds:
                texts = ["NULL" if text == "null" else text for text in texts]
            return texts, False
    if kinds == {str}:
        joined = "".join(values)
        if not any(special in joined for special in _SPECIAL) and max(map(len, values)) <= TABLE_CELL_CHARS:
            return values, False
    shown = [table_cell(value) for value in values]
    return [text for text, _ in shown], any(shortened for _, shortened in shown)


def render_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], by_column: list[Column] | None = None
) -> tuple[str, bool]:
    """A Markdown table of JSON-shaped rows, and whether a cell was shortened to
    :data:`TABLE_CELL_CHARS` in it. Built a column at a time (``by_column``: the rows' columns with
    their types, when already known), then joined in one pass."""
    if not columns:
        return "", False
    head, head_shortened = table_column(columns)
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    shortened = head_shortened
    if rows:
        texts = []
        if by_column is None:
            by_column = [(values, set(map(type, values))) for values in _by_column(rows)]
        for values, kinds in by_column:
            text, column_shortened = table_column(values, kinds)
            texts.append(text)
            shortened = shortened or column_shortened
        lines.append(_body(texts, len(rows)))
    return "\n".join(lines), shortened


def _body(texts: list[Sequence[str]], count: int) -> str:
    """The table's rows from its columns' texts: the cells and the separators between them laid out
    in one list (a slice assignment per column, no tuple per row), then joined once."""
    width = len(texts)
    pieces = [" | "] * (2 * width * count)
    for index, column in enumerate(texts):
        pieces[2 * index :: 2 * width] = column
    pieces[2 * width - 1 :: 2 * width] = [" |\n| "] * count
    pieces[-1] = " |"
    return "| " + "".join(pieces)


def shape_with_table(outcome: Outcome, *, max_cell_chars: int, max_rows: int) -> tuple[dict[str, Any], Table]:
    """:func:`shape`'s result and its table (:func:`render_table`), from one pass over the columns."""
    result, by_column = shape(outcome, max_cell_chars=max_cell_chars, max_rows=max_rows)
    return result, render_table(result["columns"], result["rows"], by_column)


def summary(result: dict[str, Any], table: Table | None = None) -> str:
    """The readable form of a structured result: a count line, the table, then the hint
    (``table``: its rows' :func:`render_table`, when already made)."""
    count = result["row_count"]
    head = f"{count} row{'s' if count != 1 else ''}" + (" (truncated)" if result["truncated"] else "")
    parts = [head]
    text, shortened = table if table is not None else render_table(result["columns"], result["rows"])
    if text and count:
        parts.append(text)
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
