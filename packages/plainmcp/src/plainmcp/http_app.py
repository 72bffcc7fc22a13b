"""The HTTP application: the MCP endpoints behind one ASGI app, and running it with uvicorn.

``/mcp`` is Streamable HTTP (both eras); ``/sse`` and ``/messages`` are the 2024-11-05 HTTP+SSE
transport, kept for old clients as the specification's backwards-compatibility section recommends;
``/health`` answers liveness probes. Every MCP path checks ``Host`` and ``Origin`` first.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import Any

from .asgi import HostPolicy, Receive, Scope, Send, respond, respond_json
from .legacy_sse import LegacySSE
from .streamable_http import StreamableHTTP

logger = logging.getLogger(__name__)


class MCPApp:
    """ASGI application serving one :class:`~plainmcp.Server` over HTTP.

    It handles the ASGI lifespan itself. Mounted inside another application that does not pass
    lifespan events on, wrap that application's lifespan in ``async with app.running():``.

    Args:
        streamable: serve Streamable HTTP at ``path``.
        legacy_sse: serve the HTTP+SSE transport at ``sse_path`` and ``messages_path``.
        allowed_hosts, allowed_origins: names beyond loopback to accept in ``Host`` / ``Origin``.
    """

    def __init__(
        self,
        server: Any,
        *,
        path: str = "/mcp",
        streamable: bool = True,
        legacy_sse: bool = True,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int = 4 * 1024 * 1024,
        **options: Any,
    ) -> None:
        self.server = server
        self.path = path
        self.hosts = HostPolicy(allowed_hosts, allowed_origins)
        self.streamable = StreamableHTTP(server, max_body_bytes=max_body_bytes, **options) if streamable else None
        self.legacy = (
            LegacySSE(server, sse_path=sse_path, messages_path=messages_path, max_body_bytes=max_body_bytes)
            if legacy_sse
            else None
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        if self.streamable is None:
            yield
            return
        async with self.streamable.running():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path = scope["path"]
        if path == "/health" and scope["method"] == "GET":
            await respond_json(send, 200, {"status": "ok", "server": self.server.name, "version": self.server.version})
            return
        if await self.hosts.reject(scope, send):
            return
        if self.streamable is not None and path == self.path:
            await self.streamable(scope, receive, send)
        elif self.legacy is not None and self.legacy.handles(path):
            await self.legacy(scope, receive, send)
        else:
            await respond(send, 404, b"Not Found", content_type="text/plain")

    def begin_shutdown(self) -> None:
        """Close long-lived streams gracefully (the runner calls this before draining)."""
        if self.streamable is not None:
            self.streamable.begin_shutdown()
        if self.legacy is not None:
            self.legacy.begin_shutdown()

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        async with self.running():
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        await send({"type": "lifespan.shutdown.complete"})


def run_http(
    server: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    transport: str = "http",
    certfile: str | None = None,
    keyfile: str | None = None,
    **options: Any,
) -> None:
    """Serve over HTTP until SIGTERM/SIGINT (blocking). ``transport="sse"`` serves only the
    2024-11-05 HTTP+SSE endpoints; ``"http"`` serves Streamable HTTP and those endpoints too."""
    import uvicorn

    app = MCPApp(server, streamable=transport == "http", **options)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_config=None,  # our logging set-up (stderr) stays in charge
        access_log=False,
        timeout_graceful_shutdown=3,
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
    )
    scheme = "https" if certfile else "http"
    endpoint = app.path if transport == "http" else "/sse"
    logger.info("listening on %s://%s:%d%s", scheme, host, port, endpoint)

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # uvicorn waits for open connections before the lifespan shutdown: end our long-lived
            # streams first, so they close with their final messages instead of being cut off.
            app.begin_shutdown()
            await super().shutdown(sockets)

    _Server(config).run()
