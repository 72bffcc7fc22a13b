"""Every server's tool list is lean enough for a model's context (issue 21): what a host shows the model per tool
(name, description, input schema, as compact JSON) averages at most 110 tokens, estimated as bytes / 4 -- 0.77x
the official filesystem server's ~143. Measured on a real server process with every tool on (writes allowed).
`bench/tool_budget.py` prints the same figures beside the official servers'."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

TOKENS_PER_TOOL = 110
#: Each server's arguments with every tool registered ({tmp}: a scratch directory, {db}: a database in it).
ARGS = {
    "everything": [],
    "filesystem": ["{tmp}", "--allow-write", "--allow-delete", "--no-watch"],
    "prompts": ["--no-watch"],
    "sqlite": ["--db", "{db}", "--allow-write", "--no-watch"],
    "weather": [],
}


def model_visible(tool: dict) -> str:
    """The part of a tool every host puts in front of the model."""
    return json.dumps(
        {key: tool[key] for key in ("name", "description", "inputSchema") if key in tool},
        separators=(",", ":"),
        ensure_ascii=False,
    )


async def tool_list(name: str, tmp: Path) -> list[dict]:
    db = tmp / "budget.db"
    sqlite3.connect(db).close()
    argv = [sys.executable, "-m", f"plainmcp_{name}", *(arg.format(tmp=tmp, db=db) for arg in ARGS[name])]
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard") as client:
            return await client.list_all_tools()


@pytest.mark.anyio
@pytest.mark.parametrize("name", sorted(ARGS))
async def test_tool_list_fits_the_context_budget(name: str, tmp_path: Path) -> None:
    tools = await tool_list(name, tmp_path)
    assert tools, f"plainmcp-{name} lists no tools"
    per_tool = {tool["name"]: len(model_visible(tool).encode()) / 4 for tool in tools}
    average = sum(per_tool.values()) / len(per_tool)
    heaviest = sorted(per_tool.items(), key=lambda item: -item[1])[:3]
    assert average <= TOKENS_PER_TOOL, (
        f"plainmcp-{name}: {average:.0f} tokens per tool on average (budget {TOKENS_PER_TOOL}); heaviest: {heaviest}"
    )
    for tool in tools:
        assert tool.get("description"), f"{tool['name']} has no description: a model needs to know when to use it"
