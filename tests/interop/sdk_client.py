"""Harness for driving a plainmcp server with the official MCP Python SDK as the client, over stdio.

The SDK's ``stdio_client`` spawns the server; its two object streams are wrapped in taps that record
every JSON-RPC message in wire order (``Wire.inbound`` / ``Wire.outbound``, as plain JSON dicts), so
tests can assert what was (and was not) sent, next to what the SDK's typed API returns.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

#: Upper bound for starting the server and finishing the initialize handshake.
CONNECT_TIMEOUT = 15.0


def _as_json(item: SessionMessage | Exception) -> dict[str, Any]:
    if isinstance(item, Exception):
        return {"exception": repr(item)}
    return item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)


@dataclass
class Wire:
    """Everything that crossed the pipe, in order, plus the notifications the SDK surfaced."""

    inbound: list[dict[str, Any]] = field(default_factory=list)
    outbound: list[dict[str, Any]] = field(default_factory=list)
    notifications: list[types.ServerNotification] = field(default_factory=list)
    _changed: anyio.Event = field(default_factory=anyio.Event)

    def _poke(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def on_message(self, message: Any) -> None:
        """The SDK ``message_handler``: server notifications (and transport exceptions)."""
        if not isinstance(message, Exception):
            self.notifications.append(message)
        self._poke()

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

    def responses_to(self, request_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.inbound if "method" not in m and m.get("id") == request_id]


class _TapRead:
    """A read stream that records what it yields."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def receive(self) -> SessionMessage | Exception:
        item = await self._inner.receive()
        self._wire.inbound.append(_as_json(item))
        self._wire._poke()
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
    """A write stream that records what it sends."""

    def __init__(self, inner: Any, wire: Wire) -> None:
        self._inner = inner
        self._wire = wire

    async def send(self, item: SessionMessage) -> None:
        self._wire.outbound.append(_as_json(item))
        self._wire._poke()
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _TapWrite:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()


@dataclass
class Connection:
    session: ClientSession
    init: types.InitializeResult
    wire: Wire
    stderr: Any

    def server_stderr(self) -> str:
        self.stderr.flush()
        self.stderr.seek(0)
        return self.stderr.read()


@asynccontextmanager
async def connect(command: list[str], **session_options: Any) -> AsyncIterator[Connection]:
    """Spawn the server with the SDK's stdio client, run the legacy initialize handshake, yield."""
    wire = Wire()
    params = StdioServerParameters(command=command[0], args=command[1:])
    with tempfile.TemporaryFile(mode="w+", encoding="utf-8") as stderr:
        async with stdio_client(params, errlog=stderr) as (read_stream, write_stream):
            session = ClientSession(
                _TapRead(read_stream, wire),
                _TapWrite(write_stream, wire),
                message_handler=wire.on_message,
                **session_options,
            )
            async with session:
                with anyio.fail_after(CONNECT_TIMEOUT):
                    init = await session.initialize()
                yield Connection(session, init, wire, stderr)
