"""Files as resources: the capped, paginated list, the template, reading text and blobs."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest
from plainmcp import MCPError, Server
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.config import Config
from plainmcp_filesystem.server import build_server

from .conftest import Tree

pytestmark = pytest.mark.anyio


async def test_resources_list_shows_files_with_mime_types(make_server: Callable[..., Server], tree: Tree) -> None:
    async with connect_in_memory(make_server()) as client:
        resources = await client.list_all_resources()
        templates = await client.list_all_resource_templates()
    by_name = {r["name"]: r for r in resources}
    assert set(by_name) == {".hidden", "hello.txt", "sub/deep/code.py", "sub/notes.md"}
    assert by_name["sub/notes.md"]["uri"] == (tree.root / "sub" / "notes.md").as_uri()
    assert by_name["sub/notes.md"]["mimeType"] == "text/markdown" and by_name["hello.txt"]["size"] == 21
    assert [t["uriTemplate"] for t in templates] == ["file://{+path}"]


async def test_resources_list_is_paginated_and_capped(tree: Tree) -> None:
    for index in range(250):
        (tree.root / "sub" / f"n{index:03}.txt").write_text("x")
    server = build_server(Config(roots=(str(tree.root),), watch=False, max_resources=180))
    async with connect_in_memory(server) as client:
        first, cursor = await client.list_resources()
        assert len(first) == 100 and cursor is not None
        everything = await client.list_all_resources()
    assert len(everything) == 180
    assert len({r["uri"] for r in everything}) == 180


async def test_resources_read_text_blob_and_directory(make_server: Callable[..., Server], tree: Tree) -> None:
    (tree.root / "data.bin").write_bytes(b"\x00\xff")
    (tree.root / "latin.txt").write_bytes(b"caf\xe9")
    async with connect_in_memory(make_server()) as client:
        text = (await client.read_resource((tree.root / "hello.txt").as_uri()))["contents"][0]
        blob = (await client.read_resource((tree.root / "data.bin").as_uri()))["contents"][0]
        latin = (await client.read_resource((tree.root / "latin.txt").as_uri()))["contents"][0]
        listing = (await client.read_resource((tree.root / "sub").as_uri()))["contents"][0]
    assert text == {
        "uri": (tree.root / "hello.txt").as_uri(),
        "text": "line 1\nline 2\nline 3\n",
        "mimeType": "text/plain",
    }
    assert base64.b64decode(blob["blob"]) == b"\x00\xff" and blob["mimeType"] == "application/octet-stream"
    assert base64.b64decode(latin["blob"]) == b"caf\xe9"
    assert listing["text"] == "deep/\nnotes.md"


async def test_resources_read_of_a_missing_file_is_not_found_in_both_eras(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    uri = (tree.root / "missing.txt").as_uri()
    async with connect_in_memory(make_server()) as client:
        with pytest.raises(MCPError) as legacy:
            await client.read_resource(uri)
    async with connect_in_memory(make_server(), protocol_version="2026-07-28") as client:
        with pytest.raises(MCPError) as modern:
            await client.read_resource(uri)
    assert legacy.value.code == -32002 and modern.value.code == -32602


async def test_resources_read_refuses_files_over_the_cap(tree: Tree) -> None:
    (tree.root / "big.txt").write_text("x" * 3000)
    server = build_server(Config(roots=(str(tree.root),), watch=False, max_media_bytes=1000))
    async with connect_in_memory(server) as client:
        with pytest.raises(MCPError) as refused:
            await client.read_resource((tree.root / "big.txt").as_uri())
    assert refused.value.code == -32602 and "limit is 1000 bytes" in refused.value.message
