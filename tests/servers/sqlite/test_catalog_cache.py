"""The catalogue cache: repeated calls read nothing but the versions, and a change made by anyone
(another connection, another process, the execute tool) is seen by the very next call."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from typing import Any

import anyio
import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_sqlite.config import Config
from plainmcp_sqlite.engine import Database
from plainmcp_sqlite.server import Deps, build_server

from .support import WAIT, make_shop, serve, text_of

pytestmark = pytest.mark.anyio


class RecordingDatabase(Database):
    """A real read connection that remembers the statements it ran."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.statements: list[str] = []

    async def run(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self.statements.append(sql)
        return await super().run(sql, *args, **kwargs)


def write_from_another_process(path, sql: str) -> None:
    script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.close()"
    subprocess.run([sys.executable, "-c", script, str(path), sql], check=True, timeout=WAIT)


def tables_of(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {table["name"]: table for table in result["structuredContent"]["tables"]}


async def test_repeated_list_tables_and_describe_only_check_the_versions(tmp_path):
    path = make_shop(tmp_path)
    reader = RecordingDatabase(path, "read")
    async with connect_in_memory(build_server(Config(db=path), Deps(reader))) as client:
        first = await client.call_tool("list_tables", {})
        await client.call_tool("describe_table", {"table": "Customers"})
        reader.statements.clear()
        again = await client.call_tool("list_tables", {})
        described = await client.call_tool("describe_table", {"table": "Customers"})
        await client.read_resource("sqlite://schema")
        await client.read_resource("sqlite://schema")
    assert again["structuredContent"] == first["structuredContent"]
    assert described["structuredContent"]["name"] == "customers" and described["structuredContent"]["rows"] == 3
    # The versions are checked by the probe on its own connection, not on the read connection's
    # thread; the schema text is read once, then kept.
    assert len(reader.statements) == 1 and "sqlite_schema" in reader.statements[0]


async def test_a_locked_database_makes_the_probe_fall_back_to_the_read_connection(tmp_path):
    path = make_shop(tmp_path)
    reader = RecordingDatabase(path, "read")
    async with connect_in_memory(build_server(Config(db=path), Deps(reader))) as client:
        first = await client.call_tool("list_tables", {})
        reader.statements.clear()
        locker = sqlite3.connect(path, isolation_level=None)
        locker.execute("BEGIN EXCLUSIVE")  # the probe, which never waits, cannot read the header now
        async with anyio.create_task_group() as task_group:

            async def release() -> None:
                await anyio.sleep(0.3)
                locker.execute("COMMIT")

            task_group.start_soon(release)
            with anyio.fail_after(WAIT):
                again = await client.call_tool("list_tables", {})  # the read connection waits for the lock
        locker.close()
    assert again["structuredContent"] == first["structuredContent"]
    assert any("data_version" in sql for sql in reader.statements)


async def test_cached_list_tables_sees_a_table_and_rows_from_another_connection(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path) as client:
        before = tables_of(await client.call_tool("list_tables", {}))
        with sqlite3.connect(path) as other:
            other.execute("CREATE TABLE added (a, b)")
            other.execute("INSERT INTO added VALUES (1, 2), (3, 4)")
        other.close()
        after = await client.call_tool("list_tables", {})
        with sqlite3.connect(path) as other:
            other.execute("INSERT INTO customers (name) VALUES ('Eve'), ('Frances')")
        other.close()
        later = tables_of(await client.call_tool("list_tables", {}))
    assert "added" not in before
    assert tables_of(after)["added"] == {"name": "added", "type": "table", "columns": ["a", "b"], "rows": 2}
    assert "added (table, 2 rows): a, b" in text_of(after)
    assert before["customers"]["rows"] == 3 and later["customers"]["rows"] == 5


async def test_cached_catalogue_sees_another_process_change_the_schema(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path) as client:
        await client.call_tool("list_tables", {})
        await client.call_tool("describe_table", {"table": "customers"})
        schema_before = (await client.read_resource("sqlite://schema"))["contents"][0]["text"]
        await anyio.to_thread.run_sync(
            write_from_another_process,
            path,
            "ALTER TABLE customers ADD COLUMN email TEXT; CREATE INDEX customers_city ON customers(city); "
            "DROP VIEW big_orders; INSERT INTO customers (name) VALUES ('Eve');",
        )
        listed = tables_of(await client.call_tool("list_tables", {}))
        described = (await client.call_tool("describe_table", {"table": "customers"}))["structuredContent"]
        schema_after = (await client.read_resource("sqlite://schema"))["contents"][0]["text"]
        gone = await client.call_tool("describe_table", {"table": "big_orders"})
    assert listed["customers"]["columns"] == ["id", "name", "city", "email"] and listed["customers"]["rows"] == 4
    assert "big_orders" not in listed
    assert [column["name"] for column in described["columns"]][-1] == "email" and described["rows"] == 4
    assert "customers_city" in {index["name"] for index in described["indexes"]}
    assert "customers_city" not in schema_before and "CREATE INDEX customers_city" in schema_after
    assert gone["isError"] is True and "Unknown table 'big_orders'" in text_of(gone)


async def test_cached_list_tables_sees_the_execute_tool(tmp_path):
    # The write connection is another connection to the reader: its commits change data_version.
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, confirm_writes=False) as client:
        before = tables_of(await client.call_tool("list_tables", {}))
        await client.call_tool("execute", {"sql": "DELETE FROM orders WHERE id = ?", "params": [3]})
        after = tables_of(await client.call_tool("list_tables", {}))
        await client.call_tool("execute", {"sql": "CREATE TABLE notes (body TEXT)"})
        added = tables_of(await client.call_tool("list_tables", {}))
    assert before["orders"]["rows"] == 3 and after["orders"]["rows"] == 2
    assert added["notes"]["rows"] == 0


async def test_table_resource_stays_fresh_and_does_not_share_the_cached_description(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path) as client:
        first = await client.read_resource("sqlite://table/customers")
        described = await client.call_tool("describe_table", {"table": "customers"})
        with sqlite3.connect(path) as other:
            other.execute("UPDATE customers SET city = 'Paris' WHERE id = 1")
        other.close()
        second = await client.read_resource("sqlite://table/customers")
    assert "sample_rows" not in described["structuredContent"]  # the resource's addition stays its own
    assert '"London"' in first["contents"][0]["text"] and '"Paris"' in second["contents"][0]["text"]
