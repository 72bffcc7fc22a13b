"""Hostile queries against a real server process (issue 15): memory stays bounded before anything is
materialised, a step SQLite cannot interrupt neither outlives the deadline for its caller nor blocks
later reads, and cancellation stops the work.

Memory is read from ``/proc/<pid>/status`` of the real server (``VmHWM``, the peak resident set), and
liveness is ``ping`` answered within a second while the attack runs.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_sqlite import engine

from tests.proc_status import memory_mib

from .support import STDIO_COMMAND, WAIT, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

#: The issue's bound for any attack.
MAX_RSS_MIB = 300


def columns(expression: str, count: int) -> str:
    return ", ".join(f"{expression} AS c{i}" for i in range(count))


#: Text of ~1 MB that Python must hold as 4 bytes a character (one character outside the BMP).
WIDE_TEXT = "printf('%.*c', 990000, 'a') || char(128512)"

# (attack, SQL, what the answer must say). Each would allocate gigabytes if values were built first
# and measured after.
MEMORY_ATTACKS = [
    ("one huge zeroblob", "SELECT zeroblob(500000000)", "larger than the limit"),
    ("one huge randomblob", "SELECT randomblob(500000000)", "larger than the limit"),
    ("a hex expansion", "SELECT replace(hex(zeroblob(400000)), '00', 'abcd')", "larger than the limit"),
    ("200 zeroblob columns", f"SELECT {columns('zeroblob(990000)', 200)}", "needs more memory"),
    ("200 randomblob columns", f"SELECT {columns('randomblob(990000)', 200)}", "needs more memory"),
    (
        "200 copies of one wide text",
        f"WITH v(x) AS (SELECT {WIDE_TEXT}) SELECT {columns('x', 200)} FROM v",
        "needs more memory",
    ),
    (
        "group_concat over a large table",
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 200000) "
        "SELECT group_concat(printf('%.*c', 1000, 'x')) FROM r",
        "larger than the limit",
    ),
]


async def test_memory_attacks_stay_under_300_mib(tmp_path):
    path = make_shop(tmp_path)
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path)]) as client:
        pid = client.process.pid
        for attack, sql, phrase in MEMORY_ATTACKS:
            with anyio.fail_after(WAIT):
                result = await client.call_tool("query", {"sql": sql})
            assert result.get("isError") is True, attack
            assert phrase in text_of(result), (attack, text_of(result))
        # Rows of ~1 MB each: the first is kept, the next passes the budget and ends the result.
        many = await client.call_tool(
            "query",
            {
                "sql": f"WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) SELECT {WIDE_TEXT} FROM r",
                "max_rows": 1000,
            },
        )
        assert many["structuredContent"]["row_count"] == 1
        assert "size limit" in many["structuredContent"]["hint"]
        # A few wide texts fit SQLite's heap: one row, its cells cut, in bounded memory; the next
        # such row is looked at only to say that more exist.
        wide = await client.call_tool(
            "query",
            {
                "sql": f"WITH v(x) AS (SELECT {WIDE_TEXT}), k(i) AS (VALUES (1), (2), (3)) SELECT {columns('x', 28)} FROM v, k",
            },
        )
        assert wide["structuredContent"]["cells_truncated"] == 28
        assert wide["structuredContent"]["truncated"] is True
        with anyio.fail_after(1.0):
            await client.ping()
        peak = memory_mib(pid)["VmHWM"]
    assert peak < MAX_RSS_MIB, f"peak RSS {peak} MiB"


async def test_table_resource_of_wide_rows_stays_bounded(tmp_path):
    # A hostile file: five rows of twenty texts of ~1 MB that Python holds as 4 MB each, read back
    # through the table resource, whose sample rows are read under a budget of their own.
    path = make_shop(tmp_path)
    # Written by another process: SQLite's heap limit is process-wide, and this one may already
    # have served (in memory) a database, which set it.
    script = (
        "import sqlite3, sys\n"
        "with sqlite3.connect(sys.argv[1]) as c:\n"
        f"    c.execute('CREATE TABLE wide ({', '.join(f'c{i}' for i in range(20))})')\n"
        f'    c.execute("INSERT INTO wide WITH v(x) AS (SELECT {WIDE_TEXT}), k(i) AS (VALUES (1), (2), (3), (4), (5)) '
        f'SELECT {", ".join(["x"] * 20)} FROM v, k")\n'
    )
    subprocess.run([sys.executable, "-c", script, str(path)], check=True, timeout=60)
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path)]) as client:
        with anyio.fail_after(WAIT):
            read = await client.read_resource("sqlite://table/wide")
        peak = memory_mib(client.process.pid)["VmHWM"]
    assert "sample_rows" in read["contents"][0]["text"]
    assert peak < MAX_RSS_MIB, f"peak RSS {peak} MiB"


async def test_later_row_too_large_truncates_the_result(tmp_path):
    # The third row holds a value past the result budget: the rows before it are a true prefix.
    path = make_shop(tmp_path)
    sql = (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 5) "
        "SELECT n, CASE WHEN n < 3 THEN 'small' ELSE zeroblob(2000000) END AS v FROM r"
    )
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path)]) as client:
        result = await client.call_tool("query", {"sql": sql})
        first = await client.call_tool("query", {"sql": sql.replace("n < 3", "n < 1")})
    structured = result["structuredContent"]
    assert structured["truncated"] is True
    assert structured["rows"][0] == [1, "small"]
    assert 1 <= structured["row_count"] <= 2
    assert "size limit" in structured["hint"]
    # When not even the first row can be built, the answer says why.
    assert first.get("isError") is True and "larger than the limit" in text_of(first)


async def test_like_pattern_longer_than_the_limit_is_refused(tmp_path):
    path = make_shop(tmp_path)
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path)]) as client:
        result = await client.call_tool(
            "query",
            {
                "sql": "SELECT printf('%.*c', 900000, 'a') LIKE '%' || printf('%.*c', 20000, 'a') || 'b'",
            },
        )
        usual = await client.call_tool("query", {"sql": "SELECT name FROM customers WHERE name LIKE 'A%'"})
    assert result.get("isError") is True
    assert "LIKE or GLOB pattern is longer than the limit" in text_of(result)
    assert usual["structuredContent"]["rows"] == [["Ada"]]


# One call of instr() over two long texts: quadratic work inside one virtual-machine step, where
# neither the progress handler nor sqlite3_interrupt can stop it (about 4 s on the test machine).
UNINTERRUPTIBLE = "SELECT instr(printf('%.*c', 990000, 'a'), printf('%.*c', 495000, 'a') || 'b')"


async def ping_while(client, running: anyio.Event, latencies: list[float]) -> None:
    """Ping every 0.1 s until ``running`` is set; record each answer's delay."""
    while not running.is_set():
        started = time.monotonic()
        with anyio.fail_after(1.0):  # the liveness bound of the issue
            await client.ping()
        latencies.append(time.monotonic() - started)
        await anyio.sleep(0.1)


