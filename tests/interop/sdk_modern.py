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
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from .sdk_wire import TapRead, TapWrite, Wire

#: Upper bound for one whole connection: spawn, era negotiation, the test's exchanges, shutdown.
SESSION_TIMEOUT = 60.0

MODERN = "2026-07-28"
PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


class TappedStdio:
    """A ``mcp.client.Transport``: the SDK's ``stdio_client`` with both streams recorded in ``wire``."""

    def __init__(self, command: list[str], wire: Wire, stderr: Any) -> None:
        self._params = StdioServerParameters(command=command[0], args=command[1:])
        self._wire = wire
        self._stderr = stderr
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> tuple[TapRead, TapWrite]:
        self._stack = AsyncExitStack()
        read_stream, write_stream = await self._stack.enter_async_context(
            stdio_client(self._params, errlog=self._stderr)
        )
        return TapRead(read_stream, self._wire), TapWrite(write_stream, self._wire)

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
