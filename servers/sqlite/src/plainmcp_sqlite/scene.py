"""This server's scene for ``plainmcp demo``: its bundled sample database, read-only.

Registered under the ``plainmcp.scenes`` entry-point group; ``plainmcp demo`` plays it with this
package's own Python (see :mod:`plainmcp.demo`).
"""

from __future__ import annotations

from typing import Any

from plainmcp import demo


async def play(stage: demo.Stage) -> None:
    title = "sqlite server on its bundled sample database (read-only)"
    async with stage.stdio(title, ["--log-level", "warning"]) as client:
        await demo.step(
            "tools/call list_tables",
            lambda: client.call_tool("list_tables"),
            demo.flagged(lambda r: [t.get("name") for t in demo.structured(r).get("tables", [])]),
        )
        await demo.step(
            "resources/read sqlite://schema",
            lambda: client.read_resource("sqlite://schema"),
            lambda r: r["contents"][0]["text"].strip().splitlines()[0],
        )
        tables = await client.call_tool("list_tables")
        listed: list[dict[str, Any]] = demo.structured(tables).get("tables", [])
        first = listed[0].get("name") if listed else None
        if first:
            await demo.step(
                f"tools/call query ... from {first}",
                lambda: client.call_tool("query", {"sql": f'select * from "{first}" limit 2'}),
                demo.flagged(lambda r: demo.structured(r).get("rows")),
            )
            await demo.step(
                f"tools/call query delete from {first}",
                lambda: client.call_tool("query", {"sql": f'delete from "{first}"'}),
                demo.flagged(demo.text_of),
            )
        await demo.step("prompts/list", client.list_all_prompts, lambda prompts: ", ".join(p["name"] for p in prompts))
