"""The tools' input schemas as hosts read them: portable to single-type dialects (no ``type`` arrays, one
type per ``anyOf`` branch), and the checks that left the schemas for the model's sake still made in code."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp.schema import fast_check
from plainmcp_sqlite.config import Named
from plainmcp_sqlite.engine import MAX_SQL_LENGTH

from .support import make_shop, serve, text_of

pytestmark = pytest.mark.anyio


def type_arrays(schema: Any, path: str = "") -> list[str]:
    """Where ``schema`` uses a list as ``type`` (the form single-type dialects reject)."""
    found: list[str] = []
    if isinstance(schema, dict):
        if isinstance(schema.get("type"), list):
            found.append(path or "/")
        for key, value in schema.items():
            found += type_arrays(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, value in enumerate(schema):
            found += type_arrays(value, f"{path}/{index}")
    return found


async def test_tool_schemas_have_no_type_arrays(tmp_path):
    async with serve(make_shop(tmp_path), allow_write=True) as client:
        tools = await client.list_all_tools()
    assert {tool["name"] for tool in tools} >= {"query", "execute", "explain_query"}
    for tool in tools:
        assert type_arrays(tool["inputSchema"]) == [], tool["name"]
        assert type_arrays(tool.get("outputSchema", {})) == [], tool["name"]
    params = next(tool for tool in tools if tool["name"] == "query")["inputSchema"]["properties"]["params"]
    assert params["anyOf"] == [{"type": "array"}, {"type": "object"}]


async def test_input_schemas_take_the_fast_validation_path(tmp_path):
    # Regression: params as anyOf sent every call through jsonschema (4 MiB more RSS, slower calls) until
    # the core's fast check learned anyOf.
    other = Named("logs", make_shop(tmp_path, "logs.db"), True)
    async with serve(make_shop(tmp_path), allow_write=True, name="shop", others=(other,)) as client:
        tools = await client.list_all_tools()
    assert len(tools) == 7
    for tool in tools:
        assert fast_check(tool["inputSchema"]) is not None, tool["name"]


@pytest.mark.parametrize(
    ("params", "where"), [([1, [2]], "params[1] is an array"), ({"a": {"b": 1}}, "params['a'] is an object")]
)
async def test_params_other_than_scalars_are_a_tool_error_naming_the_place(tmp_path, params, where):
    async with serve(make_shop(tmp_path)) as client:
        result = await client.call_tool("query", {"sql": "SELECT ?, ?", "params": params})
    assert result["isError"] is True
    assert text_of(result).startswith(where)


async def test_sql_length_is_checked_by_the_tools(tmp_path):
    async with serve(make_shop(tmp_path), allow_write=True) as client:
        empty = await client.call_tool("query", {"sql": "  "})
        longest = await client.call_tool("query", {"sql": "SELECT 1" + " " * (MAX_SQL_LENGTH - 8)})
        too_long = await client.call_tool("explain_query", {"sql": "SELECT 1" + " " * (MAX_SQL_LENGTH - 7)})
        write = await client.call_tool("execute", {"sql": "-" * (MAX_SQL_LENGTH + 1)})
    assert empty["isError"] is True and "sql is empty" in text_of(empty)
    assert longest["structuredContent"]["rows"] == [[1]]
    for result in (too_long, write):
        assert result["isError"] is True and f"longer than {MAX_SQL_LENGTH} characters" in text_of(result)
