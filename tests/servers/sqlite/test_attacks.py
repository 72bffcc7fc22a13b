"""The attack suite against read-only mode (and the refusals that stay with --allow-write).

Each attack goes through the ``query`` tool of a read-only server on a real database file. For
every one: the answer is an ``isError`` result that says why, no file in the database's folder
changed or appeared, and the server answers the next query at once.
"""

from __future__ import annotations

import sqlite3

import anyio
import pytest

from .support import WAIT, folder_state, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

# (attack, SQL, a phrase the refusal must contain)
WRITES = [
    ("insert", "INSERT INTO customers (name) VALUES ('Mallory')", "inserting into customers"),
    ("update", "UPDATE customers SET name = 'x'", "updating customers"),
    ("delete", "DELETE FROM orders", "deleting from orders"),
    ("replace", "REPLACE INTO customers (id, name) VALUES (1, 'x')", "inserting into customers"),
    ("delete hidden behind WITH", "WITH x AS (SELECT 1) DELETE FROM customers", "deleting from customers"),
    (
        "insert hidden behind WITH",
        "WITH v(n) AS (VALUES ('m')) INSERT INTO customers (name) SELECT n FROM v",
        "inserting into customers",
    ),
    (
        "upsert",
        "INSERT INTO customers (id, name) VALUES (1, 'x') ON CONFLICT(id) DO UPDATE SET name = 'y'",
        "inserting into customers",
    ),
    ("drop table", "DROP TABLE orders", "changing the schema"),
    ("create table", "CREATE TABLE evil (x)", "changing the schema"),
    ("alter table", "ALTER TABLE customers ADD COLUMN evil TEXT", "altering table customers"),
    ("create index", "CREATE INDEX evil ON customers(city)", "changing the schema"),
    (
        "create trigger",
        "CREATE TRIGGER evil AFTER INSERT ON customers BEGIN DELETE FROM orders; END",
        "creating trigger evil",
    ),
    ("attach a new file", "ATTACH DATABASE 'planted.db' AS planted", "attaching a database file"),
    ("attach in-memory", "ATTACH ':memory:' AS m", "attaching a database file"),
    ("vacuum into a file", "VACUUM INTO 'copy.db'", "attaching a database file"),
    ("vacuum", "VACUUM", "attaching a database file"),
    ("load_extension", "SELECT load_extension('/tmp/evil.so')", "load_extension()"),
    ("pragma user_version write", "PRAGMA user_version = 7", "PRAGMA user_version with a value"),
    ("pragma journal_mode write", "PRAGMA journal_mode = WAL", "PRAGMA journal_mode with a value"),
    ("pragma writable_schema", "PRAGMA writable_schema = ON", "PRAGMA writable_schema"),
    ("pragma query_only off", "PRAGMA query_only = OFF", "PRAGMA query_only"),
    ("pragma database_list (host path)", "PRAGMA database_list", "PRAGMA database_list"),
    ("pragma function database_list", "SELECT * FROM pragma_database_list", "PRAGMA database_list"),
    ("temp table", "CREATE TEMP TABLE t AS SELECT * FROM customers", "temporary objects"),
    ("temp view", "CREATE TEMP VIEW v AS SELECT 1", "temporary objects"),
    ("temp trigger", "CREATE TEMP TRIGGER tt AFTER INSERT ON customers BEGIN SELECT 1; END", "temporary objects"),
    ("begin", "BEGIN", "transaction control"),
    ("savepoint", "SAVEPOINT s", "savepoints"),
    ("reindex", "REINDEX", "reindexing"),
    ("analyze", "ANALYZE", "analyzing"),
]


async def assert_alive(client) -> None:
    with anyio.fail_after(WAIT):
        result = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM customers"})
    assert result["structuredContent"]["rows"] == [[3]]


@pytest.mark.parametrize(("attack", "sql", "phrase"), WRITES, ids=[w[0] for w in WRITES])
async def test_read_only_refuses_write(tmp_path, attack, sql, phrase):
    path = make_shop(tmp_path)
    before = folder_state(tmp_path)
    async with serve(path) as client:
        result = await client.call_tool("query", {"sql": sql})
        assert result.get("isError") is True, result
        message = text_of(result)
        assert "refused in read-only mode" in message
        assert phrase in message
        assert str(tmp_path) not in message
        await assert_alive(client)
    assert folder_state(tmp_path) == before


