"""The database at a glance (issue 19): ``describe_database`` (tables, row counts, the foreign-key graph,
views) short enough for 100 tables in about 2k tokens, and ``sample_rows`` (first rows and a profile of each
column), through a real client in both eras."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

from .support import STDIO_COMMAND, WAIT, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]


@pytest.mark.parametrize("version", ERAS)
async def test_describe_database_gives_counts_links_and_views(tmp_path, version):
    async with serve(make_shop(tmp_path), protocol_version=version) as client:
        result = await client.call_tool("describe_database", {})
    overview = result["structuredContent"]
    tables = {table["name"]: table for table in overview["tables"]}
    assert tables["orders"] == {"name": "orders", "rows": 3, "references": ["customers"]}
    assert tables["customers"] == {"name": "customers", "rows": 3}
    assert overview["views"] == ["big_orders"] and overview["truncated"] is False
    # As the README shows it.
    assert text_of(result) == (
        "3 table(s), 1 view(s); describe_table gives a table's columns.\n"
        "customers (3 rows)\n"
        'odd "name" (0 rows)\n'
        "orders (3 rows) -> customers\n"
        "views: big_orders"
    )


def make_hundred(folder: Path) -> Path:
    path = folder / "wide.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE table_000 (id INTEGER PRIMARY KEY, name TEXT)")
        for n in range(1, 100):
            connection.execute(
                f"CREATE TABLE table_{n:03d} (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES table_{n - 1:03d}(id), "
                "label TEXT, amount REAL, created TEXT)"
            )
            connection.executemany(f"INSERT INTO table_{n:03d} (label) VALUES (?)", [("x",)] * n)
    connection.close()
    return path


async def test_describe_database_of_100_tables_stays_under_2k_tokens(tmp_path):
    async with serve(make_hundred(tmp_path)) as client:
        result = await client.call_tool("describe_database", {})
    text = text_of(result)
    assert len(result["structuredContent"]["tables"]) == 100
    assert "table_042 (42 rows) -> table_041" in text
    assert len(text.encode()) / 4 < 2000, f"{len(text.encode()) / 4:.0f} tokens of text"
    structured = json.dumps(result["structuredContent"], separators=(",", ":"))
    assert len(structured.encode()) / 4 < 2000, f"{len(structured.encode()) / 4:.0f} tokens of structured content"


@pytest.mark.parametrize("version", ERAS)
async def test_sample_rows_gives_rows_and_a_column_profile(tmp_path, version):
    async with serve(make_shop(tmp_path), protocol_version=version) as client:
        result = await client.call_tool("sample_rows", {"table": "CUSTOMERS", "rows": 2})
    sample = result["structuredContent"]
    assert sample["table"] == "customers" and sample["columns"] == ["id", "name", "city"]
    assert sample["rows"] == [[1, "Ada", "London"], [2, "Grace", "New York"]]
    assert sample["profiled_rows"] == 3
    city = next(column for column in sample["profile"] if column["column"] == "city")
    assert city == {"column": "city", "nulls": 1, "distinct": 2, "min": "London", "max": "New York"}
    # As the README shows it.
    assert text_of(result) == (
        "customers: first 2 row(s)\n| id | name | city |\n|---|---|---|\n| 1 | Ada | London |\n"
        "| 2 | Grace | New York |\n\nprofile over 3 row(s):\n  id: 0 null, 3 distinct, min 1, max 3\n"
        "  name: 0 null, 3 distinct, min 'Ada', max 'Linus'\n  city: 1 null, 2 distinct, min 'London', max 'New York'"
    )


async def test_sample_rows_refuses_unknown_tables_and_cuts_long_values(tmp_path):
    path = make_shop(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute("INSERT INTO customers (name) VALUES (?)", ("z" * 5000,))
    connection.close()
    async with serve(path, max_cell_chars=100) as client:
        unknown = await client.call_tool("sample_rows", {"table": "customer"})
        sampled = await client.call_tool("sample_rows", {"table": "customers", "rows": 20})
    assert unknown["isError"] is True and "Did you mean: customers" in text_of(unknown)
    name = next(column for column in sampled["structuredContent"]["profile"] if column["column"] == "name")
    assert name["max"].startswith("z" * 40 + "…")
    assert len(json.dumps(sampled["structuredContent"])) < 2000


async def test_sample_rows_profile_stays_within_the_deadline(tmp_path):
    # A view that is slow to compute: the profile reads at most 10,000 of its rows, within --timeout.
    path = make_shop(tmp_path)
    with sqlite3.connect(path) as connection:
        connection.execute(
            "CREATE VIEW endless AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT n FROM r"
        )
    connection.close()
    async with serve(path, timeout=2.0) as client:
        with anyio.fail_after(WAIT):
            result = await client.call_tool("sample_rows", {"table": "endless"})
    assert result["structuredContent"]["profiled_rows"] == 10_000
    assert result["structuredContent"]["profile"][0]["max"] == 10_000


@pytest.mark.parametrize("version", ERAS)
async def test_stdio_process_overview_in_both_eras(tmp_path, version):
    command = [*STDIO_COMMAND, "--db", str(make_shop(tmp_path)), "--no-watch"]
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio(command, protocol_version=version) as client:
            overview = await client.call_tool("describe_database", {})
            sample = await client.call_tool("sample_rows", {"table": "orders"})
    assert {table["name"] for table in overview["structuredContent"]["tables"]} >= {"customers", "orders"}
    assert sample["structuredContent"]["profiled_rows"] == 3
