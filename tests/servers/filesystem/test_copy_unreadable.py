"""copy_file of a tree with parts the server cannot read copies nothing and says what (issue 26.12: a
partial copy was reported as a success). Read as the unprivileged user ``nobody`` (root reads anything),
with the locked tree of test_skipped_entries; the destination is a directory nobody may write to."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.config import Config
from plainmcp_filesystem.server import build_server

from .conftest import text_of
from .test_skipped_entries import _really_refused, as_nobody, locked_tree  # noqa: F401  (the fixture)


def test_a_tree_with_unreadable_parts_is_not_copied_at_all(locked_tree: Path) -> None:  # noqa: F811
    target_base = Path(tempfile.mkdtemp(prefix="plainmcp-copy-"))
    target_base.chmod(0o777)
    try:
        server = build_server(Config(roots=(str(locked_tree), str(target_base)), watch=False, allow_write=True))

        async def work() -> dict[str, Any]:
            _really_refused(locked_tree)
            async with connect_in_memory(server) as client:
                return await client.call_tool(
                    "copy_file", {"source": str(locked_tree), "destination": str(target_base / "copy")}
                )

        answer = as_nobody(work)
        assert answer["isError"] is True
        assert "Nothing was copied: 2 entries could not be read (permission denied: 2)" in text_of(answer)
        assert not (target_base / "copy").exists()
    finally:
        shutil.rmtree(target_base)
