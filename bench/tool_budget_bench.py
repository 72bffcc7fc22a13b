"""What each server's tool list costs a model's context, ours beside the official servers' (issue 21).

    .venv/bin/python bench/tool_budget_bench.py [--per-tool] [--no-peers] [--json]
    python3 dev.py bench-tool_budget

Every server is started as a client would start it (a real process over stdio, every tool on) and
its ``tools/list`` is measured as compact JSON (UTF-8 bytes, and tokens estimated as bytes / 4):

- *model-visible*: what every host puts in front of the model per tool, on every turn (name,
  description, input schema) -- the figure ``tests/servers/test_tool_budget.py`` holds at 110 tokens
  per tool on average;
- *whole list*: every field of every tool, output schemas, titles and annotations included.

The official peers: the filesystem server (npm, installed into ``.ci-cache/filesystem-peer`` as
``bench/filesystem_bench.py`` does; needs Node) and ``mcp-server-sqlite`` (PyPI, its own venv under
``.ci-cache/sqlite-bench`` as ``bench/sqlite_bench.py`` does). A peer that cannot be installed is
reported as such, never silently left out.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from plainmcp import connect_stdio

# The peers' installers live beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import filesystem_bench
import sqlite_bench

BUDGET = 110
#: Our servers' arguments with every tool registered ({tmp}: a scratch directory, {db}: a database in it).
OURS = {
    "everything": [],
    "filesystem": ["{tmp}", "--allow-write", "--allow-delete", "--no-watch"],
    "prompts": ["--no-watch"],
    "sqlite": ["--db", "{db}", "--allow-write", "--no-watch"],
    "weather": [],
}
MODEL_VISIBLE = ("name", "description", "inputSchema")


def compact(value: Any) -> int:
    """Bytes of ``value`` as compact JSON, UTF-8."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def measure(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Per tool and in total: model-visible bytes and the whole entry's bytes."""
    rows = [
        {
            "name": tool["name"],
            "visible_bytes": compact({key: tool[key] for key in MODEL_VISIBLE if key in tool}),
            "whole_bytes": compact(tool),
        }
        for tool in tools
    ]
    count = len(rows) or 1
    visible = sum(row["visible_bytes"] for row in rows)
    whole = sum(row["whole_bytes"] for row in rows)
    return {
        "tools": len(rows),
        "visible_bytes": visible,
        "visible_tokens_per_tool": visible / 4 / count,
        "whole_bytes": whole,
        "whole_tokens_per_tool": whole / 4 / count,
        "per_tool": rows,
    }


async def tool_list(argv: list[str]) -> list[dict[str, Any]]:
    with anyio.fail_after(120):
        async with connect_stdio(argv, stderr="discard") as client:
            return await client.list_all_tools()


def commands(scratch: Path, peers: bool) -> dict[str, list[str] | str]:
    """``{label: argv}`` for every server, or ``{label: why not}`` for a peer that cannot run."""
    db = scratch / "budget.db"
    sqlite3.connect(db).execute("create table t (x)").connection.close()
    found: dict[str, list[str] | str] = {
        f"plainmcp-{name}": [sys.executable, "-m", f"plainmcp_{name}", *(a.format(tmp=scratch, db=db) for a in args)]
        for name, args in OURS.items()
    }
    if not peers:
        return found
    node = filesystem_bench.node_binary()
    problem = "no Node found" if node is None else filesystem_bench.install_peer(node)
    found["official filesystem"] = problem or [str(node), str(filesystem_bench.PEER_SCRIPT), str(scratch)]
    try:
        sqlite_bench.install_peer()
        found["official mcp-server-sqlite"] = sqlite_bench.peer_command(db)
    except (OSError, ValueError, RuntimeError) as error:  # a failed pip install, no venv module...
        found["official mcp-server-sqlite"] = f"install failed: {error}"
    return found


async def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, argv in commands(Path(scratch), not args.no_peers).items():
            report[label] = {"error": argv} if isinstance(argv, str) else measure(await tool_list(argv))
    return report


def print_report(report: dict[str, Any], per_tool: bool) -> None:
    print(f"Tool lists as compact JSON; tokens = bytes / 4. Budget: {BUDGET} model-visible tokens per tool.\n")
    print(f"{'server':30} {'tools':>5} {'visible B':>10} {'tok/tool':>9} {'whole B':>9} {'tok/tool':>9}")
    for label, figures in report.items():
        if "error" in figures:
            print(f"{label:30} not measured: {figures['error']}")
            continue
        print(
            f"{label:30} {figures['tools']:5d} {figures['visible_bytes']:10d} "
            f"{figures['visible_tokens_per_tool']:9.1f} {figures['whole_bytes']:9d} {figures['whole_tokens_per_tool']:9.1f}"
        )
    if per_tool:
        for label, figures in report.items():
            print(f"\n{label}")
            for row in figures.get("per_tool", []):
                print(
                    f"  {row['name']:32} {row['visible_bytes'] / 4:7.1f} visible  {row['whole_bytes'] / 4:7.1f} whole"
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-tool", action="store_true", help="also each tool's figures")
    parser.add_argument("--no-peers", action="store_true", help="only our servers (no npm or pip)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    report = anyio.run(run, args)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report, args.per_tool)


if __name__ == "__main__":
    main()
