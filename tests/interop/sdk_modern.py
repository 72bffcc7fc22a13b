"""Harness for driving a plainmcp server with the official MCP Python SDK's ``mcp.Client`` in the
2026-07-28 ("modern") era, over stdio.

``TappedStdio`` is a ``Transport`` (what ``mcp.Client`` accepts besides URLs and server objects): it
spawns the server with the SDK's own ``stdio_client`` and wraps the two object streams in taps that
record every JSON-RPC message in wire order (``Wire.inbound`` / ``Wire.outbound``, plain JSON dicts),
so a test can check what crossed the pipe next to what the SDK's typed API returned -- in
particular that the era the SDK settled on really is the modern one.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

#: Upper bound for one whole connection: spawn, era negotiation, the test's exchanges, shutdown.
SESSION_TIMEOUT = 60.0

MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


def _as_json(item: SessionMessage | Exception) -> dict[str, Any]:
    if isinstance(item, Exception):
        return {"exception": repr(item)}
    return item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


@dataclass
class Wire:
    """Everything that crossed the pipe, in order, plus what the SDK surfaced to ``message_handler``."""

    inbound: list[dict[str, Any]] = field(default_factory=list)
    outbound: list[dict[str, Any]] = field(default_factory=list)
    surfaced: list[Any] = field(default_factory=list)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def poke(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def on_message(self, message: Any) -> None:
        """An SDK ``message_handler``: server notifications (and transport exceptions)."""
        self.surfaced.append(message)
        self.poke()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait (bounded) until ``predicate()`` is truthy; return its value."""
        with anyio.fail_after(timeout):
            while not (value := predicate()):
                changed = self._changed
                await changed.wait()
            return value

    def inbound_with(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.inbound if m.get("method") == method]

    def outbound_with(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.outbound if m.get("method") == method]

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.outbound if "method" in m and "id" in m]

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.inbound if "method" not in m and m.get("id") == request_id]

    def response_to(self, request: dict[str, Any]) -> dict[str, Any]:
        (response,) = self.responses_to(request["id"])
        return response

    def last_exchange(self, method: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The last request of ``method`` the SDK sent, and the server's one response to it."""
        request = self.outbound_with(method)[-1]
        return request, self.response_to(request)


class _TapRead:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        self._wire.inbound.append(_as_json(item))
        self._wire.poke()
        return item

    def __aiter__(self) -> _TapRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapRead:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


class _TapWrite:
    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def send(self, item: SessionMessage) -> None:
        self._wire.outbound.append(_as_json(item))
        self._wire.poke()
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapWrite:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


class TappedStdio:
    """A ``mcp.client.Transport``: the SDK's ``stdio_client`` with both streams recorded in ``wire``."""

    def __init__(self, command: list[str], wire: Wire, stderr: Any) -> None:
        self._params = StdioServerParameters(command=command[0], args=command[1:])
        self._wire = wire
        self._stderr = stderr
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> tuple[_TapRead, _TapWrite]:
        self._stack = AsyncExitStack()
        read_stream, write_stream = await self._stack.enter_async_context(
            stdio_client(self._params, errlog=self._stderr)
        )
        return _TapRead(read_stream, self._wire), _TapWrite(write_stream, self._wire)

    async def __aexit__(self, *exc_info: Any) -> bool | None:
        assert self._stack is not None
        return await self._stack.__aexit__(*exc_info)


@dataclass
class Connected:
    client: Client
    wire: Wire
    stderr: Any

    @property
    def session(self) -> Any:
        return self.client.session

    def server_stderr(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read()


@asynccontextmanager
async def connect(command: list[str], *, mode: str = MODERN, **client_options: Any) -> AsyncIterator[Connected]:
    """Spawn the server with the SDK's stdio transport and enter an ``mcp.Client`` in ``mode``.

    The whole life of the connection (spawn, era negotiation, the test body, shutdown) is bounded
    by ``SESSION_TIMEOUT``; tests bound their individual waits more tightly. The SDK's response
    cache is off unless asked for (``cache=...``): tests assert on the wire, and a cached answer
    would not be on it.
    """
    wire = Wire()
    client_options.setdefault("cache", None)
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stderr, anyio.fail_after(SESSION_TIMEOUT):
        client = Client(
            TappedStdio(command, wire, stderr), mode=mode, message_handler=wire.on_message, **client_options
        )
        async with client:
            yield Connected(client, wire, stderr)
