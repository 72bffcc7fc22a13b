"""Regression (issue 26.6): sqlite's confirmed writes in the 2026-07-28 era could be committed without
the question ever being asked (the accepting answer sent up front), an accepted round replayed once
enough calls had flushed the memory of spent nonces, and swapped rows or a trigger's changes committed
as long as the row count matched; the question cut the statement at 2,000 characters.

Each attack here is the client's own: it drives the rounds itself (``answer_inputs=False``) against a
real server process or the in-memory pair, over a real SQLite file another connection meddles with."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_sqlite import confirmations
from plainmcp_sqlite.engine import Changed, Database, DatabaseError

from tests.servers.sqlite.support import WAIT, answering, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
ACCEPT = {"action": "accept", "content": {}}


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def meddle(path: Path, script: str) -> None:
    """Another process's change, committed on its own connection."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.executescript(script)
    finally:
        connection.close()


def call(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "execute", "arguments": arguments}


async def test_r3_sqlite_an_answer_sent_before_the_question_commits_nothing(tmp_path: Path) -> None:
    path = make_shop(tmp_path)
    command = [sys.executable, "-m", "plainmcp_sqlite", "--db", str(path), "--allow-write", "--no-watch"]
    delete = {"sql": "DELETE FROM orders WHERE customer_id = ?", "params": [1]}
    # Every key a client could guess for the question, all accepting, with no requestState.
    guessed = {key: ACCEPT for key in ("confirm", "confirm-1", "elicitation-1", "confirm-0")}
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio(command, protocol_version=MODERN, elicitation=answering("accept")) as client:
            first = await client.request("tools/call", {**call(delete), "inputResponses": guessed}, answer_inputs=False)
            assert first["resultType"] == "input_required"
            assert rows(path, "SELECT count(*) FROM orders") == [(3,)]
            # Answering the question that was asked commits, once.
            [key] = first["inputRequests"]
            answered = {**call(delete), "requestState": first["requestState"], "inputResponses": {key: ACCEPT}}
            done = await client.request("tools/call", answered, answer_inputs=False)
            again = await client.request("tools/call", answered, answer_inputs=False)
    assert done["structuredContent"]["changes"] == 2
    assert again["isError"] is True and "already used" in text_of(again)
    assert rows(path, "SELECT count(*) FROM orders") == [(1,)]


async def test_r3_sqlite_many_calls_do_not_flush_a_spent_confirmation(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(confirmations, "CAPACITY", 8)
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, protocol_version=MODERN, elicitation=answering("accept")) as client:

        async def accepted_round(name: str) -> dict[str, Any]:
            insert = call({"sql": "INSERT INTO customers (name) VALUES (?)", "params": [name]})
            first = await client.request("tools/call", insert, answer_inputs=False)
            if first.get("resultType") != "input_required":
                return first
            [key] = first["inputRequests"]
            return {**insert, "requestState": first["requestState"], "inputResponses": {key: ACCEPT}}

        replayed = await accepted_round("first")
        assert (await client.request("tools/call", replayed, answer_inputs=False))["structuredContent"]["changes"] == 1
        outcomes = []
        for n in range(40):  # far more than the ledger holds
            answered = await accepted_round(f"filler {n}")
            outcomes.append(answered if "isError" in answered else await client.request("tools/call", answered))
        replay = await client.request("tools/call", replayed, answer_inputs=False)
    committed = [o for o in outcomes if not o.get("isError")]
    refused = [o for o in outcomes if o.get("isError")]
    assert len(committed) == 7 and all("too many confirmations" in text_of(o) for o in refused)
    assert replay["isError"] is True and "already used" in text_of(replay)
    assert rows(path, "SELECT count(*) FROM customers WHERE name = 'first'") == [(1,)]


def test_r3_sqlite_the_ledger_forgets_a_nonce_only_once_it_expired() -> None:
    now = [1000.0]
    ledger = confirmations.Ledger(capacity=2, clock=lambda: now[0])
    assert ledger.spend("a", 1100.0) is None and ledger.spend("b", 1200.0) is None
    assert not ledger.has_room() and "too many" in str(ledger.spend("c", 1300.0))
    assert "already used" in str(ledger.spend("a", 1100.0))
    now[0] = 1150.0  # "a" expired: forgotten, and a replay of it is refused as expired instead
    assert ledger.has_room() and "expired" in str(ledger.spend("a", 1100.0))
    assert "already used" in str(ledger.spend("b", 1200.0))


