"""The demo's scenes: a scripted session with one server each, printing every step and its answer."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from ..errors import MCPError

if TYPE_CHECKING:
    from ..client import Client
    from .locate import Found


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
        print(f"  {label:<40} -> error {error.code}: {error.message}")
        return None
    print(f"  {label:<40} -> {_short(show(value))}  ({(time.perf_counter() - started) * 1000:.1f} ms)")
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
            f"  {'initialize':<40} -> {info.get('name')} {info.get('version')}, protocol {client.protocol_version}"
            f"  ({(time.perf_counter() - started) * 1000:.1f} ms from spawn)"
        )
        await _notes_walkthrough(client)
        await anyio.sleep(0.05)
    for line in notifications:
        print(f"  {'notification':<40} <- {line}")


async def demo_everything_http(found: Found) -> None:
    """The conformance fixture over Streamable HTTP, spoken in the 2026-07-28 era."""
    import socket

    from ..http_client import connect_http

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [*found.command, "--transport", "http", "--port", str(port), "--log-level", "warning"]
    url = f"http://127.0.0.1:{port}/mcp"
    print(f"\n== everything fixture over Streamable HTTP, 2026-07-28 era: {url}")
    _using(found)
    async with await anyio.open_process(command) as process:
        try:
            await _wait_for_health(port)

            async def sampling(params: dict[str, Any]) -> dict[str, Any]:
                return {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "demo-model"}

            async with connect_http(url, protocol_version="2026-07-28", sampling=sampling) as client:
                info = client.server_info
                print(f"  {'server/discover':<40} -> {info.get('name')} {info.get('version')}, versions {client.supported_versions}")
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


# ------------------------------------------------------------------------- the project's servers


def _using(found: Found) -> None:
    print(f"  using {found.describe()}")


@asynccontextmanager
async def _stdio_scene(title: str, found: Found, args: list[str], **options: Any) -> AsyncIterator[Client]:
    """Start the found server with ``args`` over stdio, print the header, which server it is and the
    handshake, yield the client."""
    from ..client import connect_stdio

    command = [*found.command, *args]
    print(f"\n== {title}")
    _using(found)
    started = time.perf_counter()
    async with connect_stdio(command, protocol_version=options.pop("protocol_version", "auto"), **options) as client:
        info = client.server_info
        handshake = "server/discover" if client.modern else "initialize"
        print(
            f"  {handshake:<40} -> {info.get('name')} {info.get('version')}, protocol {client.protocol_version}"
            f"  ({(time.perf_counter() - started) * 1000:.1f} ms from spawn)"
        )
        yield client


def _structured(result: dict[str, Any]) -> Any:
    return result.get("structuredContent", _text_of(result))


def _flagged(show: Callable[[Any], Any]) -> Callable[[dict[str, Any]], str]:
    """Show a tool result, marked when the tool reported a failure (isError)."""

    def render(result: dict[str, Any]) -> str:
        text = _short(show(result), 90)
        return f"isError: {_text_of(result)}" if result.get("isError") else text

    return render


async def demo_filesystem(found: Found) -> None:
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory(prefix="plainmcp-demo-") as folder:
        root = Path(folder)
        (root / "notes.md").write_text("# Notes\n\nBuy milk.\nCall Ada about the demo.\n", encoding="utf-8")
        (root / "todo.txt").write_text("ship the demo\nwrite the README\n", encoding="utf-8")
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text("def main():\n    print('demo')\n", encoding="utf-8")
        args = ["--log-level", "warning", str(root)]
        title = f"filesystem server, read-only, on a temporary directory: {root.name}/"
        async with _stdio_scene(title, found, args) as client:
            await _step("tools/list", client.list_all_tools, _read_only_count)
            await _step("tools/call list_directory .", lambda: client.call_tool("list_directory", {"path": str(root)}),
                        _flagged(lambda r: {k: _structured(r).get(k) for k in ("directories", "files")}))
            await _step("tools/call read_text_file notes.md",
                        lambda: client.call_tool("read_text_file", {"path": str(root / "notes.md"), "head": 3}),
                        _flagged(lambda r: _structured(r).get("content")))
            await _step("tools/call search_content 'demo'",
                        lambda: client.call_tool("search_content", {"path": str(root), "query": "demo"}),
                        _flagged(lambda r: [f"{Path(m['path']).name}:{m['line']}" for m in _structured(r).get("matches", [])]))
            await _step("tools/call read_text_file /etc/passwd",
                        lambda: client.call_tool("read_text_file", {"path": "/etc/passwd"}), _flagged(_text_of))
            await _watch_a_file(client, root / "notes.md")


def _read_only_count(tools: list[dict[str, Any]]) -> str:
    read_only = [t for t in tools if (t.get("annotations") or {}).get("readOnlyHint") is True]
    return f"{len(tools)} tools, {len(read_only)} of them read-only (writes need --allow-write)"


async def _watch_a_file(client: Client, path: Any) -> None:
    """Subscribe to a file, change it on disk, and show the notification the watcher sends."""
    uri = "file://" + str(path)
    started = time.perf_counter()
    async with client.listen(uris=[uri]) as updates:
        with path.open("a", encoding="utf-8") as file:
            file.write("Water the plants.\n")
        try:
            notification = await updates.next(timeout=5)
            shown = f"{notification.method} {Path(notification.params['uri']).name}"
        except TimeoutError:
            shown = "no update within 5 s"
    print(f"  {'subscriptions/listen notes.md + an edit':<40} -> {_short(shown)}  ({(time.perf_counter() - started) * 1000:.1f} ms)")


async def demo_sqlite(found: Found) -> None:
    args = ["--log-level", "warning"]
    async with _stdio_scene("sqlite server on its bundled sample database (read-only)", found, args) as client:
        await _step("tools/call list_tables", lambda: client.call_tool("list_tables"),
                    _flagged(lambda r: [t.get("name") for t in _structured(r).get("tables", [])]))
        await _step("resources/read sqlite://schema", lambda: client.read_resource("sqlite://schema"),
                    lambda r: r["contents"][0]["text"].strip().splitlines()[0])
        tables = await client.call_tool("list_tables")
        first = next(iter(_structured(tables).get("tables", [])), {}).get("name")
        if first:
            await _step(f"tools/call query ... from {first}",
                        lambda: client.call_tool("query", {"sql": f'select * from "{first}" limit 2'}),
                        _flagged(lambda r: _structured(r).get("rows")))
            await _step(f"tools/call query delete from {first}",
                        lambda: client.call_tool("query", {"sql": f'delete from "{first}"'}), _flagged(_text_of))
        await _step("prompts/list", client.list_all_prompts, lambda prompts: ", ".join(p["name"] for p in prompts))


async def demo_prompts(found: Found) -> None:
    args = ["--log-level", "warning", "--no-watch"]
    async with _stdio_scene("prompts server on its bundled library", found, args) as client:
        await _step("prompts/list", client.list_all_prompts, lambda prompts: ", ".join(p["name"] for p in prompts))
        await _step("completion/complete explain-code audience 'b'",
                    lambda: client.complete({"type": "ref/prompt", "name": "explain-code"}, "audience", "b"),
                    lambda c: c["values"])
        await _step("prompts/get explain-code",
                    lambda: client.get_prompt("explain-code", {"code": "print(sum(range(10)))", "audience": "beginner"}),
                    lambda r: r["messages"][0]["content"].get("text", ""))
        await _step("prompts/get explain-code (no code)", lambda: client.get_prompt("explain-code", {}), str)


async def demo_weather(found: Found) -> None:
    import subprocess

    if found.python is None:
        # The stand-in is a module of the weather package: it runs with the server's own Python.
        raise RuntimeError(f"cannot tell which Python runs {found.command[0]}, so its local stand-in cannot start")
    standin = await anyio.open_process([found.python, "-m", "plainmcp_weather.standin", "--port", "0"],
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        assert standin.stdout is not None
        with anyio.fail_after(10):
            first = (await standin.stdout.receive()).decode("utf-8", "replace")
        url = first.strip().rsplit(" ", 1)[-1]
        args = ["--log-level", "warning", "--geocoding-url", url, "--forecast-url", url, "--nws-url", url]
        async with _stdio_scene(f"weather server against its local stand-in at {url}", found, args) as client:
            await _step("tools/call search_locations Portland",
                        lambda: client.call_tool("search_locations", {"name": "Portland"}),
                        _flagged(lambda r: [f"{p.get('name')}, {p.get('region') or p.get('country')}"
                                            for p in _structured(r).get("results", [])]))
            await _step("tools/call get_current_weather Paris",
                        lambda: client.call_tool("get_current_weather", {"location": "Paris, France"}),
                        _flagged(lambda r: _text_of(r).splitlines()[0] if _text_of(r) else _structured(r)))
            await _step("tools/call get_forecast Tokyo 3 days",
                        lambda: client.call_tool("get_forecast", {"location": "Tokyo", "days": 3}),
                        _flagged(lambda r: _text_of(r)))
            await _step("tools/call get_alerts CA", lambda: client.call_tool("get_alerts", {"state": "CA"}),
                        _flagged(lambda r: _text_of(r)))
            await _step("tools/call get_forecast Atlantis",
                        lambda: client.call_tool("get_forecast", {"location": "Atlantis"}), _flagged(_text_of))
    finally:
        standin.terminate()
        with anyio.move_on_after(5, shield=True):
            await standin.wait()


#: (server, the scene) in the order the demo plays them (after the notes example, which is part of
#: the core): each scene gets the server as :func:`.locate.locate` found it.
SERVER_SCENES: tuple[tuple[str, Callable[[Found], Awaitable[None]]], ...] = (
    ("filesystem", demo_filesystem),
    ("sqlite", demo_sqlite),
    ("prompts", demo_prompts),
    ("weather", demo_weather),
    ("everything", demo_everything_http),
)


def describe(error: BaseException) -> str:
    """One line for what broke a scene (the single error inside task groups' wrapping)."""
    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return f"{error.code}: {error.message}"
    return str(error) or type(error).__name__