async def test_uninterruptible_step_meets_the_deadline_and_frees_reads(tmp_path):
    path = make_shop(tmp_path)
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path), "--timeout", "0.5"]) as client:
        done = anyio.Event()
        latencies: list[float] = []
        async with anyio.create_task_group() as group:
            group.start_soon(ping_while, client, done, latencies)
            # Honoured: the answer comes at the deadline plus the grace (0.75 s), not when the step
            # ends (about 4 s); the bounds leave room for a loaded machine.
            with anyio.fail_after(2.5):
                result = await client.call_tool("query", {"sql": UNINTERRUPTIBLE})
            # The next read runs at once, on a fresh connection, while the old step still runs.
            with anyio.fail_after(1.5):
                after = await client.call_tool("query", {"sql": "SELECT count(*) FROM customers"})
            done.set()
    assert result.get("isError") is True
    assert "Deadline exceeded" in text_of(result)
    assert after["structuredContent"]["rows"] == [[3]]
    assert latencies and max(latencies) < 1.0


async def test_cancelled_uninterruptible_step_frees_reads(tmp_path):
    path = make_shop(tmp_path)
    async with connect_stdio([*STDIO_COMMAND, "--db", str(path), "--timeout", "60"]) as client:
        done = anyio.Event()
        latencies: list[float] = []
        async with anyio.create_task_group() as group:
            group.start_soon(ping_while, client, done, latencies)
            # The client gives up after 0.3 s and sends notifications/cancelled.
            with pytest.raises(Exception):  # noqa: B017 - the client's own timeout, whatever its type
                await client.call_tool("query", {"sql": UNINTERRUPTIBLE}, timeout=0.3)
            # Served 0.25 s after the cancellation, long before the step ends (about 4 s).
            with anyio.fail_after(1.5):
                after = await client.call_tool("query", {"sql": "SELECT count(*) FROM customers"})
            done.set()
    assert after["structuredContent"]["rows"] == [[3]]
    assert latencies and max(latencies) < 1.0


