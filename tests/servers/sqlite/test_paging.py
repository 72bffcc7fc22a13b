"""Results within a byte budget as well as rows (issue 19): a cut ``query`` result says ``truncated``, hands
back ``next_cursor`` to continue exactly where it stopped, and, when the budget cut it, links
(``resource_link``) to ``sqlite://result/...``, a resource holding more of the same result."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import pytest
from plainmcp import MCPError, connect_stdio
from plainmcp_sqlite import paging

from .support import STDIO_COMMAND, WAIT, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
ROWS = 300
SQL = "SELECT id, body FROM notes WHERE id > ? ORDER BY id"


def make_notes(folder: Path) -> Path:
    path = make_shop(folder)
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        connection.executemany(
            "INSERT INTO notes VALUES (?, ?)", [(n, f"{n:04d}" + "x" * 96) for n in range(1, ROWS + 1)]
        )
    connection.close()
    return path


async def pages(client, arguments: dict) -> list[dict]:
    """Every page of a result, following next_cursor."""
    found = [(await client.call_tool("query", arguments))["structuredContent"]]
    while found[-1]["truncated"]:
        assert len(found) <= ROWS, "the cursor does not advance"
        found.append(
            (await client.call_tool("query", {**arguments, "cursor": found[-1]["next_cursor"]}))["structuredContent"]
        )
    return found


@pytest.mark.parametrize("version", ERAS)
async def test_cursor_pages_give_every_row_once_within_the_budget(tmp_path, version):
    path = make_notes(tmp_path)
    async with serve(path, result_budget=2048, max_rows=1000, protocol_version=version) as client:
        found = await pages(client, {"sql": SQL, "params": [0], "max_rows": 1000})
    assert len(found) > 10
    assert [row[0] for page in found for row in page["rows"]] == list(range(1, ROWS + 1))
    for page in found[:-1]:
        assert page["truncated"] and "size limit" in page["hint"] and page["next_cursor"] in page["hint"]
        assert sum(8 + len(body) for _, body in page["rows"][:-1]) <= 2048  # rows past the budget left out
    assert "next_cursor" not in found[-1]


async def test_row_cap_pages_continue_too(tmp_path):
    async with serve(make_notes(tmp_path), default_rows=100) as client:
        found = await pages(client, {"sql": SQL, "params": [0]})
    assert [page["row_count"] for page in found] == [100, 100, 100]
    assert "only the first 100 rows are shown" in found[0]["hint"]


async def test_a_cursor_is_only_good_for_its_own_statement(tmp_path):
    async with serve(make_notes(tmp_path), default_rows=10) as client:
        first = (await client.call_tool("query", {"sql": SQL, "params": [0]}))["structuredContent"]
        other_params = await client.call_tool("query", {"sql": SQL, "params": [5], "cursor": first["next_cursor"]})
        forged = await client.call_tool("query", {"sql": SQL, "params": [0], "cursor": "bm90IGEgY3Vyc29y"})
    assert other_params["isError"] is True and "belongs to another statement" in text_of(other_params)
    assert forged["isError"] is True and "not a cursor this server gave" in text_of(forged)


@pytest.mark.parametrize("version", ERAS)
async def test_over_budget_links_a_resource_with_more_of_the_result(tmp_path, version):
    async with serve(make_notes(tmp_path), result_budget=2048, protocol_version=version) as client:
        result = await client.call_tool("query", {"sql": SQL, "params": [0], "max_rows": 1000})
        [link] = [block for block in result["content"] if block["type"] == "resource_link"]
        read = await client.read_resource(link["uri"])
    shown = result["structuredContent"]["row_count"]
    assert link["mimeType"] == "application/json" and link["uri"].startswith("sqlite://result/")
    whole = json.loads(read["contents"][0]["text"])
    assert whole["row_count"] == ROWS and not whole["truncated"] and shown < ROWS
    assert whole["rows"][:shown] == result["structuredContent"]["rows"]


async def test_no_link_for_clients_before_resource_links(tmp_path):
    async with serve(make_notes(tmp_path), result_budget=2048, protocol_version="2025-03-26") as client:
        result = await client.call_tool("query", {"sql": SQL, "params": [0]})
    # This revision has no structured results either: the text says it all, cursor included.
    assert "(truncated)" in text_of(result) and 'cursor "' in text_of(result)
    assert [block["type"] for block in result["content"]] == ["text"]


async def test_result_resource_stays_read_only_and_unknown_ones_are_not_found(tmp_path):
    path = make_notes(tmp_path)
    async with serve(path) as client:
        with pytest.raises(MCPError) as malformed:
            await client.read_resource("sqlite://result/nothing")
        # A hand-made URI runs on the read-only connection like any query.
        with pytest.raises(MCPError) as refused:
            await client.read_resource(paging.result_uri("main", "DELETE FROM notes", None, 0))
    assert malformed.value.code == -32002
    assert refused.value.code == -32602 and "read-only" in refused.value.message
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT count(*) FROM notes").fetchone() == (ROWS,)
    check.close()


async def test_default_budget_keeps_a_result_near_10k_tokens(tmp_path):
    async with serve(make_notes(tmp_path)) as client:
        result = await client.call_tool("query", {"sql": SQL, "params": [0], "max_rows": 1000})
    shown = len(text_of(result)) + len(json.dumps(result["structuredContent"]))
    assert result["structuredContent"]["truncated"] is True
    assert shown / 4 < 12_000, f"{shown / 4:.0f} tokens"


@pytest.mark.parametrize("version", ERAS)
async def test_stdio_process_pages_in_both_eras(tmp_path, version):
    command = [*STDIO_COMMAND, "--db", str(make_notes(tmp_path)), "--no-watch", "--result-budget", "4096"]
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio(command, protocol_version=version) as client:
            found = await pages(client, {"sql": SQL, "params": [0], "max_rows": 1000})
    assert [row[0] for page in found for row in page["rows"]] == list(range(1, ROWS + 1))
