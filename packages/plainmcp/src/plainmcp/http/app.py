"""The HTTP application: the MCP endpoints behind one ASGI app, and running it with uvicorn.

``/mcp`` is Streamable HTTP (both eras); ``/sse`` and ``/messages`` are the 2024-11-05 HTTP+SSE
transport, kept for old clients as the specification's backwards-compatibility section recommends;
``/mcp/server-info`` and ``/mcp/call`` are the plain JSON-RPC gateway; ``/metrics`` is Prometheus
text; ``/health`` answers liveness probes; ``/.well-known/oauth-protected-resource`` is the
RFC 9728 document when an authorization server is configured.

Every path but ``/health`` checks ``Host`` and ``Origin``; with authentication configured, every
path but ``/health`` and the metadata document needs a bearer token. Every response carries the
request id (``X-Request-ID``, ``X-MCP-Request-ID``), and every request ends in one log line.
"""

from __future__ import annotations

import gc
import ipaddress
import logging
import socket
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import anyio

from .asgi import ASGIApp, HostPolicy, Receive, Scope, Send, principal_subject, respond, respond_json
from .auth import WELL_KNOWN_PRM, BearerAuth
from .body_deadlines import BodyDeadlines
from .exchange import Exchange, RequestIds
from .gateway import Gateway
from .legacy_sse import LegacySSE
from .metrics import CONTENT_TYPE
from .streamable import StreamableHTTP
from .telemetry import HTTPMetrics

if TYPE_CHECKING:
    from ..server import Server
    from .connection_guard import ConnectionGuard

logger = logging.getLogger(__name__)

HEALTH_PATH = "/health"
METRICS_PATH = "/metrics"


