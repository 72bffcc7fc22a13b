"""Listings and searches within the result budget (issue 19): a result that would pass ``--max-read-bytes``
of text is cut and carries a signed cursor; the same call with that cursor goes on where the page ended.

Through a real server process in both eras, on a real tree of a few thousand files: the pages reassemble
the whole listing or search with no duplicate and no gap, every page's text stays within the budget, and a
cursor given with other arguments, to another tool or edited is refused with a tool error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import Client, connect_stdio
from plainmcp_filesystem.result_pages import PageCursors, fitting

MODERN = "2026-07-28"
BUDGET = 40_000  # the default --max-read-bytes
DIRECTORIES, FILES_EACH = 30, 100  # 3,030 entries: about three pages of names, more of full paths


def make_tree(root: Path) -> set[str]:
    """Files with long names in 30 directories, each holding a line to find; their relative paths."""
    made = set()
    for outer in range(DIRECTORIES):
        directory = root / "big" / f"directory-{outer:03d}"
        directory.mkdir(parents=True)
        for inner in range(FILES_EACH):
            name = f"file-with-a-rather-long-name-{outer:03d}-{inner:03d}.txt"
            (directory / name).write_text(f"first line\nneedle {outer} {inner} in a haystack\nlast line\n")
            made.add(f"directory-{outer:03d}/{name}")
    return made


async def every_page(client: Client, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """The results of ``tool`` from the first page on, each call with the cursor the last one gave."""
    found, cursor = [], None
    for _ in range(100):
        result = await client.call_tool(tool, {**arguments, **({"cursor": cursor} if cursor else {})})
        assert not result.get("isError"), result
        text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
        assert len(text.encode()) <= BUDGET, (tool, len(text.encode()))
        found.append(result)
        cursor = result["structuredContent"].get("nextCursor")
        if cursor is None:
            assert "cursor" not in text
            return found
        assert result["structuredContent"]["truncated"] is True
        assert f'cursor "{cursor}"' in text  # the text says how to go on
    raise AssertionError("the cursor never ended")


def paths_of_tree(nodes: list[dict[str, Any]], prefix: str = "") -> list[str]:
    """Every path a tree page shows, leaving out the directories it repeats as ``continued``."""
    paths = []
    for node in nodes:
        path = prefix + node["name"]
        if not node.get("continued"):
            paths.append(path)
        paths += paths_of_tree(node.get("children", []), path + "/")
    return paths


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_listings_and_searches_page_whole_within_the_budget(tmp_path: Path, version: str | None) -> None:
    made = make_tree(tmp_path)
    (tmp_path / "flat").mkdir()
    flat = {f"entry-number-{index:05d}-of-a-large-flat-directory" for index in range(3000)}
    for name in flat:
        (tmp_path / "flat" / name).touch()
    big = tmp_path / "big"
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--no-watch"]
    with anyio.fail_after(60):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            listing = await every_page(client, "list_directory", {"path": "flat", "sizes": True})
            assert len(listing) >= 3
            names = [name for page in listing for name in page["structuredContent"]["files"]]
            assert len(names) == len(set(names)) and set(names) == flat
            assert names == sorted(flat)  # in order: each page starts where the last one ended

            tree = await every_page(client, "directory_tree", {"path": "big"})
            assert len(tree) >= 2
            shown = [path for page in tree for path in paths_of_tree(page["structuredContent"]["tree"])]
            directories = {f"directory-{outer:03d}" for outer in range(DIRECTORIES)}
            assert len(shown) == len(set(shown)) and set(shown) == made | directories
            assert sum(page["structuredContent"]["entries"] for page in tree) == len(shown)

            files = await every_page(client, "search_files", {"path": "big", "pattern": "*.txt", "maxResults": 5000})
            assert len(files) >= 3
            matches = [path for page in files for path in page["structuredContent"]["matches"]]
            assert len(matches) == len(set(matches)) and {str(Path(m).relative_to(big)) for m in matches} == made

            query = {"path": "big", "query": "needle", "maxResults": 5000, "contextLines": 1}
            content = await every_page(client, "search_content", query)
            assert len(content) >= 2
            lines = [(m["path"], m["line"]) for page in content for m in page["structuredContent"]["matches"]]
            assert len(lines) == len(set(lines)) == len(made)
            assert {str(Path(path).relative_to(big)) for path, _ in lines} == made

            small = await client.call_tool("list_directory", {"path": "big/directory-000"})
            assert "nextCursor" not in small["structuredContent"] and small["structuredContent"]["truncated"] is False


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_a_cursor_is_refused_for_another_call_or_when_edited(tmp_path: Path, version: str | None) -> None:
    for directory in ("one", "two"):
        (tmp_path / directory).mkdir()
        for index in range(2000):
            (tmp_path / directory / f"a-name-long-enough-to-fill-pages-{index:05d}.txt").touch()
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--no-watch"]
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            first = await client.call_tool("list_directory", {"path": "one"})
            cursor = first["structuredContent"]["nextCursor"]
            number, signature = cursor.split(".")
            refused = [
                ("list_directory", {"path": "two", "cursor": cursor}),  # another path
                ("list_directory", {"path": "one", "sizes": True, "cursor": cursor}),  # other options
                ("search_files", {"path": "one", "pattern": "*", "cursor": cursor}),  # another tool
                ("directory_tree", {"path": "one", "cursor": cursor}),
                ("search_content", {"path": "one", "query": "x", "cursor": cursor}),
                ("list_directory", {"path": "one", "cursor": f"{int(number) + 1}.{signature}"}),  # edited
                ("list_directory", {"path": "one", "cursor": "0:0"}),  # read_text_file's form
            ]
            for tool, arguments in refused:
                result = await client.call_tool(tool, arguments)
                assert result.get("isError") is True, arguments
                assert "Invalid cursor" in result["content"][0]["text"], arguments
            again = await client.call_tool("list_directory", {"path": "one", "cursor": cursor})
            assert not again.get("isError")
            assert again["structuredContent"]["files"][0] not in first["structuredContent"]["files"]


def test_cursors_of_another_server_process_are_refused() -> None:
    mine, theirs = PageCursors(), PageCursors()
    cursor = theirs.issue("search_files", {"path": "p", "pattern": "*"}, 10)
    with pytest.raises(ValueError, match="Invalid cursor"):
        mine.start("search_files", {"path": "p", "pattern": "*", "cursor": cursor})
    assert theirs.start("search_files", {"path": "p", "pattern": "*", "cursor": cursor}) == 10


def test_fitting_always_moves_on() -> None:
    assert fitting([10, 10, 10], 25) == 2
    assert fitting([100, 1], 25) == 1  # one item larger than the budget still makes a page
    assert fitting([], 25) == 0
