"""The shortlist (--shortlist): the tools a question matches, ranked without a model, and a constrained
turn held to them. Against the real sqlite server's tools, through the stand-in model (what a llama.cpp
server would be sent is read back from it)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from plainmcp_bridge.__main__ import AUTO_SHORTLIST, shortlist_size
from plainmcp_bridge.agent import ANSWERED, Bridge, BridgeOptions
from plainmcp_bridge.constrain import FORMAT, OFF
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.shortlist import scores, shortlist, words
from plainmcp_bridge.standin import StandInModel
from plainmcp_bridge.toolbox import open_toolbox

from .test_agent import SAMPLE, Recorder

pytestmark = pytest.mark.anyio


def tool(name: str, description: str, *parameters: str) -> dict[str, Any]:
    properties = {parameter: {"type": "string"} for parameter in parameters}
    return {"name": name, "description": description, "inputSchema": {"type": "object", "properties": properties}}


TOOLS = [
    tool("query", "Run one read-only SQL statement; rows come back as JSON.", "sql", "params"),
    tool("list_tables", "List the tables and views of the database."),
    tool("describe_table", "Describe one table: its columns, types and keys.", "table"),
    tool("sample_rows", "Show the first rows of a table.", "table", "rows"),
    tool("get_forecast", "Daily forecast for a place.", "location", "days"),
]


def test_words_split_names_drop_stop_words_and_plurals() -> None:
    assert words("listTables of the get_forecast: Columns, queries, class") == [
        "list",
        "table",
        "get",
        "forecast",
        "column",
        "query",
        "class",
    ]


def test_shortlist_keeps_the_best_matches_in_listing_order() -> None:
    assert [t["name"] for t in shortlist("What columns does the books table have?", TOOLS, 1)] == ["describe_table"]
    # list_tables and sample_rows tie ("table" twice each): the earlier listed is kept, in listing order.
    chosen = shortlist("What columns does the books table have?", TOOLS, 2)
    assert [t["name"] for t in chosen] == ["list_tables", "describe_table"]
    assert [t["name"] for t in shortlist("Which tables are in the database?", TOOLS, 1)] == ["list_tables"]
    assert [t["name"] for t in shortlist("forecast for Paris, 3 days", TOOLS, 1)] == ["get_forecast"]


def test_shortlist_offers_everything_when_nothing_matches_or_it_covers_all() -> None:
    assert shortlist("Bonjour !", TOOLS, 2) == TOOLS
    assert scores("Bonjour !", TOOLS) == [0.0] * len(TOOLS)
    assert shortlist("columns", TOOLS, 5) == TOOLS
    assert shortlist("columns", TOOLS, 0) == TOOLS
    assert shortlist("columns", [], 3) == []


def test_shortlist_survives_hostile_tool_listings() -> None:
    odd = [{"name": "read_" + "x" * 10000}, {"name": 5, "inputSchema": "not a schema"}, {"description": None}]
    assert shortlist("read it", odd, 1) == [odd[0]]
    assert shortlist("5", odd, 1) == [odd[1]]


def test_shortlist_size_resolves_auto_with_the_constraint() -> None:
    assert shortlist_size("auto", FORMAT) == AUTO_SHORTLIST
    assert shortlist_size("auto", OFF) == 0
    assert shortlist_size("off", FORMAT) == 0
    assert shortlist_size("2", OFF) == 2
    with pytest.raises(ValueError, match="--shortlist"):
        shortlist_size("-1", FORMAT)


async def test_constrained_turn_may_call_only_the_shortlisted_tools(tmp_path: Path) -> None:
    database = tmp_path / "shop.db"
    shutil.copy(SAMPLE, database)
    spec = ServerSpec("sqlite", command=(sys.executable, "-m", "plainmcp_sqlite", "--db", str(database)))
    script = [
        {"text": '{"name": "describe_table", "arguments": {"table": "books"}}'},
        {"text": '{"answer": "id, title, author_id"}'},
    ]
    with StandInModel(script) as model:
        settings = ModelSettings(
            api="openai", model="standin", base_url=model.url + "/v1", constrain=FORMAT, retry=RetryPolicy(base=0.01)
        )
        async with open_toolbox([spec], stderr="discard") as toolbox, ChatModel(settings) as chat:
            bridge = Bridge(toolbox, chat, BridgeOptions(shortlist=2), Recorder())
            outcome = await bridge.ask("What columns does the books table have?")
            every_tool = [str(t["name"]) for t in toolbox.tools]
    assert (outcome.status, outcome.tool_results) == (ANSWERED, 1)
    first = model.requests[0][1]["response_format"]["json_schema"]["schema"]
    offered = [branch["properties"]["name"]["const"] for branch in first["anyOf"] if "name" in branch["properties"]]
    assert len(offered) == 2 and "describe_table" in offered
    # The system prompt still describes every tool (the cached prefix of every turn).
    system = model.requests[0][1]["messages"][0]["content"]
    assert all(name in system for name in every_tool)
    events = [e for e in bridge.hooks.events if e["type"] == "shortlist"]  # type: ignore[attr-defined]
    assert events == [{"type": "shortlist", "tools": offered}]
