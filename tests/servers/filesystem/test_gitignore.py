""".gitignore-aware listing and search (issue 19), on by default, ``gitignore: false`` to opt out."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import Server, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.gitignore import GitIgnore

MODERN = "2026-07-28"


def test_rules_follow_git() -> None:
    rules = GitIgnore((("", "# comment\n\n*.log\n!keep.log\n/build\ncache/\nsrc/**/gen\n\\#hash\n"),))
    cases = {
        ("x.log", False): True,
        ("deep/er/x.log", False): True,
        ("keep.log", False): False,
        ("build", True): True,
        ("sub/build", True): False,  # "/build" is anchored
        ("cache", True): True,
        ("cache", False): False,  # "cache/" matches directories only
        ("src/a/b/gen", True): True,
        ("gen", True): False,
        ("#hash", False): True,
        (".git", True): True,
        ("main.py", False): False,
    }
    for (relative, is_directory), expected in cases.items():
        assert rules.ignored(relative, relative.rsplit("/", 1)[-1], is_directory) is expected, relative


def test_deeper_rules_come_last_and_parents_see_the_path_from_their_directory() -> None:
    rules = GitIgnore((("app/", "/app/out\n*.tmp\n"),))  # a parent two levels up: the walk starts in app/
    assert rules.ignored("out", "out", True) is True
    assert rules.ignored("x.tmp", "x.tmp", False) is True


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository-like tree: sources, and what its .gitignore files leave out."""
    root = tmp_path / "repo"
    for directory in ("src/pkg", "node_modules/lib", "build", ".git/objects", "docs"):
        (root / directory).mkdir(parents=True)
    (root / ".gitignore").write_text("node_modules/\nbuild/\n*.log\n")
    (root / "src" / ".gitignore").write_text("generated_*.py\n!generated_keep.py\n")
    (root / "src" / "pkg" / "main.py").write_text("needle = 1\n")
    (root / "src" / "generated_a.py").write_text("needle = 2\n")
    (root / "src" / "generated_keep.py").write_text("needle = 3\n")
    (root / "node_modules" / "lib" / "index.js").write_text("needle\n")
    (root / "build" / "out.py").write_text("needle = 4\n")
    (root / ".git" / "objects" / "blob").write_text("needle\n")
    (root / "debug.log").write_text("needle\n")
    (root / "docs" / "guide.md").write_text("needle here\n")
    return root


def make(root: Path) -> Server:
    from plainmcp_filesystem.config import Config
    from plainmcp_filesystem.server import build_server

    return build_server(Config(roots=(str(root),), watch=False))


async def call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with connect_in_memory(server) as client:
        return await client.call_tool(name, arguments)


SEEN = {"src/pkg/main.py", "src/generated_keep.py", "docs/guide.md"}
HIDDEN = {"src/generated_a.py", "node_modules/lib/index.js", "build/out.py", ".git/objects/blob", "debug.log"}


def relative(root: Path, paths: list[str]) -> set[str]:
    return {os.path.relpath(path, root).replace(os.sep, "/") for path in paths}


@pytest.mark.anyio
@pytest.mark.parametrize("regex", [False, True], ids=["plain", "regex-worker"])
async def test_search_content_honours_gitignore_unless_turned_off(repo: Path, regex: bool) -> None:
    server = make(repo)
    found = await call(server, "search_content", {"path": str(repo), "query": "needle", "regex": regex})
    assert relative(repo, [m["path"] for m in found["structuredContent"]["matches"]]) == SEEN
    everything = await call(
        server, "search_content", {"path": str(repo), "query": "needle", "regex": regex, "gitignore": False}
    )
    assert relative(repo, [m["path"] for m in everything["structuredContent"]["matches"]]) == SEEN | HIDDEN


@pytest.mark.anyio
async def test_search_files_and_tree_honour_gitignore(repo: Path) -> None:
    server = make(repo)
    names = await call(server, "search_files", {"path": str(repo), "pattern": "*.*"})
    shown = relative(repo, names["structuredContent"]["matches"])
    assert SEEN <= shown and not shown & HIDDEN
    tree = await call(server, "directory_tree", {"path": str(repo)})
    top = {node["name"] for node in tree["structuredContent"]["tree"]}
    assert top == {".gitignore", "docs", "src"}
    full = await call(server, "directory_tree", {"path": str(repo), "gitignore": False})
    assert {node["name"] for node in full["structuredContent"]["tree"]} >= {
        "node_modules",
        "build",
        ".git",
        "debug.log",
    }


@pytest.mark.anyio
async def test_list_directory_of_a_subdirectory_applies_its_parents_rules(repo: Path) -> None:
    server = make(repo)
    listing = await call(server, "list_directory", {"path": str(repo / "src")})
    assert listing["structuredContent"]["files"] == [".gitignore", "generated_keep.py"]
    (repo / "src" / "app.log").write_text("x")  # "*.log" from the parent's .gitignore
    again = await call(server, "list_directory", {"path": str(repo / "src")})
    assert "app.log" not in again["structuredContent"]["files"]
    everything = await call(server, "list_directory", {"path": str(repo / "src"), "gitignore": False})
    assert {"app.log", "generated_a.py"} <= set(everything["structuredContent"]["files"])


@pytest.mark.anyio
async def test_a_gitignore_link_is_not_followed(tmp_path: Path) -> None:
    """A .gitignore that is a link (here to a file outside the allowed directory) is not read."""
    (tmp_path / "outside.txt").write_text("*\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "visible.txt").write_text("x")
    os.symlink(tmp_path / "outside.txt", root / ".gitignore")
    listing = await call(make(root), "list_directory", {"path": str(root)})
    assert "visible.txt" in listing["structuredContent"]["files"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_gitignore_through_a_real_process(repo: Path, version: str | None) -> None:
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(repo), "--no-watch"]
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            found = await client.call_tool("search_content", {"path": ".", "query": "needle"})
            assert relative(repo, [m["path"] for m in found["structuredContent"]["matches"]]) == SEEN
            tools = {tool["name"]: tool for tool in await client.list_all_tools()}
            for name in ("list_directory", "directory_tree", "search_files", "search_content"):
                assert tools[name]["inputSchema"]["properties"]["gitignore"] == {"type": "boolean", "default": True}
