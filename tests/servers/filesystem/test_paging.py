"""Files of any size (issue 19): pages by line or byte range, head and tail in one call, a continuation
cursor, and a budget no result exceeds without saying how to get the rest.

The pure page reader first (:mod:`plainmcp_filesystem.paging`), then the tools through a real server
process in both eras, on a real 1 GB sparse file.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import Server, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.paging import Cursor, read_page, skip_lines, tail_start

from .conftest import Tree, text_of

MODERN = "2026-07-28"
GIB = 1024**3
#: Lines of multi-byte UTF-8 (two- and three-byte characters), so a page edge can fall inside one.
TEXT = "".join(f"línea {index} ✓ {'é' * (index % 7)}\n" for index in range(2000))


def pages(data: bytes, at: Cursor, budget: int, **options: Any) -> list[Any]:
    """Every page from ``at`` on, following the cursors (bounded: at most len(data) pages)."""
    file, found = io.BytesIO(data), []
    for _ in range(len(data) + 1):
        page = read_page(file, len(data), at, budget=budget, encoding="utf-8", **options)
        found.append(page)
        if page.next is None:
            return found
        at = page.next
    raise AssertionError("the cursor never ended")


@pytest.mark.parametrize("budget", [16, 100, 997, 40_000])
def test_cursor_pages_reassemble_the_file_exactly_with_consecutive_line_numbers(budget: int) -> None:
    data = TEXT.encode()
    found = pages(data, Cursor(0, 1), budget)
    assert "".join(page.text for page in found) == TEXT
    assert all(len(page.text.encode()) <= budget for page in found)
    expected_first = 1
    for page in found:
        if page.first_line is not None:
            # A page shorter than one line starts mid-line: it carries that line's number on.
            assert page.first_line in (expected_first, expected_first - 1)
            expected_first = page.last_line + (1 if page.text.endswith("\n") else 0)
    assert found[-1].last_line == 2000


def test_a_page_ends_after_its_last_whole_line() -> None:
    page = pages(TEXT.encode(), Cursor(0, 1), 100)[0]
    assert page.text.endswith("\n") and page.next is not None
    assert page.next.offset == len(page.text.encode()) and page.next.line == page.last_line + 1


def test_a_byte_range_inside_a_character_starts_at_the_next_one() -> None:
    data = "aé✓b".encode()  # a, é (2 bytes), ✓ (3 bytes), b
    page = read_page(io.BytesIO(data), len(data), Cursor(2, 0), budget=100, encoding="utf-8", length=10)
    assert page.text == "✓b" and page.offset == 3 and page.next is None
    cut = read_page(io.BytesIO(data), len(data), Cursor(0, 1), budget=100, encoding="utf-8", length=4)
    assert cut.text == "aé" and cut.end == 3  # the ✓ cut by the length is not half-decoded


def test_a_line_range_cut_by_the_budget_goes_on_to_its_end_only() -> None:
    data = TEXT.encode()
    file = io.BytesIO(data)
    start = skip_lines(file, 100, lambda: None)
    found = pages(data, Cursor(start, 100, 180), 200)
    assert len(found) > 1
    assert "".join(page.text for page in found) == "".join(TEXT.splitlines(keepends=True)[99:180])


def test_tail_start_counts_lines_from_the_end_within_the_budget() -> None:
    data = b"one\ntwo\nthree\n"
    file = io.BytesIO(data)
    assert tail_start(file, len(data), 2, 1000) == (4, True)
    assert tail_start(file, len(data), 9, 1000) == (0, True)
    long_line = b"x" * 5000 + b"\n"
    assert tail_start(io.BytesIO(long_line), len(long_line), 1, 100) == (4901, False)


def test_a_cursor_not_given_out_is_refused() -> None:
    for bad in ("", "12", "a:b", "1:2:3:4", "-1:0", 12):
        with pytest.raises(ValueError, match="Invalid cursor"):
            Cursor.parse(bad)
    assert Cursor.parse(str(Cursor(5, 2, 9))) == Cursor(5, 2, 9)


# ------------------------------------------------------------------------------------- the tools


async def call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with connect_in_memory(server) as client:
        return await client.call_tool(name, arguments)


@pytest.mark.anyio
async def test_read_text_file_pages_with_the_cursor_it_gives(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "long.txt").write_text(TEXT)
    server = make_server(max_read_bytes=1000)
    shown, arguments = [], {"path": "long.txt"}
    for _ in range(200):
        result = (await call(server, "read_text_file", arguments))["structuredContent"]
        shown.append(result["content"])
        if "nextCursor" not in result:
            assert result["truncated"] is False
            break
        assert result["truncated"] is True
        arguments = {"path": "long.txt", "cursor": result["nextCursor"]}
    assert "".join(shown) == TEXT


@pytest.mark.anyio
async def test_read_text_file_head_and_tail_in_one_call(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "long.txt").write_text(TEXT)
    result = await call(make_server(), "read_text_file", {"path": "long.txt", "head": 2, "tail": 2})
    lines = TEXT.splitlines(keepends=True)
    data = result["structuredContent"]
    assert data["content"] == "".join(lines[:2]) and data["tailContent"] == "".join(lines[-2:])
    assert data["omittedBytes"] == len(TEXT.encode()) - len("".join(lines[:2] + lines[-2:]).encode())
    assert f"[... {data['omittedBytes']} bytes not shown ...]" in text_of(result)
    # Fewer lines than head + tail: nothing is shown twice.
    short = (await call(make_server(), "read_text_file", {"path": "hello.txt", "head": 2, "tail": 5}))[
        "structuredContent"
    ]
    assert short["content"] + short["tailContent"] == "line 1\nline 2\nline 3\n" and short["omittedBytes"] == 0


@pytest.mark.anyio
async def test_read_text_file_byte_range_and_refusals(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server()
    ranged = (await call(server, "read_text_file", {"path": "hello.txt", "offset": 7, "length": 6}))[
        "structuredContent"
    ]
    assert ranged["content"] == "line 2" and ranged["offset"] == 7
    for arguments in ({"offset": 3, "head": 1}, {"cursor": "0:1", "startLine": 2}, {"cursor": "nonsense"}):
        result = await call(server, "read_text_file", {"path": "hello.txt", **arguments})
        assert result["isError"], arguments


@pytest.mark.anyio
async def test_read_text_file_keeps_to_the_default_budget_and_says_how_to_go_on(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    (tree.root / "big.txt").write_text("".join(f"row {index:07d}\n" for index in range(100_000)))
    result = await call(make_server(), "read_text_file", {"path": "big.txt"})
    data = result["structuredContent"]
    assert len(data["content"].encode()) <= 40_000  # about 10k tokens
    assert data["truncated"] is True and data["endLine"] == len(data["content"].splitlines())
    assert f'cursor "{data["nextCursor"]}"' in text_of(result)


@pytest.mark.anyio
async def test_read_multiple_files_head_tail_and_one_budget(make_server: Callable[..., Server], tree: Tree) -> None:
    for index in range(3):
        (tree.root / f"f{index}.txt").write_text(TEXT)
    server = make_server(max_read_bytes=3000)
    result = await call(server, "read_multiple_files", {"paths": ["f0.txt", "f1.txt", "f2.txt"]})
    files = result["structuredContent"]["files"]
    assert sum(len(entry["content"].encode()) for entry in files) <= 3000
    assert files[0]["truncated"] is True
    rest = await call(server, "read_text_file", {"path": "f0.txt", "cursor": files[0]["nextCursor"]})
    assert rest["structuredContent"]["content"].startswith(TEXT[len(files[0]["content"]) :][:50])
    heads = await call(make_server(), "read_multiple_files", {"paths": ["f0.txt", "hello.txt"], "head": 1, "tail": 1})
    first, second = heads["structuredContent"]["files"]
    assert first["content"] == TEXT.splitlines(keepends=True)[0]
    assert first["tailContent"] == TEXT.splitlines(keepends=True)[-1]
    assert second["content"] == "line 1\n" and second["tailContent"] == "line 3\n"


# ------------------------------------------------------------------ a 1 GB file through a real process


def sparse_gigabyte(root: Path) -> Path:
    """A 1 GB file, sparse but for 100 lines at its start, at its middle and at its very end."""
    path = root / "huge.log"
    with open(path, "wb") as file:
        file.truncate(GIB)
        for place in ("start", "middle", "end"):
            block = b"".join(b"%s line %d\n" % (place.encode(), index) for index in range(100))
            file.seek({"start": 0, "middle": GIB // 2, "end": GIB - len(block)}[place])
            file.write(block)
    return path


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_pages_of_a_gigabyte_file_cost_a_page_in_both_eras(tmp_path: Path, version: str | None) -> None:
    sparse_gigabyte(tmp_path)
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--no-watch"]
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            pid = client.process.pid
            await client.call_tool("list_allowed_directories", {})
            before = peak_rss_kib(pid)
            first = (await client.call_tool("read_text_file", {"path": "huge.log", "head": 3}))["structuredContent"]
            assert first["content"] == "start line 0\nstart line 1\nstart line 2\n" and first["size"] == GIB
            middle = await client.call_tool("read_text_file", {"path": "huge.log", "offset": GIB // 2})
            assert middle["structuredContent"]["content"].startswith("middle line 0\nmiddle line 1\n")
            last = (await client.call_tool("read_text_file", {"path": "huge.log", "tail": 2}))["structuredContent"]
            assert last["content"] == "end line 98\nend line 99\n"
            both = await client.call_tool("read_text_file", {"path": "huge.log", "head": 1, "tail": 1})
            assert both["structuredContent"]["omittedBytes"] > GIB - 100_000
            exact = await client.call_tool("read_text_file", {"path": "huge.log", "offset": GIB // 2, "length": 14})
            assert (
                exact["structuredContent"]["content"] == "middle line 0\n"
                and not exact["structuredContent"]["truncated"]
            )
            cursor = middle["structuredContent"]["nextCursor"]
            on = (await client.call_tool("read_text_file", {"path": "huge.log", "cursor": cursor}))["structuredContent"]
            assert on["offset"] == int(cursor.split(":")[0]) and len(on["content"].encode()) <= 40_000
            # Each page cost a page: the server's peak memory barely moved over a gigabyte file.
            assert peak_rss_kib(pid) - before < 8 * 1024


def test_sparse_file_is_sparse(tmp_path: Path) -> None:
    """The fixture really is a 1 GB file that costs the disk almost nothing (else the test above would
    fill the disk on a file system without holes)."""
    path = sparse_gigabyte(tmp_path)
    assert path.stat().st_size == GIB
    assert os.stat(path).st_blocks * 512 < 64 * 1024 * 1024


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "latin-1", "cp1252", "utf-8-sig"])
def test_cursor_pages_of_other_encodings_reassemble_the_text(encoding: str) -> None:
    """Pages of a UTF-16 or UTF-32 file from its middle decode in the byte order of its BOM (they have
    none of their own); no page splits a character."""
    text = "".join(f"línea {index} {'✓' if encoding.startswith('utf') else 'x'}\n" for index in range(300))
    data = text.encode(encoding)
    file, at, shown = io.BytesIO(data), Cursor(0, 1), []
    for _ in range(len(data)):
        page = read_page(file, len(data), at, budget=101, encoding=encoding)
        shown.append(page.text)
        if page.next is None:
            break
        at = page.next
    assert "".join(shown) == text and len(shown) > 10


@pytest.mark.anyio
async def test_read_text_file_pages_a_utf16_file(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "wide.txt").write_bytes(TEXT.encode("utf-16"))
    server = make_server(max_read_bytes=2000)
    shown, arguments = [], {"path": "wide.txt", "encoding": "utf-16"}
    for _ in range(500):
        data = (await call(server, "read_text_file", arguments))["structuredContent"]
        assert data["encodingErrors"] is False
        shown.append(data["content"])
        if "nextCursor" not in data:
            break
        arguments = {"path": "wide.txt", "encoding": "utf-16", "cursor": data["nextCursor"]}
    assert "".join(shown) == TEXT


@pytest.mark.anyio
async def test_hostile_offsets_and_counts_are_answers_not_internal_errors(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    """Offsets past 2**63 (seek refuses them) and counts far past the file: an empty page or the file."""
    server = make_server()
    for arguments in (
        {"cursor": "9999999999999999999:0"},
        {"offset": 2**63},
        {"offset": 10**30, "length": 10**30},
        {"head": 10**30},
        {"tail": 10**30},
        {"startLine": 10**20},
        {"length": 10**30},
    ):
        result = await call(server, "read_text_file", {"path": "hello.txt", **arguments})
        assert not result.get("isError"), arguments
        content = result["structuredContent"]["content"]
        assert content in ("", "line 1\nline 2\nline 3\n"), arguments
