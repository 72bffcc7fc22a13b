"""The operations of issue 19 (append, binary writes, directory sizes) through a real process, in both eras."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

MODERN = "2026-07-28"


@pytest.mark.anyio
@pytest.mark.parametrize("version", [None, MODERN], ids=["legacy", "modern"])
async def test_append_binary_write_and_directory_sizes(tmp_path: Path, version: str | None) -> None:
    (tmp_path / "data").mkdir()
    options = {"protocol_version": version} if version else {}
    argv = [sys.executable, "-m", "plainmcp_filesystem", str(tmp_path), "--allow-write", "--no-watch"]
    payload = bytes(range(256)) * 4
    with anyio.fail_after(30):
        async with connect_stdio(argv, stderr="discard", **options) as client:
            tools = {tool["name"]: tool for tool in await client.list_all_tools()}
            assert tools["append_file"]["annotations"]["destructiveHint"] is False
            assert tools["append_file"]["annotations"]["idempotentHint"] is False
            written = await client.call_tool(
                "write_file", {"path": "data/blob.bin", "content_base64": base64.b64encode(payload).decode()}
            )
            assert written["structuredContent"]["bytes"] == 1024
            for line in ("first\n", "second\n"):
                await client.call_tool("append_file", {"path": "data/log.txt", "content": line})
            sizes = await client.call_tool("list_directory", {"path": ".", "dirSizes": True})
            assert sizes["structuredContent"]["directorySizes"] == {"data": 1024 + len("first\nsecond\n")}
    assert (tmp_path / "data" / "blob.bin").read_bytes() == payload
    assert (tmp_path / "data" / "log.txt").read_text() == "first\nsecond\n"
