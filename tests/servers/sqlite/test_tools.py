"""The tools on a real database: results as JSON, caps, the catalogue, and execute's transactions."""

from __future__ import annotations

import sqlite3

import pytest

from .support import answering, make_shop, serve, text_of

pytestmark = pytest.mark.anyio


async def test_tools_list_is_read_only_without_allow_write(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        tools, _ = await client.list_tools()
    assert [tool["name"] for tool in tools] == [
        "query",
        "list_tables",
        "describe_database",
        "describe_table",
        "sample_rows",
        "explain_query",
    ]
    assert all(tool["annotations"]["readOnlyHint"] for tool in tools)


async def test_query_binds_positional_and_named_params(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        positional = await client.call_tool(
            "query", {"sql": "SELECT name FROM customers WHERE id IN (?, ?) ORDER BY id", "params": [1, 3]}
        )
        named = await client.call_tool(
            "query", {"sql": "SELECT name FROM customers WHERE city = :city", "params": {":city": "London"}}
        )
    assert positional["structuredContent"] == {
        "columns": ["name"],
        "rows": [["Ada"], ["Linus"]],
        "row_count": 2,
        "truncated": False,
    }
    assert named["structuredContent"]["rows"] == [["Ada"]]
    assert "| Ada |" in text_of(positional)


async def test_query_shows_blobs_infinities_and_nulls_as_json(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        result = await client.call_tool(
            "query", {"sql": "SELECT note, 1e999, -1e999, NULL, 2.5 FROM orders WHERE id = 1"}
        )
    assert result["structuredContent"]["rows"] == [[{"blob": "AP8Q", "bytes": 3}, "Infinity", "-Infinity", None, 2.5]]
    assert "<blob 3 bytes>" in text_of(result)


async def test_query_cuts_long_cells_and_says_so(tmp_path):
    async with serve(make_shop(tmp_path), max_cell_chars=20) as client:
        result = await client.call_tool("query", {"sql": "SELECT printf('%.50c', 'a') AS long"})
    structured = result["structuredContent"]
    assert structured["rows"][0][0] == "a" * 20 + "… [30 more characters]"
    assert structured["cells_truncated"] == 1


async def test_query_rows_default_and_cap(tmp_path):
    sql = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 500) SELECT n FROM r"
    async with serve(make_shop(tmp_path), default_rows=10, max_rows=200) as client:
        default = await client.call_tool("query", {"sql": sql})
        asked = await client.call_tool("query", {"sql": sql, "max_rows": 200})
        too_many = await client.call_tool("query", {"sql": sql, "max_rows": 201})
    assert default["structuredContent"]["row_count"] == 10 and default["structuredContent"]["truncated"]
    assert "max_rows (up to 200)" in default["structuredContent"]["hint"]
    assert asked["structuredContent"]["row_count"] == 200
    assert too_many.get("isError") is True and "max_rows" in text_of(too_many)


async def test_query_errors_explain_without_host_path(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        syntax = await client.call_tool("query", {"sql": "SELEC name FROM customers"})
        missing = await client.call_tool("query", {"sql": "SELECT * FROM nowhere"})
        bindings = await client.call_tool("query", {"sql": "SELECT ?", "params": []})
    assert text_of(syntax) == 'SQL syntax error near "SELEC".'
    assert "no such table: nowhere" in text_of(missing).lower()
    assert "Parameters do not match" in text_of(bindings)
    for result in (syntax, missing, bindings):
        assert result["isError"] is True and str(tmp_path) not in text_of(result)


async def test_list_tables_gives_columns_and_cheap_counts(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        result = await client.call_tool("list_tables", {})
    tables = {t["name"]: t for t in result["structuredContent"]["tables"]}
    assert set(tables) == {"customers", "orders", "big_orders", 'odd "name"'}
    assert tables["customers"] == {"name": "customers", "type": "table", "columns": ["id", "name", "city"], "rows": 3}
    assert tables["big_orders"]["rows"] is None and tables["big_orders"]["type"] == "view"
    assert tables['odd "name"']["rows"] == 0  # a name needing quotes is counted, not broken
    assert "customers (table, 3 rows): id, name, city" in text_of(result)


async def test_describe_table_gives_keys_and_indexes(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        result = await client.call_tool("describe_table", {"table": "ORDERS"})
    described = result["structuredContent"]
    assert described["name"] == "orders" and described["rows"] == 3
    assert [c["name"] for c in described["columns"]] == ["id", "customer_id", "total", "note"]
    assert described["primary_key"] == ["id"]
    assert described["foreign_keys"] == [
        {
            "columns": ["customer_id"],
            "references": {"table": "customers", "columns": ["id"]},
            "on_update": "NO ACTION",
            "on_delete": "CASCADE",
        }
    ]
    assert described["indexes"][0]["name"] == "orders_customer"
    assert "foreign key (customer_id) -> customers(id)" in text_of(result)


async def test_describe_table_unknown_suggests_names(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        result = await client.call_tool("describe_table", {"table": "customer"})
    assert result["isError"] is True
    assert "Unknown table 'customer'. Did you mean: customers" in text_of(result)


async def test_explain_query_shows_index_use(tmp_path):
    async with serve(make_shop(tmp_path)) as client:
        result = await client.call_tool(
            "explain_query", {"sql": "EXPLAIN SELECT * FROM orders WHERE customer_id = ?", "params": [1]}
        )
    assert "USING INDEX orders_customer" in text_of(result)
    assert result["structuredContent"]["plan"][0]["detail"].startswith("SEARCH orders")


async def test_execute_commits_and_reports_changes(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, elicitation=answering("accept")) as client:
        inserted = await client.call_tool(
            "execute", {"sql": "INSERT INTO customers (name, city) VALUES (?, ?)", "params": ["Barbara", "Boston"]}
        )
        returned = await client.call_tool("execute", {"sql": "UPDATE orders SET total = total * 2 RETURNING id, total"})
    assert inserted["structuredContent"] == {"changes": 1, "last_row_id": 4}
    assert returned["structuredContent"]["changes"] == 3
    assert returned["structuredContent"]["rows"] == [[1, 241.0], [2, 30.0], [3, 600.0]]
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT name FROM customers WHERE id = 4").fetchone() == ("Barbara",)


async def test_execute_failure_rolls_back(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True) as client:
        # The second row breaks the unique index after the first row went in: nothing may stay.
        result = await client.call_tool("execute", {"sql": "INSERT INTO customers (name) VALUES ('New'), ('Ada')"})
        orphan = await client.call_tool("execute", {"sql": "INSERT INTO orders (customer_id) VALUES (99)"})
    assert result["isError"] is True and "UNIQUE constraint failed" in text_of(result)
    assert orphan["isError"] is True and "FOREIGN KEY" in text_of(orphan)
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT count(*) FROM customers").fetchone() == (3,)
        assert check.execute("SELECT count(*) FROM orders").fetchone() == (3,)


async def test_query_refuses_an_integer_beyond_64_bits_with_a_clear_error(tmp_path):
    # Regression: sqlite3 raised OverflowError, which became a bare internal error.
    async with serve(make_shop(tmp_path)) as client:
        positional = await client.call_tool("query", {"sql": "SELECT ?", "params": [2**63]})
        named = await client.call_tool("query", {"sql": "SELECT :n", "params": {"n": -(2**63) - 1}})
        largest = await client.call_tool("query", {"sql": "SELECT ?", "params": [2**63 - 1]})
    for refused in (positional, named):
        assert refused["isError"] is True
        assert "does not fit SQLite's 64-bit integers" in text_of(refused)
    assert largest["structuredContent"]["rows"] == [[2**63 - 1]]
