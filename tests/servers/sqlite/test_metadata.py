"""Datasette-compatible metadata (issue 19): ``--metadata metadata.yml`` adds descriptions of databases, tables
and columns to ``describe_database`` and ``describe_table``, and serves each canned query as a tool with named
parameters, its own mode (``write: true`` goes through the user's confirmation) and its own row cap."""

from __future__ import annotations

import json
import sqlite3
import textwrap
from pathlib import Path

import anyio
import pytest
from plainmcp import StartupError, connect_stdio, server_arguments
from plainmcp_sqlite.config import ENV_PREFIX, Config

from .support import STDIO_COMMAND, WAIT, answering, make_shop, serve, text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
METADATA = textwrap.dedent(
    """\
    title: Ignored, as are licences and plugins
    databases:
      shop:
        description: The bookshop's orders
        tables:
          orders:
            description: One row per order
            columns:
              total: Amount in euros, VAT included
        queries:
          orders_of:
            sql: SELECT id, total FROM orders WHERE customer_id = :customer ORDER BY id
            description: The orders of one customer, by customer id
          cities: SELECT DISTINCT city FROM customers WHERE city IS NOT NULL ORDER BY city
          capped:
            sql: SELECT id FROM orders ORDER BY id
            max_rows: 2
          add_customer:
            sql: INSERT INTO customers (name, city) VALUES (:name, :city)
            write: true
            title: Add a customer
    """
)


def setup(folder: Path, text: str = METADATA, suffix: str = ".yml") -> tuple[Path, Path]:
    shop = make_shop(folder)
    metadata = folder / f"metadata{suffix}"
    metadata.write_text(text)
    return shop, metadata


def parse(*argv: str) -> Config:
    parser = server_arguments("plainmcp-sqlite", env_prefix=ENV_PREFIX)
    Config.add_arguments(parser)
    return Config.from_args(parser.parse_args(list(argv)))


@pytest.mark.parametrize("version", ERAS)
async def test_descriptions_appear_in_describe_database_and_describe_table(tmp_path, version):
    shop, metadata = setup(tmp_path)
    config = parse("--db", f"shop={shop}", "--allow-write", "--metadata", str(metadata))
    async with serve(shop, **_options(config), protocol_version=version) as client:
        overview = await client.call_tool("describe_database", {})
        described = await client.call_tool("describe_table", {"table": "orders"})
    assert overview["structuredContent"]["description"] == "The bookshop's orders"
    orders = next(t for t in overview["structuredContent"]["tables"] if t["name"] == "orders")
    assert orders["description"] == "One row per order"
    assert "orders (3 rows) -> customers: One row per order" in text_of(overview)
    assert described["structuredContent"]["description"] == "One row per order"
    total = next(c for c in described["structuredContent"]["columns"] if c["name"] == "total")
    assert total["description"] == "Amount in euros, VAT included"
    assert "total: REAL, not null, default 0 -- Amount in euros, VAT included" in text_of(described)


def _options(config: Config) -> dict:
    return {"name": config.name, "allow_write": config.allow_write, "metadata": config.metadata}


@pytest.mark.parametrize("version", ERAS)
async def test_canned_queries_are_tools_with_named_parameters_and_row_caps(tmp_path, version):
    shop, metadata = setup(tmp_path)
    config = parse("--db", f"shop={shop}", "--allow-write", "--metadata", str(metadata))
    async with serve(shop, **_options(config), protocol_version=version) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        orders = await client.call_tool("orders_of", {"customer": "1"})
        cities = await client.call_tool("cities", {})
        capped = await client.call_tool("capped", {})
        missing = await client.call_tool("orders_of", {})
        injected = await client.call_tool("orders_of", {"customer": "1 OR 1=1"})
    assert tools["orders_of"]["description"] == "The orders of one customer, by customer id"
    assert tools["orders_of"]["inputSchema"] == {
        "type": "object",
        "properties": {"customer": {"type": "string"}},
        "required": ["customer"],
        "additionalProperties": False,
    }
    assert tools["orders_of"]["annotations"]["readOnlyHint"] is True
    assert orders["structuredContent"]["rows"] == [[1, 120.5], [2, 15.0]]
    assert cities["structuredContent"]["rows"] == [["London"], ["New York"]]
    assert capped["structuredContent"]["row_count"] == 2 and capped["structuredContent"]["truncated"] is True
    assert missing["isError"] is True
    assert injected["structuredContent"]["rows"] == []  # a value, never SQL


