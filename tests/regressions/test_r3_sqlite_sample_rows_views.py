"""Regression (issue 26.7): ``sample_rows`` on a hostile view left a step running for minutes on every
call (two CPUs pinned after two calls). Reading a view's rows builds values with the view's functions;
sample_rows allowed them 16 MiB where ``query`` allows ``--max-result-bytes``, and ``instr`` over two
such values is one step of quadratic cost that neither the deadline nor a cancellation can stop.

Attacked through a real server process: the CPU it burns after the answers is read from
``/proc/<pid>/stat``, and ``ping`` must answer within a second throughout."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import anyio
import pytest
from plainmcp import MCPError, connect_stdio

from tests.servers.sqlite.support import STDIO_COMMAND, WAIT, make_shop, text_of

pytestmark = pytest.mark.anyio

# Minutes of one uninterruptible step when values of 4 MB may be built; refused at once under the
# bound query has (the view's text is that long before instr() starts).
QUADRATIC_VIEW = (
    "CREATE VIEW hostile AS WITH s(a) AS (SELECT hex(zeroblob(2000000))) "
    "SELECT instr(a || '1', substr(a, 1, length(a) / 2) || '1') AS x FROM s"
)
# A generated column computes its value as it is read, like a view. SQLite computes it on INSERT too,
# so the planted file gets its expression afterwards, through the schema table.
CHEAP_COLUMN = "(instr(hex(zeroblob(2 + a)) || '1', hex(zeroblob(1)) || '1'))"
QUADRATIC_COLUMN = "(instr(hex(zeroblob(2000000 + a)) || '1', hex(zeroblob(1000000)) || '1'))"
# Endless, but stoppable at every step: only the deadline or a cancellation ends it.
ENDLESS_VIEW = (
    "CREATE VIEW endless AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c ORDER BY x"
)


def cpu_seconds(pid: int) -> float:
    """User and system time of a whole process (all its threads), from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def hostile_database(folder: Path) -> Path:
    path = make_shop(folder)
    connection = sqlite3.connect(path, isolation_level=None)
    connection.executescript(
        f"{QUADRATIC_VIEW}; {ENDLESS_VIEW};"
        f"CREATE TABLE computed (a INTEGER, x GENERATED ALWAYS AS {CHEAP_COLUMN} VIRTUAL);"
        "INSERT INTO computed (a) VALUES (1);"
        "PRAGMA writable_schema = ON;"
    )
    planted = "UPDATE sqlite_schema SET sql = replace(sql, ?, ?) WHERE name = 'computed'"
    connection.execute(planted, (CHEAP_COLUMN, QUADRATIC_COLUMN))
    connection.close()
    return path


async def ping_until(client, done: anyio.Event, latencies: list[float]) -> None:
    while not done.is_set():
        started = time.monotonic()
        with anyio.fail_after(1.0):
            await client.ping()
        latencies.append(time.monotonic() - started)
        await anyio.sleep(0.1)


async def test_r3_sqlite_sample_rows_of_a_hostile_view_leaves_no_work_behind(tmp_path: Path) -> None:
    path = hostile_database(tmp_path)
    command = [*STDIO_COMMAND, "--db", str(path), "--no-watch", "--timeout", "1"]
    async with connect_stdio(command) as client:
        pid = client.process.pid
        done, latencies = anyio.Event(), []
        async with anyio.create_task_group() as group:
            group.start_soon(ping_until, client, done, latencies)
            answers = []
            with anyio.fail_after(WAIT):
                for _ in range(2):
                    answers.append(await client.call_tool("sample_rows", {"table": "hostile"}))
                    answers.append(await client.call_tool("sample_rows", {"table": "computed"}))
                try:
                    await client.request("resources/read", {"uri": "sqlite://table/hostile"})
                    resource = "read"
                except MCPError as failure:
                    resource = str(failure)
            before = cpu_seconds(pid)
            await anyio.sleep(3)
            burnt = cpu_seconds(pid) - before
            done.set()
    assert all(a["isError"] is True and "larger than the limit" in text_of(a) for a in answers), answers
    assert "larger than the limit" in resource
    assert burnt < 0.5, f"{burnt:.2f} s of CPU in the 3 s after the answers: a step kept running"
    assert latencies and max(latencies) < 1.0


async def test_r3_sqlite_sample_rows_of_a_stored_large_value_still_works(tmp_path: Path) -> None:
    # The bound is for computed values: a stored value larger than a result is still sampled (cut).
    path = make_shop(tmp_path)
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("CREATE TABLE docs (body TEXT)")
    connection.execute("INSERT INTO docs VALUES (printf('%.*c', 3000000, 'a'))")
    connection.close()
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path), "--no-watch"]) as client:
        with anyio.fail_after(WAIT):
            result = await client.call_tool("sample_rows", {"table": "docs"})
    assert result.get("isError") is not True, text_of(result)
    assert result["structuredContent"]["profile"][0]["distinct"] == 1


async def test_r3_sqlite_cancelled_sample_rows_stops_the_work(tmp_path: Path) -> None:
    path = hostile_database(tmp_path)
    command = [*STDIO_COMMAND, "--db", str(path), "--no-watch", "--timeout", "120"]
    async with connect_stdio(command) as client:
        pid = client.process.pid
        done, latencies = anyio.Event(), []
        async with anyio.create_task_group() as group:
            group.start_soon(ping_until, client, done, latencies)
            # The client gives up after 1 s and sends notifications/cancelled; the deadline is far.
            with pytest.raises(Exception):  # noqa: B017 - the client's own timeout, whatever its type
                await client.call_tool("sample_rows", {"table": "endless"}, timeout=1.0)
            await anyio.sleep(0.5)
            before = cpu_seconds(pid)
            await anyio.sleep(2)
            burnt = cpu_seconds(pid) - before
            with anyio.fail_after(2):  # the database is free again
                after = await client.call_tool("query", {"sql": "SELECT count(*) FROM customers"})
            done.set()
    assert burnt < 0.3, f"{burnt:.2f} s of CPU in the 2 s after the cancellation: the statement kept running"
    assert after["structuredContent"]["rows"] == [[3]]
    assert latencies and max(latencies) < 1.0