async def test_read_only_refuses_stacked_statements(tmp_path):
    path = make_shop(tmp_path)
    before = folder_state(tmp_path)
    async with serve(path) as client:
        for sql in ("SELECT 1; DROP TABLE customers", "SELECT 1; ATTACH 'x.db' AS x", "SELECT 1;DELETE FROM orders;"):
            result = await client.call_tool("query", {"sql": sql})
            assert result.get("isError") is True
            assert "Only one SQL statement per call" in text_of(result)
        await assert_alive(client)
    assert folder_state(tmp_path) == before


async def test_read_only_recursive_query_without_end_meets_deadline(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, timeout=0.3) as client:
        with anyio.fail_after(WAIT):
            result = await client.call_tool(
                "query",
                {
                    "sql": "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
                },
            )
        assert result.get("isError") is True
        assert "Deadline exceeded" in text_of(result)
        await assert_alive(client)


async def test_read_only_long_single_step_meets_deadline(tmp_path):
    # A cross join counted in one virtual-machine loop: the progress handler and the interrupt timer
    # both stop it; either way the answer is the deadline, not a hang.
    path = make_shop(tmp_path)
    sql = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 3000) "
        "SELECT count(*) FROM r AS a, r AS b, r AS c"
    )
    async with serve(path, timeout=0.3) as client:
        with anyio.fail_after(WAIT):
            result = await client.call_tool("query", {"sql": sql})
        assert "Deadline exceeded" in text_of(result)
        await assert_alive(client)


async def test_read_only_millions_of_rows_are_capped(tmp_path):
    path = make_shop(tmp_path)
    sql = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 5000000) SELECT n FROM r"
    async with serve(path, max_rows=50) as client:
        with anyio.fail_after(WAIT):
            result = await client.call_tool("query", {"sql": sql, "max_rows": 50})
        structured = result["structuredContent"]
        assert structured["row_count"] == 50
        assert structured["truncated"] is True
        assert f'cursor "{structured["next_cursor"]}"' in structured["hint"]
        with anyio.fail_after(WAIT):
            page = await client.call_tool("query", {"sql": sql, "max_rows": 50, "cursor": structured["next_cursor"]})
        assert page["structuredContent"]["rows"][0] == [51]
        await assert_alive(client)


async def test_read_only_huge_blob_is_refused(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path) as client:
        for sql in (
            "SELECT randomblob(200000000)",
            "SELECT zeroblob(2000000000)",
            "SELECT replace(hex(zeroblob(9000000)), '00', 'abcd')",
        ):
            result = await client.call_tool("query", {"sql": sql})
            assert result.get("isError") is True, sql
            assert "larger than the limit" in text_of(result)
        await assert_alive(client)


async def test_read_only_large_rows_stop_at_the_result_budget(tmp_path):
    path = make_shop(tmp_path)
    sql = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100) SELECT n, randomblob(100000) FROM r"
    )
    async with serve(path, max_result_bytes=250_000, max_cell_chars=64) as client:
        result = await client.call_tool("query", {"sql": sql, "max_rows": 100})
        structured = result["structuredContent"]
        assert structured["truncated"] is True
        assert 1 <= structured["row_count"] <= 3
        assert "size limit" in structured["hint"]
        blob = structured["rows"][0][1]
        assert blob["bytes"] == 100000 and blob["truncated"] is True


INJECTIONS = [
    "x'); DROP TABLE customers; --",
    "1 OR 1=1",
    "'; ATTACH 'pwn.db' AS p; --",
    "Robert'); DELETE FROM orders WHERE ('1'='1",
]


@pytest.mark.parametrize("payload", INJECTIONS)
async def test_injection_through_params_stays_a_value(tmp_path, payload):
    path = make_shop(tmp_path)
    before = folder_state(tmp_path)
    async with serve(path) as client:
        positional = await client.call_tool(
            "query", {"sql": "SELECT ? AS v, count(*) FROM customers WHERE name = ?", "params": [payload, payload]}
        )
        assert positional["structuredContent"]["rows"] == [[payload, 0]]
        named = await client.call_tool("query", {"sql": "SELECT :v AS v", "params": {"v": payload}})
        assert named["structuredContent"]["rows"] == [[payload]]
        described = await client.call_tool("describe_table", {"table": payload})
        assert described.get("isError") is True and "Unknown table" in text_of(described)
        explained = await client.call_tool(
            "explain_query", {"sql": "SELECT * FROM customers WHERE name = ?", "params": [payload]}
        )
        assert not explained.get("isError")
        with pytest.raises(Exception, match="not found"):
            await client.read_resource(
                "sqlite://table/"
                + payload.replace("'", "%27")
                .replace(" ", "%20")
                .replace(";", "%3B")
                .replace("=", "%3D")
                .replace("(", "%28")
                .replace(")", "%29")
            )
        await assert_alive(client)
    assert folder_state(tmp_path) == before