@pytest.mark.parametrize("version", ERAS)
async def test_a_writing_canned_query_asks_the_user_first(tmp_path, version):
    shop, metadata = setup(tmp_path)
    config = parse("--db", f"shop={shop}", "--allow-write", "--metadata", str(metadata))
    asked: list[dict] = []
    options = {**_options(config), "protocol_version": version}
    async with serve(shop, **options, elicitation=answering("accept", asked)) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        added = await client.call_tool("add_customer", {"name": "Barbara", "city": "Boston"})
    async with serve(shop, **options) as client:
        refused = await client.call_tool("add_customer", {"name": "Edsger", "city": "Austin"})
    assert tools["add_customer"]["annotations"]["readOnlyHint"] is False
    assert added["structuredContent"]["changes"] == 1
    assert "inserting into customers: 1 row(s)" in asked[0]["message"]
    assert refused["isError"] is True and "cannot ask" in text_of(refused)
    with sqlite3.connect(shop) as check:
        assert check.execute("SELECT name FROM customers WHERE id > 3").fetchall() == [("Barbara",)]
    check.close()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("databases:\n  elsewhere: {}\n", "database 'elsewhere' is not served"),
        ("databases:\n  shop:\n    queries:\n      query: SELECT 1\n", "one of the server's own tools"),
        ("databases:\n  shop:\n    queries:\n      q: {title: no sql}\n", "needs sql"),
        ("databases: [\n", "not valid YAML"),
        ("databases:\n  shop:\n    queries:\n      q: {sql: 'SELECT :a, :b', params: [a]}\n", "uses :b, which params"),
        (METADATA, "add_customer writes, and shop is read-only"),
    ],
)
def test_a_wrong_metadata_file_is_a_startup_error(tmp_path, text, message):
    shop, metadata = setup(tmp_path, text)
    with pytest.raises(StartupError, match=message):
        parse("--db", f"shop={shop}", "--metadata", str(metadata))


def test_two_canned_queries_of_one_name_are_a_startup_error(tmp_path):
    shop, metadata = setup(
        tmp_path, "databases:\n  shop:\n    queries: {q: SELECT 1}\n  logs:\n    queries: {q: SELECT 2}\n"
    )
    logs = make_shop(tmp_path, "logs.db")
    with pytest.raises(StartupError, match="two canned queries are called q"):
        parse("--db", f"shop={shop}", "--db", f"logs={logs}", "--metadata", str(metadata))


def test_json_metadata_and_file_stem_names_as_datasette(tmp_path):
    document = {"databases": {"shop": {"tables": {"customers": {"description": "People"}}}}}
    shop, metadata = setup(tmp_path, json.dumps(document), ".json")
    config = parse("--db", str(shop), "--metadata", str(metadata))  # named main; its file is shop.db
    assert config.metadata is not None and config.metadata.table("main", "CUSTOMERS") == {
        "columns": {},
        "description": "People",
    }


@pytest.mark.parametrize("version", ERAS)
async def test_stdio_process_serves_canned_queries_in_both_eras(tmp_path, version):
    shop, metadata = setup(tmp_path)
    command = [*STDIO_COMMAND, "--db", f"shop={shop}", "--allow-write", "--metadata", str(metadata), "--no-watch"]
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio(command, protocol_version=version) as client:
            result = await client.call_tool("orders_of", {"customer": "2"})
    assert result["structuredContent"]["rows"] == [[3, 300.0]]
