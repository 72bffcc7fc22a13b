"""This server's scene for ``plainmcp demo``: read-only on a temporary directory, then a watched file.

Registered under the ``plainmcp.scenes`` entry-point group; ``plainmcp demo`` plays it with this
package's own Python (see :mod:`plainmcp.demo`).
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from plainmcp import Client, demo


async def play(stage: demo.Stage) -> None:
    with tempfile.TemporaryDirectory(prefix="plainmcp-demo-") as folder:
        root = Path(folder)
        (root / "notes.md").write_text("# Notes\n\nBuy milk.\nCall Ada about the demo.\n", encoding="utf-8")
        (root / "todo.txt").write_text("ship the demo\nwrite the README\n", encoding="utf-8")
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    print('demo')\n", encoding="utf-8")
        title = f"filesystem server, read-only, on a temporary directory: {root.name}/"
        async with stage.stdio(title, ["--log-level", "warning", str(root)]) as client:
            await demo.step("tools/list", client.list_all_tools, _read_only_count)
            await demo.step(
                "tools/call list_directory .",
                lambda: client.call_tool("list_directory", {"path": str(root)}),
                demo.flagged(lambda r: {k: demo.structured(r).get(k) for k in ("directories", "files")}),
            )
            await demo.step(
                "tools/call read_text_file notes.md",
                lambda: client.call_tool("read_text_file", {"path": str(root / "notes.md"), "head": 3}),
                demo.flagged(lambda r: demo.structured(r).get("content")),
            )
            await demo.step(
                "tools/call search_content 'demo'",
                lambda: client.call_tool("search_content", {"path": str(root), "query": "demo"}),
                demo.flagged(
                    lambda r: [f"{Path(m['path']).name}:{m['line']}" for m in demo.structured(r).get("matches", [])]
                ),
            )
            await demo.step(
                "tools/call read_text_file /etc/passwd",
                lambda: client.call_tool("read_text_file", {"path": "/etc/passwd"}),
                demo.flagged(demo.text_of),
            )
            await _watch_a_file(client, root / "notes.md")


def _read_only_count(tools: list[dict[str, Any]]) -> str:
    read_only = [t for t in tools if (t.get("annotations") or {}).get("readOnlyHint") is True]
    return f"{len(tools)} tools, {len(read_only)} of them read-only (writes need --allow-write)"


async def _watch_a_file(client: Client, path: Path) -> None:
    """Subscribe to a file, change it on disk, and show the notification the watcher sends."""
    started = time.perf_counter()
    async with client.listen(uris=["file://" + str(path)]) as updates:
        with path.open("a", encoding="utf-8") as file:
            file.write("Water the plants.\n")
        try:
            notification = await updates.next(timeout=5)
            shown = f"{notification.method} {Path((notification.params or {}).get('uri', '')).name}"
        except TimeoutError:
            shown = "no update within 5 s"
    demo.line("subscriptions/listen notes.md + an edit", demo.short(shown), started)
