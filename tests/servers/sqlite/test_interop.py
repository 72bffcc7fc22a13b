"""The same tools over real transports: stdio and Streamable HTTP (a real process on 127.0.0.1), both
eras, through plainmcp's client and the official SDK's (``mcp`` 2.3.0) clients."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import httpx
import mcp_types as types
import pytest
from mcp.client.client import Client as SDKClient
from mcp.client.streamable_http import streamable_http_client
from plainmcp import connect_stdio
from plainmcp.http_client import connect_http

from tests.e2e.http_server import server_process
from tests.interop import sdk_client, sdk_modern
from tests.interop.http_server import node_tools

from .support import STDIO_COMMAND, WAIT, make_shop

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

ERAS = ["2025-11-25", "2026-07-28"]
QUERY = {"sql": "SELECT name FROM customers WHERE city = ?", "params": ["London"]}


@pytest.mark.parametrize("version", ERAS)
async def test_stdio_both_eras_with_plainmcp_client(tmp_path, version):
    path = make_shop(tmp_path)
    with anyio.fail_after(WAIT * 2):
        async with connect_stdio([*STDIO_COMMAND, "--db", str(path)], protocol_version=version) as client:
            assert client.server_info["name"] == "plainmcp-sqlite"
            result = await client.call_tool("query", QUERY)
            refused = await client.call_tool("query", {"sql": "DROP TABLE customers"})
    assert result["structuredContent"]["rows"] == [["Ada"]]
    assert refused["isError"] is True


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    path = make_shop(tmp_path_factory.mktemp("http"))
    with server_process("--db", str(path), module="plainmcp_sqlite", transport="http") as server:
        yield server


@pytest.mark.parametrize("version", ERAS)
async def test_http_both_eras_with_plainmcp_client(http_server, version):
    with anyio.fail_after(WAIT * 2):
        async with connect_http(http_server.url, protocol_version=version) as client:
            result = await client.call_tool("query", QUERY)
            tables = await client.call_tool("list_tables", {})
    assert result["structuredContent"]["rows"] == [["Ada"]]
    assert {t["name"] for t in tables["structuredContent"]["tables"]} >= {"customers", "orders"}


async def test_sdk_legacy_stdio_client(tmp_path):
    path = make_shop(tmp_path)
    async with sdk_client.connect([*STDIO_COMMAND, "--db", str(path)]) as conn:
        assert conn.init.server_info.name == "plainmcp-sqlite"
        result = await conn.session.call_tool("query", QUERY)
        described = await conn.session.call_tool("describe_table", {"table": "orders"})
        schema = await conn.session.read_resource("sqlite://schema")
    assert result.structured_content["rows"] == [["Ada"]]
    assert described.structured_content["primary_key"] == ["id"]
    assert "CREATE TABLE customers" in schema.contents[0].text


async def test_sdk_modern_stdio_client(tmp_path):
    path = make_shop(tmp_path)
    async with sdk_modern.connect([*STDIO_COMMAND, "--db", str(path)]) as conn:
        result = await conn.client.call_tool("query", QUERY)
        refused = await conn.client.call_tool("query", {"sql": "ATTACH 'x.db' AS x"})
    assert result.structured_content["rows"] == [["Ada"]]
    assert refused.is_error
    assert not (tmp_path / "x.db").exists()


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_sdk_streamable_http_client(http_server, mode):
    with anyio.fail_after(WAIT * 2):
        async with httpx.AsyncClient() as http:
            transport = streamable_http_client(http_server.url, http_client=http)
            async with SDKClient(transport, mode=mode, cache=None) as client:
                result = await client.call_tool("query", QUERY)
    assert result.structured_content["rows"] == [["Ada"]]


async def _accept(context: Any, params: Any) -> Any:
    _accept.asked.append(params.message)
    return types.ElicitResult(action="accept", content={})


_accept.asked = []  # type: ignore[attr-defined]


async def test_sdk_legacy_client_confirms_a_write_and_pages(tmp_path):
    path = make_shop(tmp_path)
    _accept.asked.clear()
    command = [*STDIO_COMMAND, "--db", str(path), "--allow-write", "--no-watch", "--default-rows", "2"]
    async with sdk_client.connect(command, elicitation_callback=_accept) as conn:
        changed = await conn.session.call_tool("execute", {"sql": "DELETE FROM orders WHERE customer_id = 1"})
        overview = await conn.session.call_tool("describe_database", {})
        first = await conn.session.call_tool("query", {"sql": "SELECT id FROM customers ORDER BY id"})
        cursor = first.structured_content["next_cursor"]
        rest = await conn.session.call_tool("query", {"sql": "SELECT id FROM customers ORDER BY id", "cursor": cursor})
    assert changed.structured_content["changes"] == 2 and not changed.is_error
    assert _accept.asked == [
        "Run this change on the database? deleting from orders: 2 row(s).\n\nDELETE FROM orders WHERE customer_id = 1"
    ]
    assert {"name": "orders", "rows": 1, "references": ["customers"]} in overview.structured_content["tables"]
    assert first.structured_content["rows"] + rest.structured_content["rows"] == [[1], [2], [3]]


async def test_sdk_modern_client_confirms_a_write_through_input_required(tmp_path):
    path = make_shop(tmp_path)
    _accept.asked.clear()
    command = [*STDIO_COMMAND, "--db", str(path), "--allow-write", "--no-watch"]
    async with sdk_modern.connect(command, elicitation_callback=_accept) as conn:
        changed = await conn.client.call_tool("execute", {"sql": "DELETE FROM orders WHERE customer_id = 1"})
    assert changed.structured_content["changes"] == 2 and not changed.is_error
    assert len(_accept.asked) == 1 and "deleting from orders: 2 row(s)" in _accept.asked[0]
    inbound = [m for m in conn.wire.inbound if isinstance(m.get("result"), dict)]
    assert any(m["result"].get("resultType") == "input_required" for m in inbound)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_strict_finds_no_portability_problem(tmp_path, era):
    # The official Inspector's --strict check of tool schemas (single-type dialects such as Gemini's): every
    # tool, a second database and a canned query included, with no warning at all (issue 19).
    shop, logs = make_shop(tmp_path), make_shop(tmp_path, "logs.db")
    metadata = tmp_path / "metadata.json"
    metadata.write_text(
        '{"databases": {"shop": {"queries": {"by_city": "SELECT name FROM customers WHERE city = :city"}}}}'
    )
    tools = node_tools()
    server = [*STDIO_COMMAND, "--db", f"shop={shop}", "--db", f"logs={logs}", "--allow-write", "--writable", "logs"]
    command = [str(tools.inspector), "--cli", *server, "--metadata", str(metadata), "--no-watch", "--"]
    command += ["--method", "tools/list", "--strict", "--protocol-era", era, "--format", "json", "-q"]
    done = subprocess.run(
        command, env=tools.env(tmp_path / "home"), capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL
    )
    assert done.returncode == 0, done.stderr
    listed = [tool["name"] for tool in json.loads(done.stdout)["result"]["tools"]]
    assert len(listed) == 8 and "by_city" in listed
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr


@pytest.mark.parametrize("version", ERAS)
async def test_http_process_confirms_writes_and_links_results_in_both_eras(tmp_path, version):
    # Streamable HTTP: legacy elicitation/create on the POST's stream; 2026-07-28 input_required, stateless.
    path = make_shop(tmp_path)
    _accept.asked.clear()

    async def accept(params: dict[str, Any]) -> dict[str, Any]:
        _accept.asked.append(params["message"])
        return {"action": "accept", "content": {}}

    args = ("--db", str(path), "--allow-write", "--no-watch", "--result-budget", "1024")
    with server_process(*args, module="plainmcp_sqlite", transport="http") as server:
        with anyio.fail_after(WAIT * 2):
            async with connect_http(server.url, protocol_version=version, elicitation=accept) as client:
                changed = await client.call_tool("execute", {"sql": "UPDATE customers SET city = 'Paris'"})
                big = await client.call_tool("query", {"sql": "SELECT printf('%.400c', 'x') FROM customers"})
                [link] = [block for block in big["content"] if block["type"] == "resource_link"]
                whole = await client.read_resource(link["uri"])
    assert changed["structuredContent"]["changes"] == 3 and len(_accept.asked) == 1
    assert big["structuredContent"]["truncated"] is True
    assert json.loads(whole["contents"][0]["text"])["row_count"] == 3
