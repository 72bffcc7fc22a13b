"""Issue 26.3: one ``edit_file`` call of chained ``replace_all`` edits grew a 1-byte file's text
geometrically (to 2 GiB, even with ``dryRun``). Now the size an edit would produce is computed
before it is built, and a diff too large to show is not built either.

Against a real server process: its peak RSS is read from ``/proc`` and a ping must be answered
within a second while the attack runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_filesystem.editing import MAX_EDITED_CHARS

from tests.proc_status import memory_mib
from tests.servers.filesystem.conftest import text_of
from tests.servers.filesystem.test_hardening import MAX_RSS_MIB, command, while_pinging

pytestmark = pytest.mark.anyio

DOUBLE = {"oldText": "a", "newText": "aa", "replace_all": True}


async def test_r3_filesystem_edit_chained_replace_all_is_refused_before_it_grows(tmp_path: Path) -> None:
    (tmp_path / "one.txt").write_bytes(b"a")
    (tmp_path / "crlf.txt").write_bytes(b"a\r\n")
    attacks: list[dict[str, Any]] = [
        {"path": "one.txt", "edits": [DOUBLE] * 40, "dryRun": True},  # 2^40 characters
        {"path": "one.txt", "edits": [DOUBLE] * 40},
        # Each "\n" of newText becomes "\r\n" in a CRLF file: the bound counts that too.
        {"path": "crlf.txt", "edits": [{"oldText": "a", "newText": "a\na", "replace_all": True}] * 40},
        # One edit whose single replacement is too large (a long newText is cheap to send).
        {
            "path": "one.txt",
            "edits": [{"oldText": "a", "newText": "\n" * 600_000, "replace_all": True}]
            + [{"oldText": "\n", "newText": "\n" * 20, "replace_all": True}],
        },
    ]
    async with connect_stdio(command(tmp_path, "--allow-write")) as client:
        pid = client.process.pid
        for arguments in attacks:

            async def attack(arguments: dict[str, Any] = arguments) -> Any:
                with anyio.fail_after(60):
                    return await client.call_tool("edit_file", arguments)

            refused, slowest = await while_pinging(client, attack)
            assert refused.get("isError") is True, arguments["path"]
            assert f"more than the {MAX_EDITED_CHARS}" in text_of(refused), text_of(refused)
            assert slowest < 1.0
        peak = memory_mib(pid)["VmHWM"]
        # Nothing was applied: all or none.
        assert (tmp_path / "one.txt").read_bytes() == b"a"
        assert (tmp_path / "crlf.txt").read_bytes() == b"a\r\n"
        # Growth that stays within the bound still applies (2^20 characters).
        grown = await client.call_tool("edit_file", {"path": "one.txt", "edits": [DOUBLE] * 20})
        assert not grown.get("isError"), text_of(grown)
    assert (tmp_path / "one.txt").read_bytes() == b"a" * 2**20
    assert peak < MAX_RSS_MIB, f"peak RSS {peak} MiB"


async def test_r3_filesystem_edit_huge_diff_is_not_built_and_the_edit_applies(tmp_path: Path) -> None:
    # 3 MiB of one-character lines: every line changes, the diff would hold 2 million lines.
    (tmp_path / "lines.txt").write_bytes(b"a\n" * 1_500_000)
    (tmp_path / "big.txt").write_bytes(b"x\n" * 1_000_000 + b"needle\n" + b"y\n" * 1_000_000)
    async with connect_stdio(command(tmp_path, "--allow-write")) as client:
        pid = client.process.pid

        async def edit() -> Any:
            with anyio.fail_after(60):
                return await client.call_tool(
                    "edit_file", {"path": "lines.txt", "edits": [{"oldText": "a", "newText": "b", "replace_all": True}]}
                )

        edited, slowest = await while_pinging(client, edit)
        assert not edited.get("isError"), text_of(edited)
        assert "The diff is not shown" in text_of(edited)
        assert edited["structuredContent"]["diff"] == "" and edited["structuredContent"]["applied"] is True
        assert slowest < 1.0
        # One line changed in the middle of a 4 MB file: the diff is that line, numbered where it is.
        one = await client.call_tool(
            "edit_file", {"path": "big.txt", "edits": [{"oldText": "needle", "newText": "pin"}], "dryRun": True}
        )
        diff = one["structuredContent"]["diff"]
        assert "@@ -999998,7 +999998,7 @@" in diff and "-needle\n+pin\n" in diff, diff
        peak = memory_mib(pid)["VmHWM"]
    assert (tmp_path / "lines.txt").read_bytes() == b"b\n" * 1_500_000
    assert peak < MAX_RSS_MIB, f"peak RSS {peak} MiB"
