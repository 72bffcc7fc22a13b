"""Connection slots of the HTTP server: a deadline for every request head, a cap per peer address,
and idle connections given up first when the slots run out.

uvicorn's own bound (``limit_concurrency``) answers 503 to every request past the limit, but it
counts connections that never sent anything, and no timer runs before a connection's first request
has completed: a few more silent or half-sent connections than the limit made every request a 503,
``/health`` included, for as long as the sockets stayed open. An ASGI middleware cannot help (the
application is only called once a request head is complete), so the guard sits one level down, in
a subclass of uvicorn's HTTP protocol (:func:`guarded_protocol`), and works with either of
uvicorn's HTTP/1.1 parsers (h11 or httptools).

The rules, for a server with ``max_connections`` slots:

- A request head must be complete within ``header_timeout`` seconds of the connection opening, or
  of the first byte of the next request on a kept-alive connection. Past it the connection is
  closed (with ``408`` if part of a head had arrived). Idle kept-alive connections are closed by
  uvicorn's keep-alive timeout.
- A connection is *idle* while no request is being served on it: before its first head, between
  requests, and while a head is still arriving. When every slot is taken, a new connection takes
  the slot of the connection idle the longest, which is closed. So silent or slow connections can
  never keep a request out.
- One peer holds at most ``max_per_peer`` slots: a peer at its cap gives up its own longest-idle
  connection for a new one, never anyone else's. A peer is an IPv4 address, or an IPv6 /64.
- Only when no idle connection can be given up (every slot is serving a request) does a new
  connection go to a small reserve, which answers ``GET /health`` and ``503`` to anything else,
  once, then closes. Past the reserve, a connection is closed at once.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import time
from collections import OrderedDict
from typing import Any

from ..errors import ErrorCode

logger = logging.getLogger(__name__)

#: Connections above ``max_connections`` that may wait for their head to be answered with /health or 503.
RESERVE = 16
#: Seconds between two warnings about connections refused or given up (an attack must not flood the log).
_WARN_EVERY = 10.0

_TIMEOUT_408 = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
_BUSY_BODY = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": int(ErrorCode.INTERNAL_ERROR),
            "message": "Server busy: every connection slot is serving a request; try again later",
        },
    },
    separators=(",", ":"),
).encode()


class ConnectionGuard:
    """The slot accounting shared by every connection of one server (event-loop thread only).

    Args:
        max_connections: slots at once (requests beyond them get the reserve's 503).
        max_per_peer: slots one peer address may hold; None or 0 for no cap per peer (behind a
            proxy every client shares the proxy's address).
        header_timeout: seconds for a request head to arrive.
        health_path: the path the reserve still answers.
    """

    def __init__(
        self,
        max_connections: int,
        *,
        max_per_peer: int | None = None,
        header_timeout: float = 10.0,
        health_path: str = "/health",
    ) -> None:
        if max_connections < 1:
            raise ValueError("max_connections must be at least 1")
        self.max_connections = max_connections
        self.max_per_peer = max_per_peer if max_per_peer else max_connections
        self.header_timeout = header_timeout
        self.health_path = health_path
        self.slots = 0
        self.reserve = 0
        self._idle: OrderedDict[Any, None] = OrderedDict()  # oldest idle first
        self._peers: dict[str, OrderedDict[Any, None]] = {}  # every slot of a peer, oldest idle first
        self._peer_busy: dict[str, int] = {}
        self._given_up = 0
        self._warned = -_WARN_EVERY

    # ----------------------------------------------------------------------------- admission

    def admit(self, connection: Any, peer: str) -> str:
        """Place a new connection: ``"slot"``, ``"reserve"``, or ``"refused"`` (close it now)."""
        own = self._peers.get(peer)
        if own is not None and len(own) >= self.max_per_peer:
            victim = next((c for c in own if c in self._idle), None)
            if victim is None:
                return self._overflow()
            self._give_up(victim)
        elif self.slots >= self.max_connections:
            victim = next(iter(self._idle), None)
            if victim is None:
                return self._overflow()
            self._give_up(victim)
        self.slots += 1
        self._peers.setdefault(peer, OrderedDict())[connection] = None
        self._idle[connection] = None
        return "slot"

    def _overflow(self) -> str:
        self._given_up += 1
        self._warn()
        if self.reserve >= RESERVE:
            return "refused"
        self.reserve += 1
        return "reserve"

    def _give_up(self, victim: Any) -> None:
        self.release(victim)
        self._given_up += 1
        self._warn()
        victim.give_up()

    def _warn(self) -> None:
        now = time.monotonic()
        if now - self._warned >= _WARN_EVERY:
            logger.warning(
                "connection slots full (%d, at most %d per peer): %d idle connections closed or new ones "
                "refused since the last warning",
                self.max_connections,
                self.max_per_peer,
                self._given_up,
            )
            self._warned = now
            self._given_up = 0

    def release(self, connection: Any) -> None:
        """The connection is gone (or given up): its slot is free. Safe to call twice."""
        peer = connection.guard_peer
        own = self._peers.get(peer)
        if own is None or connection not in own:
            return
        del own[connection]
        if not own:
            del self._peers[peer]
        self._idle.pop(connection, None)
        self.slots -= 1

    # ------------------------------------------------------------------------ request states

    def busy(self, connection: Any) -> None:
        """A request is being served on the connection: it cannot be given up."""
        self._idle.pop(connection, None)
        own = self._peers.get(connection.guard_peer)
        if own is not None and connection in own:
            own.move_to_end(connection)

    def idle(self, connection: Any) -> None:
        """The connection's request is done: it is the newest idle one."""
        own = self._peers.get(connection.guard_peer)
        if own is not None and connection in own:
            own.move_to_end(connection)
            self._idle[connection] = None


class _GuardedProtocol(asyncio.Protocol):
    """The guard's rules, mixed in front of uvicorn's HTTP protocol by :func:`guarded_protocol`
    (which names the guard and the base class). Attributes it uses from the base: ``app``,
    ``client``, ``cycle``, ``loop``, ``transport``."""

    guard: ConnectionGuard
    # Set by the base protocol class.
    app: Any
    client: Any
    cycle: Any
    loop: Any
    transport: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # uvicorn's protocols take (config, server_state, ...)
        self._app = self.app
        self.app = self._serve
        self.guard_peer = ""
        self._place = "refused"
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0
        self._serving = 0
        self._head_done = False  # a head is complete and its request not yet started

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self.guard_peer = peer_key(self.client[0]) if self.client else ""
        self._place = self.guard.admit(self, self.guard_peer)
        if self._place == "refused":
            transport.abort()
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._place == "slot":
            self.guard.release(self)
        elif self._place == "reserve":
            self.guard.reserve -= 1
        self._place = "gone"
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._serving or self._head_done:
            super().data_received(data)
            return
        # Part of the next request head: the deadline runs from its first byte.
        if self._head_timer is None:
            self._arm()
        self._head_bytes += len(data)
        cycle = self.cycle
        super().data_received(data)
        if self.cycle is not cycle:
            # The parser completed a head (uvicorn starts a new request cycle for each): from
            # now on the connection is serving, even before the application's task has run,
            # so it can no longer be given up to a newcomer.
            self._disarm()
            self._head_done = True
            if self._place == "slot":
                self.guard.busy(self)

    def _arm(self) -> None:
        self._head_bytes = 0
        self._head_timer = self.loop.call_later(self.guard.header_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._serving or self._head_done or self.transport.is_closing():
            return
        if self._head_bytes:
            self.transport.write(_TIMEOUT_408)
        self.transport.close()

    def give_up(self) -> None:
        """Closed to free its slot for a new connection (it was idle)."""
        self._disarm()
        self._place = "given up"
        self.transport.close()

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        self._disarm()
        self._head_done = False
        self._serving += 1
        if self._place == "slot":
            self.guard.busy(self)
        try:
            if self._place != "reserve" or (scope["path"] == self.guard.health_path and scope["method"] == "GET"):
                await self._app(scope, receive, send if self._place != "reserve" else _closing(send))
            else:
                await _busy(send)
        finally:
            self._serving -= 1
            if not self._serving and self._place == "slot":
                self.guard.idle(self)


def guarded_protocol(guard: ConnectionGuard, base: type[asyncio.Protocol] | None = None) -> type[asyncio.Protocol]:
    """A subclass of uvicorn's HTTP protocol (``base``, by default the one uvicorn would pick)
    that keeps ``guard``'s rules; pass it as ``uvicorn.Config(http=...)`` with no
    ``limit_concurrency``."""
    if base is None:
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        base = AutoHTTPProtocol
    name = f"Guarded{base.__name__}"
    protocol: type[asyncio.Protocol] = type(name, (_GuardedProtocol, base), {"guard": guard, "__qualname__": name})
    return protocol


def peer_key(host: str) -> str:
    """The peer a connection counts against: its IPv4 address, or the /64 network of its IPv6
    address (one host commonly holds a whole /64, so counting addresses would not cap it)."""
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.split("%", 1)[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.IPv6Network((int(address) >> 64 << 64, 64)))


def _closing(send: Any) -> Any:
    """``send`` with ``connection: close`` added to the response head: a reserve connection
    serves one request."""

    async def closing_send(message: Any) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", ()), (b"connection", b"close")]}
        await send(message)

    return closing_send


async def _busy(send: Any) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 503,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(_BUSY_BODY)).encode()),
                (b"retry-after", b"1"),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": _BUSY_BODY})
