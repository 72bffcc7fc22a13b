"""Harness for driving a plainmcp server with the official MCP Python SDK as the client, over stdio.

The SDK's ``stdio_client`` spawns the server; its two object streams are wrapped in taps that record
every JSON-RPC message in wire order (``Wire.inbound`` / ``Wire.outbound``, as plain JSON dicts), so
tests can assert what was (and was not) sent, next to what the SDK's typed API returns.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from .sdk_wire import TapRead, TapWrite, Wire

#: Upper bound for starting the server and finishing the initialize handshake.
CONNECT_TIMEOUT = 15.0


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
                TapRead(read_stream, wire),
                TapWrite(write_stream, wire),
                message_handler=wire.on_message,
                **session_options,
            )
            async with session:
                with anyio.fail_after(CONNECT_TIMEOUT):
                    init = await session.initialize()
                yield Connection(session, init, wire, stderr)
