"""The demo's scenes: a scripted session with one server each, printing every step and its answer."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import MCPError

if TYPE_CHECKING:
    from ..client import Client


def _short(value: Any, width: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " | ")
    return text if len(text) <= width else text[: width - 3] + "..."


def _text_of(result: dict[str, Any]) -> str:
    return " ".join(block.get("text", f"<{block.get('type')}>") for block in result.get("content", []))


async def _step(label: str, action: Callable[[], Awaitable[Any]], show: Callable[[Any], str]) -> Any:
    started = time.perf_counter()
    try:
        value = await action()
    except MCPError as error:
        print(f"  {label:<34} -> error {error.code}: {error.message}")
        return None
    print(f"  {label:<34} -> {_short(show(value))}  ({(time.perf_counter() - started) * 1000:.1f} ms)")
    return value


async def _notes_walkthrough(client: Client) -> None:
    await _step("tools/list", client.list_all_tools, lambda tools: ", ".join(t["name"] for t in tools))
    await _step("resources/subscribe note://groceries", lambda: client.subscribe("note://groceries"), lambda _: "ok")
    await _step(
        "tools/call add_note",
        lambda: client.call_tool("add_note", {"title": "groceries", "text": "eggs, flour, milk"}),
        lambda r: r.get("structuredContent"),
    )
    await _step("tools/call add_note (bad title)", lambda: client.call_tool("add_note", {"title": "No!", "text": "x"}), _text_of)
    await _step("tools/call search_notes milk", lambda: client.call_tool("search_notes", {"word": "milk"}), _text_of)
    await _step("resources/read note://groceries", lambda: client.read_resource("note://groceries"), lambda r: r["contents"][0]["text"])
    await _step("resources/read note://nothing", lambda: client.read_resource("note://nothing"), str)
    await _step(
        "completion/complete title 'gr'",
        lambda: client.complete({"type": "ref/prompt", "name": "summarize"}, "title", "gr"),
        lambda c: c["values"],
    )
    await _step("prompts/get summarize", lambda: client.get_prompt("summarize", {"title": "groceries"}), lambda r: r["messages"][-1]["content"]["text"])


async def demo_notes(python: str) -> None:
    from ..client import connect_stdio

    command = [python, "-m", "plainmcp.examples.notes"]
    print(f"\n== notes example server: {' '.join(command[1:])}")
    notifications: list[str] = []

    def seen(notification: Any) -> None:
        params = notification.params or {}
        notifications.append(f"{notification.method} {params.get('uri', '')}".strip())

    started = time.perf_counter()
    async with connect_stdio(command, on_notification=seen) as client:
        info = client.server_info
        print(
            f"  {'initialize':<34} -> {info.get('name')} {info.get('version')}, protocol {client.protocol_version}"
            f"  ({(time.perf_counter() - started) * 1000:.1f} ms from spawn)"
        )
        await _notes_walkthrough(client)
        await anyio.sleep(0.05)
    for line in notifications:
        print(f"  {'notification':<34} <- {line}")


async def demo_everything_http(python: str) -> None:
    """The conformance fixture over Streamable HTTP, spoken in the 2026-07-28 era."""
    import importlib.util
    import socket

    if importlib.util.find_spec("plainmcp_everything") is None:
        return
    from ..http_client import connect_http

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [python, "-m", "plainmcp_everything", "--transport", "http", "--port", str(port), "--log-level", "warning"]
    url = f"http://127.0.0.1:{port}/mcp"
    print(f"\n== everything fixture over Streamable HTTP, 2026-07-28 era: {url}")
    async with await anyio.open_process(command) as process:
        try:
            await _wait_for_health(port)

            async def sampling(params: dict[str, Any]) -> dict[str, Any]:
                return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "demo-model"}

            async with connect_http(url, protocol_version="2026-07-28", sampling=sampling) as client:
                info = client.server_info
                print(f"  {'server/discover':<34} -> {info.get('name')} {info.get('version')}, versions {client.supported_versions}")
                await _step("tools/list", client.list_all_tools, lambda tools: f"{len(tools)} tools")
                await _step("tools/call test_simple_text", lambda: client.call_tool("test_simple_text"), _text_of)
                await _step(
                    "tools/call test_sampling (input round)",
                    lambda: client.call_tool("test_sampling", {"prompt": "Capital of France?"}),
                    _text_of,
                )
                await _step("resources/read test://static-text", lambda: client.read_resource("test://static-text"), lambda r: r["contents"][0]["text"])
        finally:
            process.terminate()


async def _wait_for_health(port: int) -> None:
    import httpx

    async with httpx.AsyncClient() as http:
        with anyio.fail_after(20):
            while True:
                try:
                    if (await http.get(f"http://127.0.0.1:{port}/health")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await anyio.sleep(0.1)
