"""Large results by reference (issue 19): a cut read links its file:// resource, which the client can
fetch whole; tools large by design declare ``_meta["anthropic/maxResultSizeChars"]``. Through a real
process, in both eras, and for a client of a revision before resource links."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

MODERN = "2026-07-28"
TEXT = "".join(f"row {index:06d} of a file larger than one read\n" for index in range(5_000))  # ~210 KB


def argv(root: Path) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", str(root), "--no-watch"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_a_cut_read_links_the_file_and_the_link_reads_it_whole(tmp_path: Path, version: str | None) -> None:
    (tmp_path / "rows.txt").write_text(TEXT)
    options = {"protocol_version": version} if version else {}
    with anyio.fail_after(30):
        async with connect_stdio(argv(tmp_path), stderr="discard", **options) as client:
            read = await client.call_tool("read_text_file", {"path": "rows.txt"})
            assert read["structuredContent"]["truncated"] is True
            links = [block for block in read["content"] if block["type"] == "resource_link"]
            assert links == [
                {
                    "type": "resource_link",
                    "uri": (tmp_path / "rows.txt").as_uri(),
                    "name": "rows.txt",
                    "mimeType": "text/plain",
                    "size": len(TEXT),
                }
            ]
            whole = await client.read_resource(links[0]["uri"])
            assert whole["contents"][0]["text"] == TEXT
            several = await client.call_tool("read_multiple_files", {"paths": ["rows.txt", "rows.txt"]})
            assert [b["uri"] for b in several["content"] if b["type"] == "resource_link"] == [links[0]["uri"]] * 2
            small = await client.call_tool("read_text_file", {"path": "rows.txt", "head": 2})
            assert all(block["type"] == "text" for block in small["content"])  # nothing cut, no link


@pytest.mark.anyio
async def test_no_link_for_clients_before_resource_links(tmp_path: Path) -> None:
    (tmp_path / "rows.txt").write_text(TEXT)
    with anyio.fail_after(30):
        async with connect_stdio(argv(tmp_path), stderr="discard", protocol_version="2025-03-26") as client:
            read = await client.call_tool("read_text_file", {"path": "rows.txt"})
    assert [block["type"] for block in read["content"]] == ["text"]
    assert "read on with cursor" in read["content"][0]["text"]  # that revision has no structured content


@pytest.mark.anyio
async def test_no_link_to_a_file_too_large_for_resources_read(tmp_path: Path) -> None:
    with open(tmp_path / "huge.log", "wb") as file:
        file.write(b"line\n" * 1000)
        file.truncate(64 * 1024 * 1024)
    with anyio.fail_after(30):
        async with connect_stdio(argv(tmp_path), stderr="discard") as client:
            read = await client.call_tool("read_text_file", {"path": "huge.log"})
    assert "nextCursor" in read["structuredContent"]
    assert [block["type"] for block in read["content"]] == ["text"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_tools_large_by_design_declare_their_result_size(tmp_path: Path, version: str | None) -> None:
    options = {"protocol_version": version} if version else {}
    with anyio.fail_after(30):
        async with connect_stdio([*argv(tmp_path), "--allow-write"], stderr="discard", **options) as client:
            tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    large = {name for name, tool in tools.items() if "anthropic/maxResultSizeChars" in tool.get("_meta", {})}
    assert large == {"list_directory", "directory_tree", "search_files", "search_content"}
    assert all(tools[name]["_meta"]["anthropic/maxResultSizeChars"] == 3_800_000 for name in large)


@pytest.mark.anyio
async def test_the_official_sdk_reads_a_page_follows_the_cursor_and_the_link(tmp_path: Path) -> None:
    """Interoperability: the official Python SDK parses the page, its structured content and the
    resource_link block (its models validate every field), then pages on and reads the linked file."""
    from tests.interop.sdk_client import connect

    (tmp_path / "rows.txt").write_text(TEXT)
    async with connect(argv(tmp_path)) as conn:
        with anyio.fail_after(20):
            first = await conn.session.call_tool("read_text_file", {"path": "rows.txt"})
            assert not first.is_error and first.structured_content["truncated"] is True
            link = next(block for block in first.content if block.type == "resource_link")
            assert str(link.uri) == (tmp_path / "rows.txt").as_uri() and link.size == len(TEXT)
            second = await conn.session.call_tool(
                "read_text_file", {"path": "rows.txt", "cursor": first.structured_content["nextCursor"]}
            )
            assert (first.structured_content["content"] + second.structured_content["content"]) == TEXT[
                : len(first.structured_content["content"]) + len(second.structured_content["content"])
            ]
            whole = await conn.session.read_resource(link.uri)
            assert whole.contents[0].text == TEXT