# The engine itself: which statements are stopped, which are left behind, and how many at most.

ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
# About a second of one uninterruptible step on the test machine.
STUCK = "SELECT instr(printf('%.*c', 500000, 'a'), printf('%.*c', 250000, 'a') || 'b')"


async def test_cancelled_statement_is_stopped_and_its_worker_returns_to_idle(tmp_path):
    db = engine.Database(make_shop(tmp_path), "read", timeout=60)
    try:
        with anyio.move_on_after(0.2):
            await db.run(ENDLESS, max_rows=1)
        worker = db._worker
        with anyio.fail_after(1.0):
            outcome = await db.run("SELECT count(*) FROM customers", max_rows=1)
        assert outcome.rows == [(3,)]
        assert db._worker is worker  # the same connection: the statement itself stopped
        assert db.retired == 0
    finally:
        await db.close()


async def test_shape_runs_on_the_database_thread_off_the_event_loop(tmp_path):
    # query turns its rows into JSON and a table there: the event loop only sends the answer.
    db = engine.Database(make_shop(tmp_path), "read")
    try:
        outcome = await db.run(
            "SELECT id FROM customers ORDER BY id", max_rows=10, shape=lambda found: (threading.get_ident(), found.rows)
        )
        assert db._worker is not None
        assert outcome.shaped == (db._worker._thread.ident, [(1,), (2,), (3,)])
        assert outcome.shaped[0] != threading.get_ident()
    finally:
        await db.close()


async def test_retired_connections_are_bounded_and_end_on_their_own(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "MAX_RETIRED", 1)
    db = engine.Database(make_shop(tmp_path), "read", timeout=0.1)
    try:
        with pytest.raises(engine.DeadlineExceeded):
            await db.run(STUCK, max_rows=1)
        assert db.retired == 1
        # The bound is reached: the next stuck statement is waited for, not left behind.
        with pytest.raises(engine.DeadlineExceeded):
            await db.run(STUCK, max_rows=1)
        assert db.retired <= 1
        with anyio.fail_after(WAIT):  # the retired step ends, its connection closes, its thread ends
            while db.retired:
                await anyio.sleep(0.05)
        assert (await db.run("SELECT 1", max_rows=1)).rows == [(1,)]
    finally:
        await db.close()


async def test_write_returning_row_past_the_limit_fails_and_rolls_back(tmp_path):
    path = make_shop(tmp_path)
    sql = (
        "INSERT INTO customers (name) VALUES ('a'), ('b'), ('c') "
        "RETURNING id, CASE WHEN name = 'c' THEN zeroblob(2000000) END AS v"
    )
    async with serve(path, allow_write=True) as client:
        result = await client.call_tool("execute", {"sql": sql})
        count = await client.call_tool("query", {"sql": "SELECT count(*) FROM customers"})
    assert result.get("isError") is True and "larger than the limit" in text_of(result)
    assert count["structuredContent"]["rows"] == [[3]]  # nothing of the failed statement stayed