async def test_explain_query_cannot_smuggle_a_write(tmp_path):
    path = make_shop(tmp_path)
    before = folder_state(tmp_path)
    async with serve(path) as client:
        for sql in ("DELETE FROM orders", "SELECT 1; DELETE FROM orders", "ATTACH 'x.db' AS x"):
            result = await client.call_tool("explain_query", {"sql": sql})
            assert result.get("isError") is True, sql
        await assert_alive(client)
    assert folder_state(tmp_path) == before


async def test_cancelled_query_is_interrupted_and_server_stays_responsive(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, timeout=60) as client:
        endless = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
        with pytest.raises(Exception):  # noqa: B017 - the client's own timeout, whatever its type
            await client.call_tool("query", {"sql": endless}, timeout=0.3)
        # Only an interrupted statement frees the connection: without it this waits for 60 s.
        await assert_alive(client)


WRITE_MODE_REFUSALS = [
    ("attach", "ATTACH DATABASE 'planted.db' AS planted", "attaching a database file"),
    ("temp table", "CREATE TEMP TABLE t (x)", "temporary objects"),
    ("pragma write", "PRAGMA journal_mode = WAL", "PRAGMA journal_mode with a value"),
    ("transaction control", "COMMIT", "transaction control"),
    ("load_extension", "SELECT load_extension('/tmp/evil.so')", "load_extension()"),
]


@pytest.mark.parametrize(("attack", "sql", "phrase"), WRITE_MODE_REFUSALS, ids=[w[0] for w in WRITE_MODE_REFUSALS])
async def test_write_mode_still_refuses_writing_outside(tmp_path, attack, sql, phrase):
    path = make_shop(tmp_path)
    before = folder_state(tmp_path)
    async with serve(path, allow_write=True) as client:
        result = await client.call_tool("execute", {"sql": sql})
        assert result.get("isError") is True
        assert phrase in text_of(result)
    assert folder_state(tmp_path) == before


async def test_write_mode_vacuum_into_writes_no_file(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True) as client:
        result = await client.call_tool("execute", {"sql": f"VACUUM INTO '{tmp_path / 'copy.db'}'"})
        assert result.get("isError") is True
        assert str(tmp_path) not in text_of(result)
    assert not (tmp_path / "copy.db").exists()


async def test_write_mode_query_tool_stays_read_only(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True) as client:
        result = await client.call_tool("query", {"sql": "DELETE FROM orders"})
        assert "refused in read-only mode" in text_of(result)
        count = await client.call_tool("query", {"sql": "SELECT count(*) FROM orders"})
        assert count["structuredContent"]["rows"] == [[3]]


async def test_write_mode_cancelled_execute_rolls_back_and_frees_the_connection(tmp_path):
    path = make_shop(tmp_path)
    # Not confirmed: the cancelled statement is the write itself (test_confirm.py cancels a dry run).
    async with serve(path, allow_write=True, confirm_writes=False, timeout=60) as client:
        endless = (
            "INSERT INTO customers (name) WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
            "SELECT 'bulk ' || n FROM r"
        )
        with pytest.raises(Exception):  # noqa: B017 - the client's own timeout, whatever its type
            await client.call_tool("execute", {"sql": endless}, timeout=0.3)
        # The interrupted insert left no transaction open: the next one commits on its own.
        with anyio.fail_after(WAIT):
            result = await client.call_tool("execute", {"sql": "INSERT INTO customers (name) VALUES ('Eve')"})
        assert result["structuredContent"]["changes"] == 1
        await assert_alive_with(client, 4)
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT count(*) FROM customers").fetchone() == (4,)
    check.close()


async def assert_alive_with(client, customers: int) -> None:
    with anyio.fail_after(WAIT):
        result = await client.call_tool("query", {"sql": "SELECT count(*) AS n FROM customers"})
    assert result["structuredContent"]["rows"] == [[customers]]
