"""Confirmed writes (issue 19): ``execute`` first runs its statement as a dry run inside a savepoint (the
changed rows counted, then rolled back), asks the user through elicitation what the dry run found, and
commits only an accept -- exactly the rows confirmed. Legacy clients are asked with ``elicitation/create``,
2026-07-28 clients through an ``input_required`` round; a client that cannot ask is refused unless the
operator chose ``--confirm-writes never``."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio

from .support import STDIO_COMMAND, WAIT, answering, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
DELETE = {"sql": "DELETE FROM orders WHERE customer_id = ?", "params": [1]}


def count(path: Path, table: str) -> int:
    with sqlite3.connect(path) as check:
        (rows,) = check.execute(f"SELECT count(*) FROM {table}").fetchone()
    check.close()
    return int(rows)


@pytest.mark.parametrize("version", ERAS)
async def test_accept_commits_what_the_user_was_shown(tmp_path, version):
    path = make_shop(tmp_path)
    asked: list[dict[str, Any]] = []
    async with serve(
        path, allow_write=True, protocol_version=version, elicitation=answering("accept", asked)
    ) as client:
        result = await client.call_tool("execute", DELETE)
    assert result["structuredContent"]["changes"] == 2
    assert count(path, "orders") == 1
    [request] = asked  # asked once, also across the two rounds of 2026-07-28
    assert request["message"].startswith("Run this change on the database? deleting from orders: 2 row(s).")
    assert "DELETE FROM orders WHERE customer_id = ?" in request["message"]
    assert request["requestedSchema"] == {"type": "object", "properties": {}}


@pytest.mark.parametrize("version", ERAS)
@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_anything_but_accept_changes_nothing(tmp_path, version, action):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, protocol_version=version, elicitation=answering(action)) as client:
        result = await client.call_tool("execute", DELETE)
    assert result["isError"] is True and "Nothing was changed" in text_of(result)
    assert count(path, "orders") == 3


async def test_the_dry_run_leaves_nothing_behind_while_the_user_decides(tmp_path):
    path = make_shop(tmp_path)
    seen: list[int] = []

    async def look_then_decline(params: dict[str, Any]) -> dict[str, Any]:
        # Another connection, while the question is open: the dry run's changes are gone and no
        # lock is held (this count would wait for, or fail on, an open write transaction).
        seen.append(count(path, "orders"))
        return {"action": "decline"}

    async with serve(path, allow_write=True, elicitation=look_then_decline) as client:
        await client.call_tool("execute", {"sql": "DELETE FROM orders"})
    assert seen == [3]


async def test_triggered_changes_are_counted_in_the_question(tmp_path):
    path = make_shop(tmp_path)
    asked: list[dict[str, Any]] = []
    async with serve(path, allow_write=True, elicitation=answering("decline", asked)) as client:
        await client.call_tool("execute", {"sql": "DELETE FROM customers WHERE id = 1"})
    # ON DELETE CASCADE removes Ada's two orders too.
    message = asked[0]["message"]
    assert (
        "deleting from customers, deleting from orders: 1 row(s) (and 2 more through triggers or foreign keys)."
        in message
    )
    assert count(path, "customers") == 3 and count(path, "orders") == 3


@pytest.mark.parametrize("version", ERAS)
async def test_data_changed_after_the_question_is_not_committed(tmp_path, version):
    path = make_shop(tmp_path)

    async def meddle_then_accept(params: dict[str, Any]) -> dict[str, Any]:
        with sqlite3.connect(path) as other:
            other.execute("INSERT INTO orders (customer_id, total) VALUES (1, 5)")
        other.close()
        return {"action": "accept", "content": {}}

    async with serve(path, allow_write=True, protocol_version=version, elicitation=meddle_then_accept) as client:
        result = await client.call_tool("execute", DELETE)
    assert result["isError"] is True
    assert "other changes than the ones they saw (3 row(s) now)" in text_of(result)
    assert count(path, "orders") == 4  # the other process's row, and nothing deleted


@pytest.mark.parametrize("version", ERAS)
async def test_a_client_that_cannot_ask_is_refused(tmp_path, version):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, protocol_version=version) as client:
        result = await client.call_tool("execute", DELETE)
    assert result["isError"] is True and "--confirm-writes never" in text_of(result)
    assert count(path, "orders") == 3


async def test_confirm_writes_never_runs_without_asking(tmp_path):
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, confirm_writes=False) as client:
        result = await client.call_tool("execute", DELETE)
    assert result["structuredContent"]["changes"] == 2 and count(path, "orders") == 1


async def test_a_refused_statement_is_refused_without_asking(tmp_path):
    path = make_shop(tmp_path)
    asked: list[dict[str, Any]] = []
    async with serve(path, allow_write=True, elicitation=answering("accept", asked)) as client:
        result = await client.call_tool("execute", {"sql": "ATTACH 'other.db' AS other"})
    assert result["isError"] is True and "attaching a database file" in text_of(result)
    assert asked == [] and not (tmp_path / "other.db").exists()


async def test_returning_more_rows_than_shown_counts_every_change(tmp_path):
    # Regression: a RETURNING statement whose rows were not all fetched reported 0 changes.
    path = make_shop(tmp_path)
    async with serve(path, allow_write=True, confirm_writes=False, default_rows=1) as client:
        result = await client.call_tool("execute", {"sql": "UPDATE orders SET total = total + 1 RETURNING id"})
    assert result["structuredContent"]["changes"] == 3 and result["structuredContent"]["row_count"] == 1


@pytest.mark.parametrize("version", ERAS)
async def test_stdio_process_asks_and_commits_in_both_eras(tmp_path, version):
    path = make_shop(tmp_path)
    asked: list[dict[str, Any]] = []
    command = [*STDIO_COMMAND, "--db", str(path), "--allow-write", "--no-watch"]
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio(command, protocol_version=version, elicitation=answering("accept", asked)) as client:
            result = await client.call_tool("execute", DELETE)
        async with connect_stdio(command, protocol_version=version) as client:
            refused = await client.call_tool("execute", DELETE)
    assert result["structuredContent"]["changes"] == 2 and len(asked) == 1
    assert refused["isError"] is True and "cannot ask" in text_of(refused)
    assert count(path, "orders") == 1


async def test_a_replayed_acceptance_commits_once(tmp_path):
    # 2026-07-28: the client drives the rounds itself, then sends the accepted round twice (a retry, a replay).
    path = make_shop(tmp_path)
    insert = {"sql": "INSERT INTO customers (name) VALUES (?)", "params": ["Barbara"]}
    async with serve(path, allow_write=True, protocol_version="2026-07-28", elicitation=answering("accept")) as client:
        params = {"name": "execute", "arguments": insert}
        first = await client.request("tools/call", params, answer_inputs=False)
        [key] = first["inputRequests"]
        assert first["resultType"] == "input_required" and key.startswith("confirm-")
        accepted = {**params, "inputResponses": {key: {"action": "accept", "content": {}}}}
        accepted["requestState"] = first["requestState"]
        done = await client.request("tools/call", accepted, answer_inputs=False)
        again = await client.request("tools/call", accepted, answer_inputs=False)
    assert done["structuredContent"]["changes"] == 1
    assert again["isError"] is True and "already used" in text_of(again)
    assert count(path, "customers") == 4
