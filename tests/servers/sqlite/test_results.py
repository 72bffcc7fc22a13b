"""Rows to JSON and to the readable table: the column-at-a-time fast paths give exactly what the
cell-by-cell definitions give, on every kind of column."""

from __future__ import annotations

import math
from typing import Any

import pytest
from plainmcp import json_codec
from plainmcp_sqlite import results
from plainmcp_sqlite.engine import Outcome

LONG = "x" * 40
COLUMNS = {
    "integers": [1, -(2**63), 2**62, 0],
    "integers and nulls": [None, 7, None, 0],
    "reals": [0.25, -1.5, 3.0, 1e300],
    "reals with an infinity": [0.5, math.inf, -math.inf, None],
    "reals and an infinity": [1.5, -math.inf, 2.0, 0.0],
    "reals whose sum overflows": [1.7e308, 1.7e308, -0.5, 1e-7],
    "numbers mixed": [1, 2.5, None, -3],
    "short texts": ["a", "", "ünïcode", "with space"],
    "texts and nulls": [None, "b", "", None],
    "a long text": ["short", LONG, None, "ok"],
    "texts to escape": ["a|b", "back\\slash", "two\nlines", "cr\rhere"],
    "blobs": [b"\x00\xff", b"", b"y" * 40, None],
    "everything": [None, 3, "t|x", b"\x01"],
    "all null": [None, None, None, None],
}


def reference_json(rows: list[tuple[Any, ...]], max_chars: int) -> tuple[list[list[Any]], int]:
    cut, shown = 0, []
    for row in rows:
        line = []
        for value in row:
            value, was_cut = results.cell(value, max_chars)
            cut += was_cut
            line.append(value)
        shown.append(line)
    return shown, cut


def reference_table(columns: list[str], rows: list[list[Any]]) -> tuple[str, bool]:
    texts = [[results.table_cell(value) for value in row] for row in [columns, *rows]]
    shortened = any(short for row in texts for _, short in row)
    lines = ["| " + " | ".join(text for text, _ in row) + " |" for row in texts]
    lines.insert(1, "|" + "|".join("---" for _ in columns) + "|")
    return "\n".join(lines), shortened


@pytest.mark.parametrize("names", [[name] for name in COLUMNS] + [list(COLUMNS)], ids=[*COLUMNS, "all together"])
def test_rows_convert_like_cell_by_cell(names):
    rows = list(zip(*(COLUMNS[name] for name in names), strict=True))
    shown, cut = results.json_rows(rows, 16)
    # Rows are tuples or lists (JSON writes both as arrays): the same arrays on the wire.
    assert type(shown) is list and all(type(row) in (list, tuple) for row in shown)
    assert (json_codec.loads(json_codec.dumps(shown)), cut) == reference_json(rows, 16)
    outcome = Outcome(names, rows, False)
    structured = results.to_json(outcome, max_cell_chars=16, max_rows=10)
    assert structured["rows"] == shown and structured.get("cells_truncated", 0) == cut
    assert results.render_table(names, shown) == reference_table(names, shown)
    # The columns shape() hands over give the table a second pass over the rows would.
    shaped, table = results.shape_with_table(outcome, max_cell_chars=16, max_rows=10)
    assert shaped == structured and table == results.render_table(names, shown)
    assert results.summary(shaped, table) == results.summary(shaped)


def test_long_table_cells_are_shortened_and_escaped():
    rows = [["y" * (results.TABLE_CELL_CHARS + 5), "a|b"], ["ok", "fine"]]
    table, shortened = results.render_table(["long", "pipe|name"], rows)
    assert shortened is True
    assert table.splitlines()[0] == "| long | pipe\\|name |"
    assert table.splitlines()[2] == "| " + "y" * (results.TABLE_CELL_CHARS - 1) + "… | a\\|b |"
    assert results.render_table(["n"], [[1], [None]]) == ("| n |\n|---|\n| 1 |\n| NULL |", False)


def test_rows_already_json_are_kept_without_a_copy():
    rows = [(1, "a", 0.5), (2, "b", 1e300)]
    shown, cut = results.json_rows(rows, 16)
    assert shown is rows and cut == 0


def test_rows_with_a_null_go_out_as_lists_the_codec_encodes_once(monkeypatch):
    # The codec reads output holding a null back to check it (a NaN would be null too); a tuple
    # would read back as a list and send the whole message to the standard library's encoder.
    rows = [(1, "a", 0.5), (2, None, 1e300)]
    shown, cut = results.json_rows(rows, 16)
    assert shown == [[1, "a", 0.5], [2, None, 1e300]] and cut == 0

    def slow_path(value):
        raise AssertionError("encoded a second time, by the standard library")

    monkeypatch.setattr(json_codec._encoder, "encode", slow_path)
    assert json_codec.loads(json_codec.dumps({"rows": shown})) == {"rows": shown}


def test_table_writes_numbers_as_the_json_does():
    """The same digits as structuredContent (a float written by the JSON encoder, not by str)."""
    rows = [[1e300, 7, 1e-7], [None, -(2**63), 0.1]]
    table, _shortened = results.render_table(["a", "b", "c"], rows)
    cells = [line.strip("| ").split(" | ") for line in table.splitlines()[2:]]
    assert cells == [
        [json_codec.dumps(value).decode() if value is not None else "NULL" for value in row] for row in rows
    ]
