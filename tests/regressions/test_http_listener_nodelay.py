"""Regression: ``run_http`` binds its own listening socket (``http_app.listen``), created with
protocol 0; asyncio sets TCP_NODELAY only on accepted sockets whose protocol is TCP, so every
response on a kept-alive connection waited ~40 ms for Nagle and the client's delayed ACK. The
listener now says IPPROTO_TCP, and accepted connections get TCP_NODELAY."""

from __future__ import annotations

import asyncio
import socket

from plainmcp.http.app import listen


def test_connections_accepted_on_the_listener_have_tcp_nodelay() -> None:
    async def main() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        listener = listen("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            _reader, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
            try:
                return await asyncio.wait_for(accepted, 5.0)
            finally:
                writer.close()

    assert asyncio.run(main()) != 0
