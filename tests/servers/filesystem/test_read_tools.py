"""The read tools through an in-memory client."""

from __future__ import annotations

import base64
import os
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from plainmcp import Server
from plainmcp.testing import connect_in_memory

from .conftest import Tree, text_of

pytestmark = pytest.mark.anyio

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


async def call(server: Server, name: str, arguments: dict[str, Any], **options: Any) -> dict[str, Any]:
    async with connect_in_memory(server, **options) as client:
        return await client.call_tool(name, arguments)


async def test_tools_read_only_by_default_lists_no_write_tool(make_server: Callable[..., Server]) -> None:
    async with connect_in_memory(make_server()) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    assert set(tools) == {
        "read_text_file",
        "read_multiple_files",
        "read_media_file",
        "list_directory",
        "directory_tree",
        "search_files",
        "search_content",
        "get_file_info",
        "list_allowed_directories",
    }
    for tool in tools.values():
        assert tool["annotations"]["readOnlyHint"] is True
        assert tool["annotations"]["openWorldHint"] is False
        assert tool["outputSchema"]["type"] == "object"


async def test_read_text_file_whole_head_tail_and_range(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server()
    whole = await call(server, "read_text_file", {"path": "hello.txt"})
    assert whole["structuredContent"]["content"] == "line 1\nline 2\nline 3\n"
    assert (await call(server, "read_text_file", {"path": "hello.txt", "head": 2}))["structuredContent"][
        "content"
    ] == "line 1\nline 2\n"
    assert (await call(server, "read_text_file", {"path": "hello.txt", "tail": 2}))["structuredContent"][
        "content"
    ] == "line 2\nline 3\n"
    ranged = await call(server, "read_text_file", {"path": "hello.txt", "startLine": 2, "endLine": 2})
    assert ranged["structuredContent"]["content"] == "line 2\n"
    assert ranged["structuredContent"]["startLine"] == 2 and ranged["structuredContent"]["endLine"] == 2
    both = await call(server, "read_text_file", {"path": "hello.txt", "head": 1, "tail": 1})
    assert both["structuredContent"]["content"] == "line 1\n" and both["structuredContent"]["tailContent"] == "line 3\n"
    mixed = await call(server, "read_text_file", {"path": "hello.txt", "head": 1, "startLine": 2})
    assert mixed["isError"] and "only one of" in text_of(mixed)


async def test_read_text_file_tail_of_a_large_file_reads_its_end(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    (tree.root / "big.log").write_text("".join(f"row {i}\n" for i in range(200_000)))
    result = await call(make_server(), "read_text_file", {"path": "big.log", "tail": 3})
    assert result["structuredContent"]["content"] == "row 199997\nrow 199998\nrow 199999\n"


async def test_read_text_file_truncates_at_the_cap_with_a_notice(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    (tree.root / "big.txt").write_text("x" * 5000)
    result = await call(make_server(max_read_bytes=1000), "read_text_file", {"path": "big.txt"})
    assert result["structuredContent"]["truncated"] is True
    assert len(result["structuredContent"]["content"]) == 1000
    assert "[truncated" in text_of(result) and "5000-byte" in text_of(result)


async def test_read_text_file_replaces_invalid_bytes_and_says_so(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    (tree.root / "latin.txt").write_bytes(b"caf\xe9\n")
    result = await call(make_server(), "read_text_file", {"path": "latin.txt"})
    assert result["structuredContent"]["content"] == "caf\ufffd\n"
    assert result["structuredContent"]["encodingErrors"] is True and "U+FFFD" in text_of(result)
    decoded = await call(make_server(), "read_text_file", {"path": "latin.txt", "encoding": "latin-1"})
    assert decoded["structuredContent"]["content"] == "café\n"
    unknown = await call(make_server(), "read_text_file", {"path": "latin.txt", "encoding": "nope"})
    assert unknown["isError"]


async def test_read_text_file_on_a_fifo_fails_without_hanging(make_server: Callable[..., Server], tree: Tree) -> None:
    os.mkfifo(tree.root / "pipe")
    result = await call(make_server(), "read_text_file", {"path": "pipe"})
    assert result["isError"] and "FIFO" in text_of(result)


async def test_read_media_file_returns_image_and_audio_blocks(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "pixel.png").write_bytes(PNG)
    (tree.root / "sound.wav").write_bytes(b"RIFF....WAVE")
    (tree.root / "data.bin").write_bytes(b"\x00\x01")
    server = make_server()
    image = await call(server, "read_media_file", {"path": "pixel.png"})
    assert image["content"][0] == {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"}
    audio = await call(server, "read_media_file", {"path": "sound.wav"})
    assert audio["content"][0]["type"] == "audio" and audio["content"][0]["mimeType"] == "audio/wav"
    other = await call(server, "read_media_file", {"path": "data.bin"})
    assert other["content"][0]["type"] == "resource"
    assert other["content"][0]["resource"]["mimeType"] == "application/octet-stream"


async def test_read_media_file_refuses_files_over_the_cap(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "big.png").write_bytes(b"\x89PNG" + b"\x00" * 2000)
    result = await call(make_server(max_media_bytes=1000), "read_media_file", {"path": "big.png"})
    assert result["isError"] and "limit is 1000 bytes" in text_of(result)


async def test_read_multiple_files_reports_failures_per_file(make_server: Callable[..., Server], tree: Tree) -> None:
    result = await call(
        make_server(),
        "read_multiple_files",
        {"paths": ["hello.txt", "missing.txt", str(tree.outside / "secret.txt"), "sub/notes.md"]},
    )
    files = result["structuredContent"]["files"]
    assert "content" in files[0] and "content" in files[3]
    assert "No such file" in files[1]["error"]
    assert "Access denied" in files[2]["error"]
    assert not result.get("isError")


async def test_list_directory_groups_sorts_hides_and_caps(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "big.bin").write_bytes(b"x" * 100)
    tree.link("link", tree.root / "hello.txt")
    server = make_server()
    listed = (await call(server, "list_directory", {"path": "."}))["structuredContent"]
    assert listed["files"] == [".hidden", "big.bin", "hello.txt"] and listed["directories"] == ["sub"]
    assert listed["others"] == [{"name": "link", "type": "symlink"}] and "sizes" not in listed
    by_size = (await call(server, "list_directory", {"path": ".", "sortBy": "size"}))["structuredContent"]
    assert by_size["files"] == ["big.bin", "hello.txt", ".hidden"]
    assert by_size["sizes"] == {"big.bin": 100, "hello.txt": 21, ".hidden": 7} and by_size["totalSize"] == 128
    assert set(by_size["modified"]) == {".hidden", "big.bin", "hello.txt", "sub", "link"}
    visible = (await call(server, "list_directory", {"path": ".", "includeHidden": False}))["structuredContent"]
    assert ".hidden" not in visible["files"]
    capped = (await call(server, "list_directory", {"path": ".", "maxEntries": 2}))["structuredContent"]
    assert capped["directories"] == ["sub"] and capped["files"] == [".hidden"] and capped["truncated"] is True


async def test_directory_tree_depth_excludes_and_cap(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server()
    full = (await call(server, "directory_tree", {"path": "."}))["structuredContent"]
    sub = next(node for node in full["tree"] if node["name"] == "sub")
    assert [c["name"] for c in sub["children"]] == ["deep", "notes.md"]
    assert sub["children"][0]["children"] == [{"name": "code.py", "type": "file"}]
    shallow = (await call(server, "directory_tree", {"path": ".", "maxDepth": 1}))["structuredContent"]
    assert next(n for n in shallow["tree"] if n["name"] == "sub")["children"] == []
    excluded = (await call(server, "directory_tree", {"path": ".", "excludePatterns": ["deep", ".*"]}))[
        "structuredContent"
    ]
    assert [n["name"] for n in excluded["tree"]] == ["hello.txt", "sub"]
    capped = (await call(server, "directory_tree", {"path": ".", "maxEntries": 2}))["structuredContent"]
    assert capped["truncated"] is True and capped["entries"] == 2


async def test_search_files_matches_names_and_paths(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server()
    found = (await call(server, "search_files", {"path": ".", "pattern": "*.py"}))["structuredContent"]
    assert found["matches"] == [str(tree.root / "sub" / "deep" / "code.py")]
    none = await call(server, "search_files", {"path": ".", "pattern": "*.rs"})
    assert none["structuredContent"]["matches"] == [] and text_of(none) == "No matches found"
    capped = (await call(server, "search_files", {"path": ".", "pattern": "*", "maxResults": 1}))["structuredContent"]
    assert capped["truncated"] is True


async def test_search_content_finds_lines_with_context_and_skips_binary(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    (tree.root / "blob.bin").write_bytes(b"find me\x00\x01")
    server = make_server()
    found = (await call(server, "search_content", {"path": ".", "query": "FIND ME", "contextLines": 1}))[
        "structuredContent"
    ]
    assert [(m["path"], m["line"]) for m in found["matches"]] == [(str(tree.root / "sub" / "notes.md"), 2)]
    assert found["matches"][0]["before"] == ["# Notes"]
    assert found["skippedBinary"] == 1
    exact = (await call(server, "search_content", {"path": ".", "query": "FIND ME", "caseSensitive": True}))[
        "structuredContent"
    ]
    assert exact["matches"] == []
    regex = await call(
        server, "search_content", {"path": ".", "query": r"return \d", "regex": True, "include": ["*.py"]}
    )
    assert regex["structuredContent"]["matches"][0]["text"] == "    return 1"
    bad = await call(server, "search_content", {"path": ".", "query": "(", "regex": True})
    assert bad["isError"] and "Invalid regular expression" in text_of(bad)


async def test_search_content_skips_files_over_the_size_cap(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "huge.txt").write_text("needle\n" + "x" * 5000)
    found = await call(make_server(max_search_file_bytes=1000), "search_content", {"path": ".", "query": "needle"})
    assert found["structuredContent"]["skippedLarge"] == 1 and found["structuredContent"]["matches"] == []


async def test_search_content_reports_progress(make_server: Callable[..., Server], tree: Tree) -> None:
    for index in range(5000):
        (tree.root / "sub" / f"f{index}.txt").write_text("nothing\n")
    seen: list[float] = []
    async with connect_in_memory(make_server()) as client:
        await client.call_tool(
            "search_content",
            {"path": ".", "query": "needle"},
            on_progress=lambda progress, total, message: seen.append(progress),
        )
    assert seen and seen == sorted(seen)


async def test_get_file_info_and_allowed_directories(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server()
    info = (await call(server, "get_file_info", {"path": "hello.txt"}))["structuredContent"]
    assert info["type"] == "file" and info["size"] == 21 and info["mimeType"] == "text/plain"
    assert info["modified"].endswith("Z") and len(info["permissions"]) == 3
    allowed = (await call(server, "list_allowed_directories", {}))["structuredContent"]
    assert allowed == {"directories": [str(tree.root)]}


async def test_client_roots_narrow_the_allowed_directories(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server(use_roots=True)
    roots = [{"uri": (tree.root / "sub").as_uri()}, {"uri": tree.outside.as_uri()}]
    async with connect_in_memory(server, roots=roots) as client:
        allowed = await client.call_tool("list_allowed_directories", {})
        assert allowed["structuredContent"]["directories"] == [str(tree.root / "sub")]
        denied = await client.call_tool("read_text_file", {"path": str(tree.root / "hello.txt")})
        assert denied["isError"]
        outside = await client.call_tool("read_text_file", {"path": str(tree.outside / "secret.txt")})
        assert outside["isError"]
        ok = await client.call_tool("read_text_file", {"path": str(tree.root / "sub" / "notes.md")})
        assert not ok.get("isError")


async def test_client_roots_are_ignored_without_use_roots(make_server: Callable[..., Server], tree: Tree) -> None:
    async with connect_in_memory(make_server(), roots=[{"uri": (tree.root / "sub").as_uri()}]) as client:
        allowed = await client.call_tool("list_allowed_directories", {})
    assert allowed["structuredContent"]["directories"] == [str(tree.root)]


async def test_tools_work_in_the_modern_era(make_server: Callable[..., Server], tree: Tree) -> None:
    result = await call(
        make_server(), "read_text_file", {"path": "hello.txt", "head": 1}, protocol_version="2026-07-28"
    )
    assert result["structuredContent"]["content"] == "line 1\n"


async def test_listings_are_cut_below_the_transport_message_limit(tree: Tree) -> None:
    from plainmcp_filesystem.config import Config
    from plainmcp_filesystem.server import build_server

    for index in range(300):
        (tree.root / "sub" / f"a-rather-long-file-name-number-{index:04}.txt").write_text("x")
    server = build_server(Config(roots=(str(tree.root),), watch=False, max_result_bytes=4000))
    async with connect_in_memory(server) as client:
        tree_result = (await client.call_tool("directory_tree", {"path": "."}))["structuredContent"]
        listed = (await client.call_tool("list_directory", {"path": "sub"}))["structuredContent"]
        found = (await client.call_tool("search_files", {"path": ".", "pattern": "*.txt"}))["structuredContent"]
    assert tree_result["truncated"] is True and 10 < tree_result["entries"] < 100
    assert listed["truncated"] is True and 10 < len(listed["files"]) < 200
    assert found["truncated"] is True and 10 < len(found["matches"]) < 100


async def test_client_roots_are_asked_again_after_they_change(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server(use_roots=True)
    async with connect_in_memory(server, roots=[{"uri": (tree.root / "sub").as_uri()}]) as client:
        first = await client.call_tool("list_allowed_directories", {})
        assert first["structuredContent"]["directories"] == [str(tree.root / "sub")]
        await client.set_roots([{"uri": tree.base.as_uri()}])  # wider than the operator's: narrowed back
        with anyio.fail_after(5):
            while True:
                again = await client.call_tool("list_allowed_directories", {})
                if again["structuredContent"]["directories"] != first["structuredContent"]["directories"]:
                    break
                await anyio.sleep(0.01)
    assert again["structuredContent"]["directories"] == [str(tree.root)]


async def test_list_directory_of_a_huge_directory_stops_reading_at_the_limit(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    for index in range(30):
        (tree.root / "sub" / f"f{index:02d}").touch()
    result = await call(make_server(max_entries_limit=20, max_entries=10), "list_directory", {"path": "sub"})
    assert result["structuredContent"]["truncated"] is True
    assert len(result["structuredContent"]["files"]) + len(result["structuredContent"]["directories"]) == 10
    assert "holds more than 20" in text_of(result)


async def test_list_directory_dir_sizes_total_every_file_below(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "sub" / "deep" / "blob.bin").write_bytes(b"x" * 1000)
    tree.link("sub/deep/loop", tree.root)  # a link is never followed: it cannot count a tree twice
    tree.link("sub/out", tree.outside)
    result = await call(make_server(), "list_directory", {"path": ".", "dirSizes": True})
    data = result["structuredContent"]
    notes, code = len("# Notes\nfind me here\n"), len("def f():\n    return 1\n")
    assert data["directorySizes"] == {"sub": notes + code + 1000} and data["partialSizes"] == []
    assert f"sub/  ({notes + code + 1000} bytes)" in text_of(result)
    capped = await call(
        make_server(max_entries_limit=3, max_entries=3), "list_directory", {"path": ".", "dirSizes": True}
    )
    assert capped["structuredContent"]["partialSizes"] == ["sub"]
    assert "+ bytes)" in text_of(capped)
