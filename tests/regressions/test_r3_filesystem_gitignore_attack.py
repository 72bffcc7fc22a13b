"""Issue 26.4 and the ``.gitignore``/pattern part of 26.12, against a real server process.

A hostile 64 KiB ``.gitignore`` over 10,000 files froze the event loop for 40-96 s on one
``list_directory``. Now the rules are bounded (per file and per walk), the common rules are matched
without a regex, the costly ones within a budget of work per call (then a tool error), and every
walk and listing yields to the event loop while it skips what the rules ignore: ``ping`` is answered
within a second throughout. A reversed class range (``[z-a]``) was -32603: in a ``.gitignore`` the
rule is skipped (as git does), in a tool's pattern it is a tool error.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio

from tests.proc_status import memory_mib
from tests.servers.filesystem.conftest import text_of
from tests.servers.filesystem.test_hardening import MAX_RSS_MIB, command, while_pinging

pytestmark = pytest.mark.anyio

#: Names as long as names get, made of the letter every costly rule below almost matches.
NAME = "a" * 240
#: Rules that each nearly match NAME at every position: a regex piece of 60 characters placed at
#: each of 240 positions, by every rule, for every entry.
COSTLY = ["*" + "a" * 60 + "b*", "*a*" + "?" * 60 + "b*", "[a]" * 60 + "b*", "**/" + "a" * 60 + "b*/**"]


def hostile_rules(limit: int = 64 * 1024) -> str:
    lines: list[str] = []
    size = 0
    while size < limit - 200:
        rule = COSTLY[len(lines) % len(COSTLY)]
        lines.append(rule)
        size += len(rule) + 1
    return "\n".join(lines) + "\n"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    (tmp_path / ".gitignore").write_text(hostile_rules())
    for index in range(10_000):
        (tmp_path / f"{NAME[:-5]}{index:05d}").touch()
    # Nested: a directory of 300 directories, each with its own full-size hostile .gitignore.
    nested = tmp_path / "nested"
    for index in range(300):
        (nested / f"d{index:03d}").mkdir(parents=True)
        (nested / f"d{index:03d}" / ".gitignore").write_text(hostile_rules())
        (nested / f"d{index:03d}" / NAME).touch()
    return tmp_path


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_directory", {"path": "."}),
    ("list_directory", {"path": ".", "sizes": True}),
    ("directory_tree", {"path": "."}),
    ("directory_tree", {"path": "nested"}),
    ("search_files", {"path": ".", "pattern": "*b"}),
    ("search_content", {"path": ".", "query": "x"}),
    ("search_content", {"path": ".", "query": "x", "regex": True}),
]


async def test_r3_filesystem_hostile_gitignore_never_stalls_the_server(hostile: Path) -> None:
    async with connect_stdio(command(hostile, "--search-timeout", "30")) as client:
        pid = client.process.pid
        for name, arguments in CALLS:

            async def call(name: str = name, arguments: dict[str, Any] = arguments) -> Any:
                with anyio.fail_after(60):
                    return await client.call_tool(name, arguments)

            started = time.monotonic()
            outcome, slowest = await while_pinging(client, call)
            # Either the listing, or a tool error that says why (never -32603, never minutes).
            if outcome.get("isError"):
                message = text_of(outcome)
                assert "too costly" in message or "search failed" in message, (name, message)
            print(name, arguments, "error" if outcome.get("isError") else "ok", f"{time.monotonic() - started:.2f} s")
            assert slowest < 1.0, (name, slowest)
            assert time.monotonic() - started < 45, name
        # The same tree with gitignore: false lists at once.
        plain = await client.call_tool("list_directory", {"path": ".", "gitignore": False})
        assert not plain.get("isError") and len(plain["structuredContent"]["files"]) > 100
        peak = memory_mib(pid)["VmHWM"]
    assert peak < MAX_RSS_MIB, f"peak RSS {peak} MiB"


async def test_r3_filesystem_reversed_class_range_is_skipped_in_gitignore_and_refused_in_patterns(
    tmp_path: Path,
) -> None:
    (tmp_path / ".gitignore").write_text("[z-a]\n*.log\n")
    (tmp_path / "keep.txt").write_text("x\n")
    (tmp_path / "drop.log").write_text("x\n")
    async with connect_stdio(command(tmp_path)) as client:
        for name in ("list_directory", "directory_tree", "search_files", "search_content"):
            arguments: dict[str, Any] = {"path": "."}
            if name == "search_files":
                arguments["pattern"] = "*"
            if name == "search_content":
                arguments["query"] = "x"
            result = await client.call_tool(name, arguments)
            assert not result.get("isError"), (name, text_of(result))
            shown = text_of(result)
            assert "keep.txt" in shown and "drop.log" not in shown, (name, shown)
        refusals: list[tuple[str, dict[str, Any]]] = [
            ("search_files", {"path": ".", "pattern": "[z-a]"}),
            ("search_files", {"path": ".", "pattern": "*", "excludePatterns": ["x/[z-a]"]}),
            ("directory_tree", {"path": ".", "excludePatterns": ["[z-a]"]}),
            ("search_content", {"path": ".", "query": "x", "include": ["[z-a]"]}),
            ("search_content", {"path": ".", "query": "[z-a]", "regex": True}),
        ]
        for name, arguments in refusals:
            refused = await client.call_tool(name, arguments)
            assert refused.get("isError") is True, (name, arguments)
            assert "range" in text_of(refused), text_of(refused)
