"""The write tools, and read-only mode."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable
from typing import Any

import anyio
import pytest
from plainmcp import MCPError, Server
from plainmcp.testing import connect_in_memory

from .conftest import SECRET, Tree, text_of

pytestmark = pytest.mark.anyio

WRITE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("write_file", {"path": "new.txt", "content": "x"}),
    ("write_file", {"path": "hello.txt", "content": "x"}),
    ("append_file", {"path": "hello.txt", "content": "x"}),
    ("edit_file", {"path": "hello.txt", "edits": [{"oldText": "line 1", "newText": "x"}]}),
    ("create_directory", {"path": "newdir"}),
    ("move_file", {"source": "hello.txt", "destination": "moved.txt"}),
    ("copy_file", {"source": "hello.txt", "destination": "copy.txt"}),
    ("delete_file", {"path": "hello.txt"}),
]


def snapshot(tree: Tree) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for directory, dirs, files in os.walk(tree.base):
        for name in dirs:
            found[os.path.join(directory, name)] = None
        for name in files:
            found[os.path.join(directory, name)] = open(os.path.join(directory, name), "rb").read()
    return found


async def call(server: Server, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with connect_in_memory(server) as client:
        return await client.call_tool(name, arguments)


async def test_read_only_mode_no_write_succeeds_through_any_tool(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    before = snapshot(tree)
    async with connect_in_memory(make_server()) as client:
        for name, arguments in WRITE_CALLS:
            with pytest.raises(MCPError) as unknown:
                await client.call_tool(name, arguments)
            assert "Unknown tool" in unknown.value.message
    assert snapshot(tree) == before


async def test_delete_needs_its_own_flag(make_server: Callable[..., Server], tree: Tree) -> None:
    async with connect_in_memory(make_server(allow_write=True)) as client:
        names = {tool["name"] for tool in await client.list_all_tools()}
        assert "write_file" in names and "delete_file" not in names
        with pytest.raises(MCPError):
            await client.call_tool("delete_file", {"path": "hello.txt"})
    assert (tree.root / "hello.txt").exists()


async def test_write_tools_carry_correct_annotations(make_server: Callable[..., Server]) -> None:
    async with connect_in_memory(make_server(allow_write=True, allow_delete=True)) as client:
        hints = {tool["name"]: tool["annotations"] for tool in await client.list_all_tools()}
    assert hints["write_file"] == {
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert hints["edit_file"]["destructiveHint"] is True and hints["edit_file"]["idempotentHint"] is False
    assert hints["append_file"] == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": False,
        "openWorldHint": False,
    }
    assert hints["delete_file"]["destructiveHint"] is True
    assert hints["create_directory"]["destructiveHint"] is False and hints["create_directory"]["idempotentHint"] is True
    assert hints["copy_file"]["destructiveHint"] is False and hints["move_file"]["readOnlyHint"] is False


async def test_write_file_creates_and_replaces_atomically_keeping_the_mode(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    server = make_server(allow_write=True)
    created = await call(server, "write_file", {"path": "new.txt", "content": "héllo"})
    assert created["structuredContent"] == {"path": str(tree.root / "new.txt"), "created": True, "bytes": 6}
    os.chmod(tree.root / "hello.txt", 0o640)
    replaced = await call(server, "write_file", {"path": "hello.txt", "content": "new"})
    assert replaced["structuredContent"]["created"] is False
    assert (tree.root / "hello.txt").read_text() == "new"
    assert stat.S_IMODE(os.stat(tree.root / "hello.txt").st_mode) == 0o640
    assert not [name for name in os.listdir(tree.root) if name.endswith(".tmp")]


async def test_write_file_needs_an_existing_parent(make_server: Callable[..., Server], tree: Tree) -> None:
    result = await call(make_server(allow_write=True), "write_file", {"path": "no/such/dir.txt", "content": "x"})
    assert result["isError"] and "parent directory does not exist" in text_of(result)


async def test_write_file_replaces_a_link_inside_by_writing_its_target(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    tree.link("alias.txt", tree.root / "hello.txt")
    await call(make_server(allow_write=True), "write_file", {"path": "alias.txt", "content": "through"})
    assert (tree.root / "hello.txt").read_text() == "through"
    assert os.path.islink(tree.root / "alias.txt")


async def test_edit_file_dry_run_writes_nothing_and_returns_a_diff(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    server = make_server(allow_write=True)
    edits = [{"oldText": "line 2", "newText": "LINE TWO"}]
    dry = await call(server, "edit_file", {"path": "hello.txt", "edits": edits, "dryRun": True})
    assert "-line 2\n+LINE TWO" in dry["structuredContent"]["diff"] and dry["structuredContent"]["applied"] is False
    assert (tree.root / "hello.txt").read_text() == "line 1\nline 2\nline 3\n"
    done = await call(server, "edit_file", {"path": "hello.txt", "edits": edits})
    assert done["structuredContent"]["applied"] is True
    assert (tree.root / "hello.txt").read_text() == "line 1\nLINE TWO\nline 3\n"


async def test_edit_file_reports_ambiguous_matches_and_writes_nothing(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    result = await call(
        make_server(allow_write=True),
        "edit_file",
        {"path": "hello.txt", "edits": [{"oldText": "line", "newText": "row"}]},
    )
    assert result["isError"] and "matches 3 places (lines 1, 2, 3)" in text_of(result)
    assert (tree.root / "hello.txt").read_text() == "line 1\nline 2\nline 3\n"


async def test_create_directory_makes_parents_and_is_idempotent(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server(allow_write=True)
    assert (await call(server, "create_directory", {"path": "a/b/c"}))["structuredContent"]["created"] is True
    assert (tree.root / "a" / "b" / "c").is_dir()
    assert (await call(server, "create_directory", {"path": "a/b/c"}))["structuredContent"]["created"] is False
    clash = await call(server, "create_directory", {"path": "hello.txt"})
    assert clash["isError"]


async def test_move_file_never_replaces(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server(allow_write=True)
    refused = await call(server, "move_file", {"source": "hello.txt", "destination": "sub/notes.md"})
    assert refused["isError"] and "already exists" in text_of(refused)
    assert (tree.root / "sub" / "notes.md").read_text().startswith("# Notes")
    moved = await call(server, "move_file", {"source": "sub", "destination": "renamed"})
    assert not moved.get("isError") and (tree.root / "renamed" / "deep" / "code.py").exists()


async def test_copy_file_copies_files_and_trees_but_not_links(make_server: Callable[..., Server], tree: Tree) -> None:
    tree.link("sub/out", tree.outside)
    server = make_server(allow_write=True)
    single = await call(server, "copy_file", {"source": "hello.txt", "destination": "copy.txt"})
    assert (
        single["structuredContent"]["files"] == 1 and (tree.root / "copy.txt").read_text() == "line 1\nline 2\nline 3\n"
    )
    again = await call(server, "copy_file", {"source": "hello.txt", "destination": "copy.txt"})
    assert again["isError"]
    whole = await call(server, "copy_file", {"source": "sub", "destination": "sub2"})
    assert whole["structuredContent"]["files"] == 2 and whole["structuredContent"]["skipped"] == 1
    assert (tree.root / "sub2" / "deep" / "code.py").read_text() == "def f():\n    return 1\n"
    assert not os.path.lexists(tree.root / "sub2" / "out")
    into_itself = await call(server, "copy_file", {"source": "sub", "destination": "sub/inner"})
    assert into_itself["isError"]


async def test_delete_file_removes_files_links_and_trees_when_asked(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    link = tree.link("out", tree.outside / "secret.txt")
    server = make_server(allow_write=True, allow_delete=True)
    assert (await call(server, "delete_file", {"path": "out"}))["structuredContent"]["deleted"] == "symlink"
    assert not os.path.lexists(link) and (tree.outside / "secret.txt").exists()
    refused = await call(server, "delete_file", {"path": "sub"})
    assert refused["isError"] and "not empty" in text_of(refused)
    assert (await call(server, "delete_file", {"path": "sub", "recursive": True}))["structuredContent"][
        "deleted"
    ] == "directory"
    assert not (tree.root / "sub").exists()
    root = await call(server, "delete_file", {"path": str(tree.root), "recursive": True})
    assert root["isError"] and tree.root.exists()


@pytest.mark.parametrize("unnamed", [True, False], ids=["O_TMPFILE", "named-temporary"])
async def test_writes_are_atomic_with_or_without_unnamed_files(
    make_server: Callable[..., Server], tree: Tree, monkeypatch: pytest.MonkeyPatch, unnamed: bool
) -> None:
    monkeypatch.setattr("plainmcp_filesystem.writing._CAN_NAME_UNNAMED", unnamed)
    os.chmod(tree.root / "hello.txt", 0o640)
    async with connect_in_memory(make_server(allow_write=True)) as client:
        replaced = await client.call_tool("write_file", {"path": "hello.txt", "content": "new"})
        created = await client.call_tool("write_file", {"path": "fresh.txt", "content": "fresh"})
        copied = await client.call_tool("copy_file", {"source": "sub", "destination": "sub2"})
        refused = await client.call_tool("copy_file", {"source": "hello.txt", "destination": "fresh.txt"})
    assert replaced["structuredContent"]["created"] is False and created["structuredContent"]["created"] is True
    assert copied["structuredContent"]["files"] == 2 and refused["isError"]
    assert (tree.root / "hello.txt").read_text() == "new"
    assert stat.S_IMODE(os.stat(tree.root / "hello.txt").st_mode) == 0o640  # the mode is kept
    assert (tree.root / "fresh.txt").read_text() == "fresh"
    assert (tree.root / "sub2" / "deep" / "code.py").read_text() == "def f():\n    return 1\n"
    leftovers = [name for _, _, names in os.walk(tree.root) for name in names if name.endswith(".plainmcp-tmp")]
    assert leftovers == []


async def test_a_server_that_may_write_removes_stale_temporary_files_at_start(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    stale = tree.root / "sub" / ".notes.md.0123456789abcdef.plainmcp-tmp"
    fresh = tree.root / ".hello.txt.fedcba9876543210.plainmcp-tmp"  # a write in progress elsewhere
    other = tree.root / "sub" / ".notes.plainmcp-tmp"  # not a name we make
    for path in (stale, fresh, other):
        path.write_text("partial")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    os.utime(other, (time.time() - 3600, time.time() - 3600))
    async with connect_in_memory(make_server()) as client:  # read-only: never deletes
        await client.ping()
        await anyio.sleep(0.2)
    assert stale.exists()
    async with connect_in_memory(make_server(allow_write=True)) as client:
        await client.ping()
        for _ in range(40):
            if not stale.exists():
                break
            await anyio.sleep(0.05)
    assert not stale.exists()
    assert fresh.exists() and other.exists()


async def test_append_file_adds_at_the_end_and_creates_a_missing_file(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    server = make_server(allow_write=True)
    added = await call(server, "append_file", {"path": "hello.txt", "content": "line 4\n"})
    assert added["structuredContent"] == {
        "path": str(tree.root / "hello.txt"),
        "created": False,
        "bytes": 7,
        "size": 28,
    }
    assert (tree.root / "hello.txt").read_text() == "line 1\nline 2\nline 3\nline 4\n"
    fresh = await call(server, "append_file", {"path": "log.txt", "content_base64": "AAEC/w=="})
    assert fresh["structuredContent"]["created"] is True and (tree.root / "log.txt").read_bytes() == b"\x00\x01\x02\xff"


async def test_append_file_refuses_outward_links_directories_and_fifos(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    server = make_server(allow_write=True)
    outward = tree.link("outward.txt", tree.outside / "secret.txt")
    os.mkfifo(tree.root / "pipe")
    for path in (outward.name, "sub", "pipe"):
        result = await call(server, "append_file", {"path": path, "content": "x"})
        assert result["isError"], path
    assert (tree.outside / "secret.txt").read_text() == SECRET


async def test_write_file_writes_bytes_from_base64_exactly(make_server: Callable[..., Server], tree: Tree) -> None:
    server = make_server(allow_write=True)
    data = bytes(range(256))
    import base64

    done = await call(server, "write_file", {"path": "all.bin", "content_base64": base64.b64encode(data).decode()})
    assert done["structuredContent"]["bytes"] == 256 and (tree.root / "all.bin").read_bytes() == data
    for arguments in ({"content_base64": "not base64!"}, {"content": "x", "content_base64": "eA=="}, {}):
        result = await call(server, "write_file", {"path": "all.bin", **arguments})
        assert result["isError"], arguments
    assert (tree.root / "all.bin").read_bytes() == data
