"""Issue 27.1: file names that are not valid UTF-8, through the official Python SDK client over stdio.

The tree is the issue's own: ``mkdir d; printf x > $'d/caf\\xe9.txt'``. Before the fix the server wrote
the name as a lone surrogate (``"caf\\udce9.txt"``): the SDK client could not parse the answer and its
call never returned; ``search_content`` failed with a codec error; the name could not be read back.
Now such a name is written ``bytes:caf%E9.txt`` (see servers/filesystem/docs/security.md) and every
tool takes that form back.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.interop.sdk_client import connect

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

#: Every call here is instant; a call that never returns is the bug.
QUICK = 10.0
WIRE = "bytes:caf%E9.txt"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "d").mkdir()
    (tmp_path / "d").joinpath(os.fsdecode(b"caf\xe9.txt")).write_bytes(b"x")
    # A second name that reads the same with U+FFFD: the wire form must tell them apart.
    (tmp_path / "d").joinpath(os.fsdecode(b"caf\xe8.txt")).write_bytes(b"y")
    # A valid name that looks like the escaped form must still be reachable, as itself.
    (tmp_path / "d" / "bytes:caf%E9.txt").write_bytes(b"literal")
    return tmp_path


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result
    found: dict[str, Any] = result.structured_content
    return found


def text(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def raw_messages(conn: Any) -> list[str]:
    """Every server message as JSON text, as it went over the wire (re-serialized strictly)."""
    return [json.dumps(message, ensure_ascii=False) for message in conn.wire.inbound]


async def test_r3_filesystem_undecodable_names_list_search_and_read_back_through_the_sdk(tree: Path) -> None:
    command = [sys.executable, "-m", "plainmcp_filesystem", str(tree), "--no-watch"]
    async with connect(command) as conn:
        session = conn.session
        with anyio.fail_after(QUICK):
            listed = structured(await session.call_tool("list_directory", {"path": "d"}))
        assert sorted(listed["files"]) == sorted(["bytes:caf%E8.txt", WIRE, "bytes:bytes:caf%25E9.txt"])
        assert "bytes:caf%E9.txt  (caf\ufffd.txt)" in text(await session.call_tool("list_directory", {"path": "d"}))

        with anyio.fail_after(QUICK):
            tree_result = structured(await session.call_tool("directory_tree", {"path": "."}))
        names = {child["name"] for child in tree_result["tree"][0]["children"]}
        assert WIRE in names and "bytes:caf%E8.txt" in names

        with anyio.fail_after(QUICK):
            found = structured(await session.call_tool("search_files", {"path": ".", "pattern": "caf*"}))
        assert str(tree / "d" / WIRE) in found["matches"]

        for regex in (False, True):
            with anyio.fail_after(QUICK):
                grep = structured(
                    await session.call_tool("search_content", {"path": ".", "query": "x", "regex": regex})
                )
            assert str(tree / "d" / WIRE) in {match["path"] for match in grep["matches"]}, regex

        # Read back: the listed name joined to its directory, and the full path search_files gave.
        with anyio.fail_after(QUICK):
            first = structured(await session.call_tool("read_text_file", {"path": "d/" + WIRE}))
            second = structured(
                await session.call_tool("read_text_file", {"path": str(tree / "d" / "bytes:caf%E8.txt")})
            )
            literal = structured(await session.call_tool("read_text_file", {"path": "d/bytes:bytes:caf%25E9.txt"}))
            info = structured(await session.call_tool("get_file_info", {"path": "d/" + WIRE}))
        assert (first["content"], second["content"], literal["content"]) == ("x", "y", "literal")
        assert info["path"] == str(tree / "d" / WIRE)

        # Nothing that went over the wire holds a lone surrogate: it is all valid UTF-8.
        for message in raw_messages(conn):
            message.encode("utf-8")


async def test_r3_filesystem_bytes_names_that_name_no_file_are_tool_errors(tree: Path) -> None:
    command = [sys.executable, "-m", "plainmcp_filesystem", str(tree), "--no-watch"]
    async with connect(command) as conn:
        for path in ("d/bytes:..%2F..%2Fetc", "bytes:..", "d/bytes:%00", "d/bytes:"):
            with anyio.fail_after(QUICK):
                refused = await conn.session.call_tool("read_text_file", {"path": path})
            assert refused.is_error, path
            assert "bytes:" in text(refused), (path, text(refused))
