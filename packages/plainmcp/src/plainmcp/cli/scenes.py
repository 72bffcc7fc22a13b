"""The core's own scene: the notes example server (:mod:`plainmcp.examples.notes`), played in process.

The servers' scenes are theirs (each registers one under the ``plainmcp.scenes`` entry-point group
and plays it in its own interpreter, see :mod:`.scene`); they are written with the same kit,
:mod:`plainmcp.demo`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from .. import demo

if TYPE_CHECKING:
    from ..client import Client


async def _notes_walkthrough(client: Client) -> None:
    await demo.step("tools/list", client.list_all_tools, lambda tools: ", ".join(t["name"] for t in tools))
    await demo.step(
        "resources/subscribe note://groceries", lambda: client.subscribe("note://groceries"), lambda _: "ok"
    )
    await demo.step(
        "tools/call add_note",
        lambda: client.call_tool("add_note", {"title": "groceries", "text": "eggs, flour, milk"}),
        lambda r: r.get("structuredContent"),
    )
    await demo.step(
        "tools/call add_note (bad title)",
        lambda: client.call_tool("add_note", {"title": "No!", "text": "x"}),
        demo.text_of,
    )
    await demo.step(
        "tools/call search_notes milk", lambda: client.call_tool("search_notes", {"word": "milk"}), demo.text_of
    )
    await demo.step(
        "resources/read note://groceries",
        lambda: client.read_resource("note://groceries"),
        lambda r: r["contents"][0]["text"],
    )
    await demo.step("resources/read note://nothing", lambda: client.read_resource("note://nothing"), str)
    await demo.step(
        "completion/complete title 'gr'",
        lambda: client.complete({"type": "ref/prompt", "name": "summarize"}, "title", "gr"),
        lambda c: c["values"],
    )
    await demo.step(
        "prompts/get summarize",
        lambda: client.get_prompt("summarize", {"title": "groceries"}),
        lambda r: r["messages"][-1]["content"]["text"],
    )


async def demo_notes(python: str) -> None:
    """The notes example over stdio with ``python``, ending with the notifications it sent."""
    import time

    from ..stdio import connect_stdio

    command = [python, "-m", "plainmcp.examples.notes"]
    print(f"\n== notes example server: {' '.join(command[1:])}")
    notifications: list[str] = []

    def seen(notification: Any) -> None:
        params = notification.params or {}
        notifications.append(f"{notification.method} {params.get('uri', '')}".strip())

    started = time.perf_counter()
    async with connect_stdio(command, on_notification=seen) as client:
        info = client.server_info
        took = (time.perf_counter() - started) * 1000
        demo.line(
            "initialize",
            f"{info.get('name')} {info.get('version')}, protocol {client.protocol_version}  ({took:.1f} ms from spawn)",
        )
        await _notes_walkthrough(client)
        await anyio.sleep(0.05)
    for line in notifications:
        demo.line("notification", line, arrow="<-")
