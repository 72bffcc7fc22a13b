"""This server's scene for ``plainmcp demo``: its bundled prompt library, with completion.

Registered under the ``plainmcp.scenes`` entry-point group; ``plainmcp demo`` plays it with this
package's own Python (see :mod:`plainmcp.demo`).
"""

from __future__ import annotations

from plainmcp import demo


async def play(stage: demo.Stage) -> None:
    async with stage.stdio("prompts server on its bundled library", ["--log-level", "warning", "--no-watch"]) as client:
        await demo.step("prompts/list", client.list_all_prompts, lambda prompts: ", ".join(p["name"] for p in prompts))
        await demo.step(
            "completion/complete explain-code audience 'b'",
            lambda: client.complete({"type": "ref/prompt", "name": "explain-code"}, "audience", "b"),
            lambda c: c["values"],
        )
        await demo.step(
            "prompts/get explain-code",
            lambda: client.get_prompt("explain-code", {"code": "print(sum(range(10)))", "audience": "beginner"}),
            lambda r: r["messages"][0]["content"].get("text", ""),
        )
        await demo.step("prompts/get explain-code (no code)", lambda: client.get_prompt("explain-code", {}), str)
