"""Issue 26.12, the write tools' part, against a real server process.

- A recursive delete of a 2,047-deep tree was -32603 (``shutil.rmtree`` recursed into a
  ``RecursionError``): now it is removed iteratively, ping answering meanwhile.
- ``copy_file`` of a deep chain reported success for a partial copy (the walk ran out of
  descriptors and skipped the rest silently): now a tree deeper than ``MAX_COPY_DEPTH`` is refused
  before anything is written, and a copy within it is whole.
- ``append_file`` wrote through a hard link to an inode outside the allowed directories: now a file
  with more than one link is refused (``write_file`` and ``edit_file`` replace the name instead).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_filesystem.writing import MAX_COPY_DEPTH, _remove_tree

from tests.servers.filesystem.conftest import text_of
from tests.servers.filesystem.test_hardening import command, while_pinging

pytestmark = pytest.mark.anyio

DEPTH = 2047


def chain(top: Path, depth: int) -> None:
    """``top/d/d/.../d/bottom.txt``, ``depth`` directories deep (made through descriptors: the path
    is longer than the system takes at once)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        written = os.open("bottom.txt", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(written, b"bottom\n")
        os.close(written)
    finally:
        os.close(fd)


def depth_of(top: Path) -> tuple[int, bool]:
    """How many ``d`` levels are below ``top``, and whether ``bottom.txt`` is at the end."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    levels = 0
    try:
        while "d" in os.listdir(fd):
            child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
            levels += 1
        return levels, "bottom.txt" in os.listdir(fd)
    finally:
        os.close(fd)


async def test_r3_filesystem_deep_trees_copy_whole_or_refused_and_delete_iteratively(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "deep").mkdir(parents=True)
    (root / "shallow").mkdir()
    chain(root / "deep", DEPTH)
    chain(root / "shallow", MAX_COPY_DEPTH - 1)
    try:
        async with connect_stdio(command(root, "--allow-write", "--allow-delete")) as client:
            refused = await client.call_tool("copy_file", {"source": "deep", "destination": "deep-copy"})
            assert refused.get("isError") is True
            assert f"more than {MAX_COPY_DEPTH} levels deep" in text_of(refused)
            assert not (root / "deep-copy").exists()  # nothing half-made

            copied = await client.call_tool("copy_file", {"source": "shallow", "destination": "shallow-copy"})
            assert not copied.get("isError"), text_of(copied)
            assert copied["structuredContent"]["files"] == 1
            assert depth_of(root / "shallow-copy") == (MAX_COPY_DEPTH - 1, True)

            async def delete() -> Any:
                with anyio.fail_after(120):
                    return await client.call_tool("delete_file", {"path": "deep", "recursive": True})

            deleted, slowest = await while_pinging(client, delete)
            assert not deleted.get("isError"), text_of(deleted)
            assert slowest < 1.0
            assert not (root / "deep").exists()
    finally:
        if (root / "deep").exists():  # the system's rmtree recurses too deep for it
            top = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
            try:
                _remove_tree(top, "deep", lambda: None)
            finally:
                os.close(top)


async def test_r3_filesystem_append_refuses_a_hard_link_to_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    os.link(outside / "secret.txt", root / "linked.txt")
    async with connect_stdio(command(root, "--allow-write")) as client:
        refused = await client.call_tool("append_file", {"path": "linked.txt", "content": "evil\n"})
        assert refused.get("isError") is True
        assert "hard link" in text_of(refused)
        assert (outside / "secret.txt").read_text() == "outside\n"
        # write_file replaces the name: the outside file keeps its content, the name gets its own inode.
        written = await client.call_tool("write_file", {"path": "linked.txt", "content": "mine\n"})
        assert not written.get("isError"), text_of(written)
        assert (outside / "secret.txt").read_text() == "outside\n"
        appended = await client.call_tool("append_file", {"path": "linked.txt", "content": "more\n"})
        assert not appended.get("isError"), text_of(appended)
    assert (root / "linked.txt").read_text() == "mine\nmore\n"
