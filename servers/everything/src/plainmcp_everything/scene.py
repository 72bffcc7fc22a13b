"""This fixture's scene for ``plainmcp demo``: Streamable HTTP, spoken in the 2026-07-28 era.

Registered under the ``plainmcp.scenes`` entry-point group; ``plainmcp demo`` plays it with this
package's own Python (see :mod:`plainmcp.demo`).
"""

from __future__ import annotations

from typing import Any

from plainmcp import demo


async def _sampling(params: dict[str, Any]) -> dict[str, Any]:
    """The demo's stand-in for a model: the input round of test_sampling gets a fixed answer."""
    return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "demo-model"}


async def play(stage: demo.Stage) -> None:
    title = "everything fixture over Streamable HTTP, 2026-07-28 era: {url}"
    async with stage.http(
        title, ["--log-level", "warning"], protocol_version="2026-07-28", sampling=_sampling
    ) as client:
        info = client.server_info
        demo.line("server/discover", f"{info.get('name')} {info.get('version')}, versions {client.supported_versions}")
        await demo.step("tools/list", client.list_all_tools, lambda tools: f"{len(tools)} tools")
        await demo.step("tools/call test_simple_text", lambda: client.call_tool("test_simple_text"), demo.text_of)
        await demo.step(
            "tools/call test_sampling (input round)",
            lambda: client.call_tool("test_sampling", {"prompt": "Capital of France?"}),
            demo.text_of,
        )
        await demo.step(
            "resources/read test://static-text",
            lambda: client.read_resource("test://static-text"),
            lambda r: r["contents"][0]["text"],
        )
