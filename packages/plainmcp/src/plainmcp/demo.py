"""The kit for demo scenes: what a server's scene for ``plainmcp demo`` is written with.

A server shows itself in ``plainmcp demo`` through a *scene*: an async function that takes a
:class:`Stage` and plays a short scripted session with the server, printing each request and what
came back. The server registers it under the ``plainmcp.scenes`` entry-point group::

    [project.entry-points."plainmcp.scenes"]
    shop = "plainmcp_shop.scene:play"

``plainmcp demo`` finds installed servers without knowing their names (the entry points of its own
environment, and of pipx's and uv's venvs and the scripts on PATH, read from their files) and plays
each scene in the server's own interpreter: ``<server python> -m plainmcp.cli.scene NAME``. So a
scene may import its own package (fixtures, a local stand-in for an upstream service) and must print
to stdout only through this kit, so every scene reads alike::

    from plainmcp import demo

    async def play(stage: demo.Stage) -> None:
        async with stage.stdio("shop server on its sample database", ["--log-level", "warning"]) as client:
            await demo.step("tools/call list_products", lambda: client.call_tool("list_products"),
                            demo.flagged(demo.structured))

A step that fails with a JSON-RPC error prints the error and goes on; anything else ends the scene,
and the demo reports it as failed.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from .errors import MCPError

if TYPE_CHECKING:
    from .client import Client

#: Columns for a step's label: the answers line up.
LABEL_WIDTH = 40
#: Seconds a server started over HTTP has to answer ``/health``.
HEALTH_TIMEOUT = 20.0


def short(value: Any, width: int = 100) -> str:
    """``value`` on one line (JSON unless a string), cut to ``width`` characters with ``...``."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " | ")
    return text if len(text) <= width else text[: width - 3] + "..."


def text_of(result: dict[str, Any]) -> str:
    """The text blocks of a tool result, joined (other blocks as ``<type>``)."""
    return " ".join(block.get("text", f"<{block.get('type')}>") for block in result.get("content", []))


def structured(result: dict[str, Any]) -> Any:
    """A tool result's ``structuredContent``, else its text."""
    return result.get("structuredContent", text_of(result))


def flagged(show: Callable[[Any], Any]) -> Callable[[dict[str, Any]], str]:
    """Show a tool result with ``show``, or as ``isError: <its text>`` when the tool reported a failure."""

    def render(result: dict[str, Any]) -> str:
        if result.get("isError"):
            return f"isError: {text_of(result)}"
        return short(show(result), 90)

    return render


def line(label: str, text: str, started: float | None = None, arrow: str = "->") -> None:
    """Print one line of a scene: the label, what came back, and the milliseconds since ``started``
    (a :func:`time.perf_counter` reading) when given."""
    took = "" if started is None else f"  ({(time.perf_counter() - started) * 1000:.1f} ms)"
    print(f"  {label:<{LABEL_WIDTH}} {arrow} {text}{took}")


async def step(label: str, action: Callable[[], Awaitable[Any]], show: Callable[[Any], Any]) -> Any:
    """Run ``action``, print ``label`` and ``show(answer)`` with the time it took; return the answer.

    A JSON-RPC error (:class:`MCPError`) is printed as ``error CODE: message`` and None returned:
    showing how a server refuses is part of a demo. Anything else propagates.
    """
    started = time.perf_counter()
    try:
        value = await action()
    except MCPError as error:
        line(label, f"error {error.code}: {error.message}")
        return None
    line(label, short(show(value)), started)
    return value


@dataclass(frozen=True)
class Stage:
    """What ``plainmcp demo`` hands a scene: the server it found, and how to start it.

    Attributes:
        name: the scene's name (its entry point's name).
        command: the command line that starts this server, as found (absolute).
        using: one line saying which installation that is, printed under each scene's title.
    """

    name: str
    command: tuple[str, ...]
    using: str

    def header(self, title: str) -> None:
        """Print the scene's title and which installation it runs."""
        print(f"\n== {title}")
        print(f"  using {self.using}")

    @asynccontextmanager
    async def stdio(self, title: str, args: list[str], **options: Any) -> AsyncIterator[Client]:
        """Start the server with ``args`` over stdio, print the title and the handshake, and yield
        the connected client (``options`` go to :func:`plainmcp.connect_stdio`). The server stops
        when the block ends."""
        from .stdio import connect_stdio

        self.header(title)
        started = time.perf_counter()
        options.setdefault("protocol_version", "auto")
        async with connect_stdio([*self.command, *args], **options) as client:
            info = client.server_info
            handshake = "server/discover" if client.modern else "initialize"
            print(
                f"  {handshake:<{LABEL_WIDTH}} -> {info.get('name')} {info.get('version')}, protocol "
                f"{client.protocol_version}  ({(time.perf_counter() - started) * 1000:.1f} ms from spawn)"
            )
            yield client

    @asynccontextmanager
    async def http(self, title: str, args: list[str], **options: Any) -> AsyncIterator[Client]:
        """Start the server with ``args`` and ``--transport http`` on a free port of 127.0.0.1, print
        ``title`` (``{url}`` in it becomes the endpoint's URL), wait for ``/health`` and yield a client
        connected over Streamable HTTP (``options`` go to the client: ``protocol_version``, callbacks).
        The server is stopped when the block ends."""
        from .http_client import connect_http

        port = _free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        self.header(title.format(url=url))
        command = [*self.command, *args, "--transport", "http", "--port", str(port)]
        # stdin is not the server's (it serves HTTP); its stdout and stderr are the demo's.
        async with await anyio.open_process(command, stdin=subprocess.DEVNULL, stdout=None, stderr=None) as process:
            try:
                await _wait_for_health(port)
                async with connect_http(url, **options) as client:
                    yield client
            finally:
                process.terminate()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def _wait_for_health(port: int) -> None:
    import httpx

    async with httpx.AsyncClient() as http:
        with anyio.fail_after(HEALTH_TIMEOUT):
            while True:
                try:
                    if (await http.get(f"http://127.0.0.1:{port}/health")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await anyio.sleep(0.1)