@pytest.mark.parametrize("version", ["2025-11-25", MODERN])
@pytest.mark.parametrize(
    "swap",
    [
        # Same statement, same number of rows: other rows (another process moved the flags).
        "UPDATE customers SET city = 'flag' WHERE id IN (1, 2); UPDATE customers SET city = NULL WHERE id = 3;",
        # The trigger writes as many rows, but other values.
        "UPDATE settings SET note = 'exfiltrated';",
        # The trigger is swapped for one that writes elsewhere, as many rows.
        "DROP TRIGGER audit; CREATE TRIGGER audit AFTER UPDATE ON customers BEGIN "
        "INSERT INTO other (note) VALUES ('swapped'); END;",
    ],
)
async def test_r3_sqlite_other_changes_of_the_same_count_are_not_committed(
    tmp_path: Path, version: str, swap: str
) -> None:
    path = make_shop(tmp_path)
    meddle(
        path,
        "UPDATE customers SET city = 'flag' WHERE id IN (1, 3);"
        "CREATE TABLE settings (note TEXT); INSERT INTO settings VALUES ('plain');"
        "CREATE TABLE log (id INTEGER PRIMARY KEY, note TEXT); CREATE TABLE other (note TEXT);"
        "CREATE TRIGGER audit AFTER UPDATE ON customers BEGIN "
        "INSERT INTO log (note) SELECT note FROM settings; END;",
    )

    swapped: list[Any] = []

    async def swap_then_accept(params: dict[str, Any]) -> dict[str, Any]:
        meddle(path, swap)
        swapped.append(rows(path, "SELECT * FROM customers ORDER BY id") + rows(path, "SELECT * FROM log, other"))
        return ACCEPT

    async with serve(path, allow_write=True, protocol_version=version, elicitation=swap_then_accept) as client:
        result = await client.call_tool(
            "execute", {"sql": "UPDATE customers SET name = name || '!' WHERE city = 'flag'"}
        )
    assert result["isError"] is True and "other changes than the ones they saw" in text_of(result)
    assert "!" not in repr(rows(path, "SELECT name FROM customers"))
    assert swapped == [rows(path, "SELECT * FROM customers ORDER BY id") + rows(path, "SELECT * FROM log, other")]


async def test_r3_sqlite_the_question_shows_the_whole_statement_escaped(tmp_path: Path) -> None:
    path = make_shop(tmp_path)
    asked: list[dict[str, Any]] = []
    # The part that matters is at the end, past the old cut at 2,000 characters; escapes would hide it.
    padding = "/*" + "x" * 5000 + "*/"
    sql = f"UPDATE customers SET city = ? {padding} WHERE id = 1 OR name = '\x1b[2K\u202e'"
    async with serve(path, allow_write=True, elicitation=answering("decline", asked)) as client:
        await client.call_tool("execute", {"sql": sql, "params": ["Paris"]})
        too_long = await client.call_tool("execute", {"sql": "DELETE FROM orders /*" + "y" * 9000 + "*/"})
    [question] = asked  # the long one was refused before any question
    message = question["message"]
    assert "WHERE id = 1 OR name = '\\x1b[2K\\u202e'" in message and padding in message
    assert "\x1b" not in message and "\u202e" not in message
    assert 'with parameters: ["Paris"]' in message
    assert too_long["isError"] is True and "too long to show" in text_of(too_long)
    assert rows(path, "SELECT count(*) FROM orders") == [(3,)]


async def test_r3_sqlite_a_statement_cannot_feed_the_change_digest(tmp_path: Path) -> None:
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, elicitation=answering("accept")) as client:
        fed = await client.call_tool("execute", {"sql": "UPDATE orders SET total = plainmcp_change(1, 'U', 0, 1)"})
    assert fed["isError"] is True and "plainmcp_change" in text_of(fed)
    # Nor can a trigger of the file (trusted_schema = OFF): the write fails, nothing changes.
    meddle(path, "CREATE TRIGGER feed AFTER UPDATE ON orders BEGIN SELECT plainmcp_change(1); END;")
    async with serve(path, allow_write=True, elicitation=answering("accept")) as client:
        result = await client.call_tool("execute", {"sql": "UPDATE orders SET total = 0"})
    assert result["isError"] is True
    assert rows(path, "SELECT count(*) FROM orders WHERE total = 0") == [(0,)]


async def test_r3_sqlite_the_watching_triggers_never_outlive_their_statement(tmp_path: Path) -> None:
    # A watching trigger left behind would fire in a later, unconfirmed write, whose call of the
    # digest function the guard then refuses: that write would fail.
    path = make_shop(tmp_path)
    db = Database(path, "write")
    try:
        dry = await db.run("UPDATE orders SET total = total + 1", max_rows=1, dry_run=True)
        done = await db.run("UPDATE orders SET total = total + 1", max_rows=1, expect_digest=dry.digest)
        with pytest.raises(Changed):  # the data moved on: refused, rolled back
            await db.run("UPDATE orders SET total = total + 1", max_rows=1, expect_digest=dry.digest)
        with pytest.raises(DatabaseError):  # fails after its triggers were made
            await db.run("UPDATE orders SET customer_id = NULL", max_rows=1, dry_run=True)
        later = await db.run("UPDATE orders SET total = 0", max_rows=1)
        deleted = await db.run("DELETE FROM orders WHERE id = 3", max_rows=1)
        inserted = await db.run("INSERT INTO orders (customer_id) VALUES (3)", max_rows=1)
    finally:
        await db.close()
    assert dry.digest is not None and done.changes == 3
    assert (later.changes, deleted.changes, inserted.changes) == (3, 1, 1) and later.digest is None
    assert rows(path, "SELECT id, customer_id, total FROM orders ORDER BY id") == [(1, 1, 0), (2, 1, 0), (3, 3, 0)]