class MCPApp:
    """ASGI application serving one :class:`~plainmcp.Server` over HTTP.

    It handles the ASGI lifespan itself. Mounted inside another application that does not pass
    lifespan events on, wrap that application's lifespan in ``async with app.running():``.

    Args:
        streamable: serve Streamable HTTP at ``path``.
        legacy_sse: serve the HTTP+SSE transport at ``sse_path`` and ``messages_path``.
        gateway: serve the JSON-RPC gateway at ``<path>/server-info`` and ``<path>/call``.
        metrics: count calls, sizes, sessions and streams, and serve them at ``/metrics``.
        auth: who may call (None: anyone who passes the Host/Origin checks).
        allowed_hosts, allowed_origins: names beyond loopback to accept in ``Host`` / ``Origin``.
        max_body_bytes: larger request bodies get 413.
        max_sessions: sessions at once, per transport; past it a new one gets 503.
        body_timeout: seconds for a request body to arrive (else 408).
        write_timeout: seconds a client may leave written data unread before it is dropped.
        options: passed to :class:`~plainmcp.http.streamable.StreamableHTTP`.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        streamable: bool = True,
        legacy_sse: bool = True,
        gateway: bool = True,
        metrics: bool = True,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        auth: BearerAuth | None = None,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        max_body_bytes: int = 4 * 1024 * 1024,
        max_sessions: int = 1000,
        body_timeout: float | None = 30.0,
        write_timeout: float | None = 30.0,
        **options: Any,
    ) -> None:
        self.server = server
        self.path = path
        self.hosts = HostPolicy(allowed_hosts, allowed_origins)
        self.auth = auth
        self.body_timeout = body_timeout
        self.write_timeout = write_timeout
        self.metrics = HTTPMetrics(server) if metrics else None
        self._request_ids = RequestIds()
        self._body_deadlines = BodyDeadlines(body_timeout) if body_timeout is not None else None
        observer = self.metrics.observe_call if self.metrics is not None else None
        self.streamable = (
            StreamableHTTP(
                server, max_body_bytes=max_body_bytes, max_sessions=max_sessions, observer=observer, **options
            )
            if streamable
            else None
        )
        self.legacy = (
            LegacySSE(
                server,
                sse_path=sse_path,
                messages_path=messages_path,
                max_body_bytes=max_body_bytes,
                max_sessions=max_sessions,
                observer=observer,
            )
            if legacy_sse
            else None
        )
        self.gateway = Gateway(server, path=path, max_body_bytes=max_body_bytes, observer=observer) if gateway else None
        if self.metrics is not None:
            if server.shared.replicated:
                self.metrics.track_shared_state()
            if self.streamable is not None:
                streamable_app = self.streamable
                self.metrics.track_sessions("streamable_http", lambda: len(streamable_app.sessions))
            if self.legacy is not None:
                legacy_app = self.legacy
                self.metrics.track_sessions("sse", lambda: len(legacy_app.sessions))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The app's lifetime: the server's background tasks, the body deadlines' sweeper, and
        the Streamable HTTP background work."""
        async with self.server.running(), anyio.create_task_group() as task_group:
            if self._body_deadlines is not None:
                self._body_deadlines.task_group = task_group
            try:
                if self.streamable is None:
                    yield
                else:
                    async with self.streamable.running():
                        yield
            finally:
                if self._body_deadlines is not None:
                    self._body_deadlines.task_group = None
                task_group.cancel_scope.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        route = self._route_name(scope["path"])
        exchange = Exchange(
            scope,
            receive,
            send,
            body_timeout=self.body_timeout,
            write_timeout=self.write_timeout,
            on_stream=self._stream_counter(route),
            new_id=self._request_ids,
            deadlines=self._body_deadlines,
        )
        try:
            with exchange.cancel_scope:
                await self._serve(route, scope, exchange.receive, exchange.send)
            await exchange.timed_out_response()
        finally:
            subject = principal_subject(scope)
            exchange.finish(route=route, extra={"subject": subject} if subject else None)
            if self.metrics is not None:
                status = exchange.status if exchange.status is not None else 499  # the client left first
                self.metrics.http_responses.inc_at((route, str(status)))  # labels: route, status

    def _route_name(self, path: str) -> str:
        """``path`` if it is one we serve, else ``other``: a bounded label and log field."""
        if path in (HEALTH_PATH, METRICS_PATH) or path == WELL_KNOWN_PRM or path.startswith(WELL_KNOWN_PRM + "/"):
            return WELL_KNOWN_PRM if path.startswith(WELL_KNOWN_PRM) else path
        if self._target(path) is not None:
            return path
        return "other"

    def _target(self, path: str) -> ASGIApp | None:
        if self.streamable is not None and path == self.path:
            return self.streamable
        if self.legacy is not None and self.legacy.handles(path):
            return self.legacy
        if self.gateway is not None and self.gateway.handles(path):
            return self.gateway
        if self.metrics is not None and path == METRICS_PATH:
            return self._metrics
        return None

    def _stream_counter(self, route: str) -> Callable[[int], None] | None:
        if self.metrics is None:
            return None
        gauge = self.metrics.active_streams
        transport = "sse" if self.legacy is not None and route == self.legacy.sse_path else "streamable_http"
        return lambda change: gauge.inc(change, transport=transport)

    async def _serve(self, route: str, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"]
        if path == HEALTH_PATH and scope["method"] == "GET":
            await respond_json(send, 200, await self._health())
            return
        if await self.hosts.reject(scope, send):
            return
        if route == WELL_KNOWN_PRM and self.auth is not None and self.auth.publishes_metadata:
            await self._resource_metadata(scope, send)
            return
        target = self._target(path)
        if target is None:
            await respond(send, 404, b"Not Found", content_type="text/plain")
            return
        if self.auth is not None:
            principal = await self.auth.check(scope, send, self.path)
            if principal is None:
                return
            scope["state"]["principal"] = principal
        await target(scope, receive, send)

    async def _health(self) -> dict[str, Any]:
        """Liveness, and with replicated state whether its store answers: a replica whose store is
        down still serves what needs no shared state, so it stays 200, with ``"status": "degraded"``."""
        health: dict[str, Any] = {"status": "ok", "server": self.server.name, "version": self.server.version}
        if self.server.shared.replicated:
            shared = await self.server.shared.health()
            health["sharedState"] = shared
            if not shared.get("reachable"):
                health["status"] = "degraded"
        return health

    async def _resource_metadata(self, scope: Scope, send: Send) -> None:
        assert self.auth is not None
        if scope["method"] != "GET":
            await respond(send, 405, headers=[("allow", "GET")])
            return
        document = self.auth.metadata(scope, self.path, self.server.name)
        await respond_json(send, 200, document, headers=[("cache-control", "max-age=300")])

    async def _metrics(self, scope: Scope, receive: Receive, send: Send) -> None:
        assert self.metrics is not None
        if scope["method"] != "GET":
            await respond(send, 405, headers=[("allow", "GET")])
            return
        await respond(send, 200, self.metrics.exposition(), content_type=CONTENT_TYPE)

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


def _is_loopback_bind(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_http(
    server: Server,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    transport: str = "http",
    certfile: str | None = None,
    keyfile: str | None = None,
    max_connections: int = 1000,
    max_connections_per_peer: int | None = None,
    header_timeout: float = 10.0,
    http_parser: str | None = None,
    event_loop: str | None = None,
    workers: int = 1,
    **options: Any,
) -> None:
    """Serve over HTTP until SIGTERM/SIGINT (blocking). ``transport="sse"`` serves only the
    2024-11-05 HTTP+SSE endpoints; ``"http"`` serves Streamable HTTP, the gateway and those
    endpoints too. With ``certfile`` and ``keyfile`` it serves HTTPS (uvicorn's TLS).

    ``max_connections`` bounds connections at once; one peer address holds at most
    ``max_connections_per_peer`` of them (default half; 0 for no cap, behind a proxy), and
    each request head must arrive within ``header_timeout`` seconds. Idle connections give their
    slot up to new ones; when every slot serves a request, ``/health`` is still answered and
    anything else gets 503 (see :mod:`plainmcp.http.connection_guard`).

    ``http_parser`` (``"httptools"`` or ``"h11"``) and ``event_loop`` (``"uvloop"`` or
    ``"asyncio"``) force a part of the HTTP stack; by default (``"auto"``, or the
    ``PLAINMCP_HTTP_PARSER`` / ``PLAINMCP_EVENT_LOOP`` variables) the fast one is used when it is
    installed and the pure-Python one otherwise.

    ``workers`` > 1 forks that many replicas serving the one socket (:mod:`plainmcp.http.workers`)."""
    import uvicorn

    from .connection_guard import guarded_protocol

    parser_protocol, loop_name = _http_stack(http_parser, event_loop)

    if (certfile is None) != (keyfile is None):
        raise ValueError("TLS needs both a certificate file and a key file")
    options.setdefault("gateway", transport == "http")
    app = MCPApp(server, streamable=transport == "http", **options)
    _warn_if_exposed(host, app, certfile)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        lifespan="on",
        log_config=None,  # our logging set-up (stderr) stays in charge
        access_log=False,  # our own access line carries the request id and never a header
        timeout_graceful_shutdown=3,
        # MCP clients call again after their model has thought; uvicorn's 5 s default would close
        # most connections in between, and a request racing that close fails with a reset.
        timeout_keep_alive=30,
        # Slots are ours (connection_guard): uvicorn's limit counts idle connections too and would
        # answer 503 to everyone while a few silent sockets are open.
        limit_concurrency=None,
        http=guarded_protocol(
            _connection_guard(max_connections, max_connections_per_peer, header_timeout), parser_protocol
        ),
        loop=loop_name,
        ws="none",  # nothing here speaks WebSocket: an upgrade request is served as plain HTTP
        ssl_certfile=certfile,
        ssl_keyfile=keyfile,
    )
    try:
        config.load()  # reads the TLS files now: a bad one is a StartError, not a traceback from the loop
    except OSError as problem:  # ssl.SSLError is one too
        raise StartError(f"cannot use the TLS certificate or key: {_reason(problem)}") from problem
    listener = listen(host, port)
    endpoint = app.path if transport == "http" else "/sse"
    _announce("https" if certfile else "http", host, listener, endpoint, parser_protocol, loop_name)
    # Everything made so far (modules, the server, its schemas) lives as long as the process: out
    # of the collector's sight, a full collection under load scans only what requests made.
    gc.freeze()
    if workers > 1:
        from .workers import run_workers

        raise SystemExit(run_workers(workers, lambda: _serve(app, config, listener)))
    _serve(app, config, listener)


def _announce(scheme: str, host: str, listener: socket.socket, endpoint: str, parser: type[Any], loop: str) -> None:
    # Only now, with the socket bound and listening, is it true (and the port is the real one when 0 was asked).
    logger.info("listening on %s://%s:%d%s", scheme, host, listener.getsockname()[1], endpoint)
    parser_name = "h11" if parser.__name__ == "H11Protocol" else "httptools"
    logger.info("HTTP stack: uvicorn with the %s parser on the %s event loop", parser_name, loop)


def _connection_guard(max_connections: int, max_per_peer: int | None, header_timeout: float) -> ConnectionGuard:
    """The slots of :func:`run_http`: one peer holds at most half of them unless told otherwise."""
    from .connection_guard import ConnectionGuard

    return ConnectionGuard(
        max_connections,
        max_per_peer=max(1, max_connections // 2) if max_per_peer is None else max_per_peer,
        header_timeout=header_timeout,
        health_path=HEALTH_PATH,
    )


def _warn_if_exposed(host: str, app: MCPApp, certfile: str | None) -> None:
    if not _is_loopback_bind(host):
        if app.auth is None:
            logger.warning("listening on %s without authentication: anyone who can reach it can call every tool", host)
        if certfile is None:
            logger.warning("listening on %s without TLS: tokens and data cross the network in clear text", host)


def _serve(app: MCPApp, config: Any, listener: Any) -> None:
    import uvicorn

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # uvicorn waits for open connections before the lifespan shutdown: end our long-lived
            # streams first, so they close with their final messages instead of being cut off.
            app.begin_shutdown()
            await super().shutdown(sockets)

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn raises a SIGTERM it caught again once it has shut down, and the process ends
            # there, without atexit: the log lines still buffered (logs.StderrLines) go out first.
            with super().capture_signals():
                try:
                    yield
                finally:
                    for handler in logging.getLogger().handlers:
                        handler.flush()

    _Server(config).run(sockets=[listener])


_PARSERS = ("auto", "httptools", "h11")
_LOOPS = ("auto", "uvloop", "asyncio")


def _http_stack(parser: str | None, loop: str | None) -> tuple[type[Any], str]:
    """uvicorn's HTTP protocol class and loop name for ``run_http``. "auto" takes httptools and
    uvloop when they import (they are dependencies, but have no wheels on every platform) and
    falls back to h11 and the asyncio loop; a part asked for by name must be installed. Imported
    here, never at module import, so stdio servers do not pay for them at start."""
    import os

    parser = parser or os.environ.get("PLAINMCP_HTTP_PARSER") or "auto"
    loop = loop or os.environ.get("PLAINMCP_EVENT_LOOP") or "auto"
    if parser not in _PARSERS:
        raise ValueError(f"unknown HTTP parser {parser!r} (one of {', '.join(_PARSERS)})")
    if loop not in _LOOPS:
        raise ValueError(f"unknown event loop {loop!r} (one of {', '.join(_LOOPS)})")
    if parser != "h11":
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

            return HttpToolsProtocol, _loop_name(loop)
        except ImportError:
            if parser == "httptools":
                raise StartError("the httptools HTTP parser is not installed") from None
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return H11Protocol, _loop_name(loop)


def _loop_name(loop: str) -> str:
    if loop == "asyncio":
        return "asyncio"
    try:
        import uvloop  # noqa: F401  (only whether it imports)
    except ImportError:
        if loop == "uvloop":
            raise StartError("the uvloop event loop is not installed") from None
        return "asyncio"
    return "uvloop"


class StartError(OSError):
    """The HTTP server cannot start: its address cannot be bound (in use, not this host's, a
    privileged port) or its TLS files cannot be used. The message is one line for the operator."""


def listen(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``host``:``port`` and listening (``port`` 0: a free one), as uvicorn
    would bind it (IPv6 when ``host`` has a colon). Raises :class:`StartError`."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said outright: asyncio sets TCP_NODELAY only on sockets whose proto is TCP, and
    # with proto 0 every response waited ~40 ms on Nagle and the client's delayed ACK.
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait out TIME_WAIT
        listener.bind((host, port))
        listener.listen(backlog)
    except OSError as problem:
        listener.close()
        raise StartError(f"cannot listen on {host}:{port}: {_reason(problem)}") from problem
    listener.set_inheritable(True)
    return listener


def _reason(problem: OSError) -> str:
    """An OSError in words: its strerror, without the errno and file names Python adds."""
    return problem.strerror or str(problem.args[-1] if problem.args else type(problem).__name__)
