"""The README's tool-call examples (blocks marked ``tested by`` this file) run against a real server process.

Each line of such a block is ``{"name": ..., "arguments": ...}``; every one must answer without an
error, on a tree holding the files the examples name, in both eras.
"""

from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

README = Path(__file__).resolve().parents[3] / "servers" / "filesystem" / "docs" / "tools.md"  # the README links it
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
MARKER = "<!-- docs: tested by: tests/servers/filesystem/test_readme_examples.py::test_readme_tool_calls_answer -->"


def examples() -> list[dict]:
    """The calls of every block under this test's marker."""
    text = README.read_text()
    calls = []
    for block in re.findall(re.escape(MARKER) + r"\n```json\n(.*?)```", text, re.S):
        calls += [json.loads(line) for line in block.splitlines() if line.strip()]
    return calls


def example_tree(root: Path) -> None:
    """The files the examples name: a 100 MB log (2,000 real lines, then a sparse rest, and a line at its end)."""
    (root / "README.md").write_text("# Example\n\nA tree for the README's examples.\n")
    (root / "logs").mkdir()
    with open(root / "logs" / "app.log", "wb") as log:
        log.write(b"".join(b"2026-12-01 12:00:%02d INFO request %d served\n" % (i % 60, i) for i in range(2000)))
        log.truncate(100 * 1024 * 1024)
        log.seek(100 * 1024 * 1024 - 10)
        log.write(b"last line\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def main():\n    return 0\n")
    (root / "logo.png").write_bytes(base64.b64decode(PNG))


def test_the_readme_has_examples() -> None:
    """Every tool of the server has at least one example call."""
    from plainmcp_filesystem import server

    names = {call["name"] for call in examples()}
    tools = {
        spec_name.lower()
        for spec_name in dir(server)
        if spec_name.isupper() and spec_name not in ("NAME", "DESCRIPTION", "INSTRUCTIONS", "STALE_SECONDS")
    }
    assert tools <= names, tools - names


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, "2026-07-28"], ids=["legacy", "modern"])
async def test_readme_tool_calls_answer(tmp_path: Path, version: str | None) -> None:
    example_tree(tmp_path)
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--allow-write", "--allow-delete", "--no-watch"]
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            for call in examples():
                result = await client.call_tool(call["name"], call["arguments"])
                assert not result.get("isError"), (call, result["content"])
