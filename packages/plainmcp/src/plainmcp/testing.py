"""The in-memory transport: a server and a client in one event loop, for tests.

Messages cross through the real serializer and parser, so what passes here would pass on a wire.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from .client import Client, open_client
from .connection import ServerConnection
from .framing import frame
from .jsonrpc import Decoded, decode
from .session import Outbound

if TYPE_CHECKING:
    from .server import Server


async def _relay(source: ObjectReceiveStream[Outbound], sink: ObjectSendStream[Decoded]) -> None:
    async with source, sink:
        async for outbound in source:
            data = frame(outbound.message)
            if data:
                try:
                    await sink.send(decode(data))
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return  # the receiving side has gone, as a peer's process may exit mid-message


@asynccontextmanager
async def memory_pair() -> AsyncIterator[
    tuple[
        tuple[ObjectReceiveStream[Decoded], ObjectSendStream[Outbound]],
        tuple[ObjectReceiveStream[Decoded], ObjectSendStream[Outbound]],
    ]
]:
    """Two stream pairs, (server side, client side), joined through serialization."""
    to_server_out, to_server_in = anyio.create_memory_object_stream[Outbound](64)
    server_read_send, server_read = anyio.create_memory_object_stream[Decoded](64)
    to_client_out, to_client_in = anyio.create_memory_object_stream[Outbound](64)
    client_read_send, client_read = anyio.create_memory_object_stream[Decoded](64)
    async with anyio.create_task_group() as task_group:
        task_group.start_soon(_relay, to_server_in, server_read_send)
        task_group.start_soon(_relay, to_client_in, client_read_send)
        yield (server_read, to_client_out), (client_read, to_server_out)
        task_group.cancel_scope.cancel()


@asynccontextmanager
async def connect_in_memory(server: Server, *, initialize: bool = True, **options: Any) -> AsyncIterator[Client]:
    """Serve ``server`` in this event loop and yield a :class:`Client` connected to it."""
    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        connection = ServerConnection(server, server_read, server_write)
        async with server.running(), anyio.create_task_group() as task_group:
            task_group.start_soon(connection.run)
            async with open_client(client_read, client_write, initialize=initialize, **options) as client:
                client.server_connection = connection  # type: ignore[attr-defined]  # for tests, not Client's API
                client.transport = "memory"
                yield client
            task_group.cancel_scope.cancel()
