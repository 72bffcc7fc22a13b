"""A confirmed sqlite write commits once across replicas: every replica verifies what any sealed, so an
accepted answer replayed to another replica, after the rows were put back as they were (the changes'
digest then matches again), must be refused there, not committed a second time. Two real processes on
one real database file and one real Redis."""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

from tests.servers.sqlite.support import WAIT, answering, make_shop, text_of

pytestmark = pytest.mark.anyio

ACCEPT = {"action": "accept", "content": {}}
DELETE = {"name": "execute", "arguments": {"sql": "DELETE FROM orders WHERE customer_id = ?", "params": [1]}}


def orders_of_customer_1(path: Path) -> list[tuple]:
    with sqlite3.connect(path) as connection:
        return connection.execute("SELECT * FROM orders WHERE customer_id = 1 ORDER BY rowid").fetchall()


def put_back(path: Path, saved: list[tuple]) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        marks = ",".join("?" * len(saved[0]))
        connection.executemany(f"INSERT INTO orders VALUES ({marks})", saved)
    finally:
        connection.close()


async def test_an_accepted_write_replayed_on_another_replica_commits_nothing(tmp_path: Path, redis_url: str) -> None:
    path = make_shop(tmp_path)
    saved = orders_of_customer_1(path)
    assert len(saved) == 2
    command = [
        sys.executable,
        "-m",
        "plainmcp_sqlite",
        "--db",
        str(path),
        "--allow-write",
        "--no-watch",
        "--redis",
        redis_url,
    ]
    with anyio.fail_after(WAIT * 3):
        async with (
            connect_stdio(command, protocol_version="2026-07-28", elicitation=answering("accept")) as one,
            connect_stdio(command, protocol_version="2026-07-28", elicitation=answering("accept")) as two,
        ):
            first = await one.request("tools/call", DELETE, answer_inputs=False)
            [key] = first["inputRequests"]
            answered = {**DELETE, "requestState": first["requestState"], "inputResponses": {key: ACCEPT}}
            done = await one.request("tools/call", answered, answer_inputs=False)
            assert done["structuredContent"]["changes"] == 2
            put_back(path, saved)  # the same rows, the same rowids: the confirmed changes would match again
            replay = await two.request("tools/call", answered, answer_inputs=False)
    assert replay["isError"] is True and "already used" in text_of(replay), replay
    assert orders_of_customer_1(path) == saved
