"""Several databases (issue 19): ``--db NAME=PATH`` repeated, each read-only unless ``--writable`` (the first:
``--allow-write``); calls name one with ``db``; each connection attaches the others read-only under their
names, so a query reads ``name.table`` across files, while the model still cannot attach anything."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio, server_arguments
from plainmcp_sqlite.config import ENV_PREFIX, Config, Named

from .support import STDIO_COMMAND, WAIT, answering, digest, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]


def make_logs(folder: Path) -> Path:
    path = folder / "logs.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE events (customer_id INTEGER, what TEXT)")
        connection.executemany("INSERT INTO events VALUES (?, ?)", [(1, "login"), (1, "buy"), (2, "login")])
    connection.close()
    return path


def parse(*argv: str) -> Config:
    parser = server_arguments("plainmcp-sqlite", env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    return Config.from_args(parser.parse_args(list(argv)))


def test_db_name_path_repeated_makes_named_databases_each_with_its_mode(tmp_path):
    shop, logs = make_shop(tmp_path), make_logs(tmp_path)
    config = parse("--db", f"shop={shop}", "--db", f"logs={logs}", "--writable", "logs")
    assert config.databases == (Named("shop", shop, False), Named("logs", logs, True))
    assert parse("--db", str(shop)).databases == (Named("main", shop, False),)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--db", "{shop}", "--db", "{logs}"], "needs a name"),
        (["--db", "a={shop}", "--db", "a={logs}"], "same name"),
        (["--db", "a={shop}", "--db", "temp={logs}"], "not main or temp"),
        (["--db", "{shop}", "--db", "logs={logs}", "--writable", "nothere"], "--writable nothere"),
    ],
)
def test_wrong_database_options_are_usage_errors(tmp_path, argv, message):
    shop, logs = make_shop(tmp_path), make_logs(tmp_path)
    with pytest.raises(ValueError, match=message):
        parse(*(arg.format(shop=shop, logs=logs) for arg in argv))


def two(tmp_path: Path, **options):
    shop, logs = make_shop(tmp_path), make_logs(tmp_path)
    return (
        shop,
        logs,
        serve(shop, name="shop", others=(Named("logs", logs, options.pop("logs_writable", False)),), **options),
    )


@pytest.mark.parametrize("version", ERAS)
async def test_calls_name_the_database_and_queries_read_the_others(tmp_path, version):
    _, _, server = two(tmp_path, protocol_version=version)
    async with server as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        own = await client.call_tool("query", {"db": "logs", "sql": "SELECT count(*) FROM events"})
        joined = await client.call_tool(
            "query",
            {"sql": "SELECT c.name, count(*) FROM customers c JOIN logs.events e ON e.customer_id = c.id GROUP BY 1"},
        )
        listed = await client.call_tool("list_tables", {"db": "logs"})
        unknown = await client.call_tool("query", {"db": "nowhere", "sql": "SELECT 1"})
    assert tools["query"]["inputSchema"]["properties"]["db"]["enum"] == ["shop", "logs"]
    assert own["structuredContent"]["rows"] == [[3]]
    assert sorted(joined["structuredContent"]["rows"]) == [["Ada", 2], ["Grace", 1]]
    assert [table["name"] for table in listed["structuredContent"]["tables"]] == ["events"]
    assert unknown["isError"] is True


async def test_attached_databases_stay_read_only_and_nothing_more_can_be_attached(tmp_path):
    shop, logs, server = two(tmp_path, allow_write=True, confirm_writes=False)
    before = digest(logs)
    async with server as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        through_query = await client.call_tool("query", {"sql": "DELETE FROM logs.events"})
        through_execute = await client.call_tool("execute", {"sql": "DELETE FROM logs.events"})
        detach = await client.call_tool("execute", {"sql": "DETACH logs"})
        attach = await client.call_tool("query", {"db": "logs", "sql": "ATTACH 'x.db' AS x"})
        written = await client.call_tool("execute", {"sql": "DELETE FROM orders WHERE id = 3"})
    assert tools["execute"]["inputSchema"]["properties"]["db"]["enum"] == ["shop"]
    for refused in (through_query, through_execute, detach, attach):
        assert refused["isError"] is True, text_of(refused)
        assert str(tmp_path) not in text_of(refused)
    assert written["structuredContent"]["changes"] == 1
    assert digest(logs) == before and not (tmp_path / "x.db").exists()


async def test_a_writable_other_database_is_changed_only_when_named_and_confirmed(tmp_path):
    shop, logs, server = two(tmp_path, logs_writable=True, elicitation=answering("accept"))
    before = digest(shop)
    async with server as client:
        assert "by default shop (logs for execute)" in client.instructions
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        deleted = await client.call_tool(
            "execute", {"db": "logs", "sql": "DELETE FROM events WHERE what = ?", "params": ["login"]}
        )
        not_shop = await client.call_tool("execute", {"db": "shop", "sql": "DELETE FROM orders"})
    assert tools["execute"]["inputSchema"]["properties"]["db"] == {"enum": ["logs"]}
    assert deleted["structuredContent"]["changes"] == 2
    assert not_shop["isError"] is True
    assert digest(shop) == before


@pytest.mark.parametrize("version", ERAS)
async def test_stdio_process_serves_named_databases_in_both_eras(tmp_path, version):
    shop, logs = make_shop(tmp_path), make_logs(tmp_path)
    # The README's command line: shop read-only, logs writable.
    command = [*STDIO_COMMAND, "--db", f"shop={shop}", "--db", f"logs={logs}", "--writable", "logs", "--no-watch"]
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio(command, protocol_version=version) as client:
            tools = {tool["name"]: tool for tool in await client.list_all_tools()}
            result = await client.call_tool("query", {"db": "logs", "sql": "SELECT what FROM events ORDER BY rowid"})
            joined = await client.call_tool(
                "query", {"sql": "SELECT count(*) FROM logs.events JOIN customers ON id = customer_id"}
            )
    assert tools["execute"]["inputSchema"]["properties"]["db"] == {"enum": ["logs"]}
    assert result["structuredContent"]["rows"] == [["login"], ["buy"], ["login"]]
    assert joined["structuredContent"]["rows"] == [[3]]


async def test_with_two_databases_the_tool_list_stays_within_the_budget(tmp_path):
    # Issue 21's budget (tests/servers/test_tool_budget.py measures one database): db adds an enum to each tool.
    _, _, server = two(tmp_path, allow_write=True, logs_writable=True)
    async with server as client:
        tools = await client.list_all_tools()
    visible = [
        json.dumps({key: tool[key] for key in ("name", "description", "inputSchema")}, separators=(",", ":"))
        for tool in tools
    ]
    assert len(tools) == 7 and all("db" in tool["inputSchema"]["properties"] for tool in tools)
    assert sum(len(text.encode()) for text in visible) / 4 / len(tools) <= 110
