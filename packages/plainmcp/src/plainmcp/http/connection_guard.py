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
- Fair share when every slot is taken (issue 26, High 2): a new connection from a peer holding
  ``k`` slots takes the longest-idle connection of a peer holding at least ``k`` (never one of a
  peer holding fewer); with nothing idle, it takes the longest-serving connection (an SSE stream,
  a ``subscriptions/listen``, a body still arriving) of the owner holding the most slots, if that
  owner holds more than ``k + 1``. An owner is the principal a connection's request authenticated
  as (read from the request's ``scope["state"]``), else its peer, so a principal spread over many
  addresses counts once. So no set of peers can keep a newcomer out while each holds more
  than an equal share: two addresses holding 100 streams each of 200 slots lose one each to every
  new client, until all hold about the same.
- A request head is at most :data:`~plainmcp.http.head_limits.MAX_HEAD_BYTES` bytes and
  :data:`~plainmcp.http.head_limits.MAX_HEADER_FIELDS` fields, else ``431`` and the connection is
  closed; it is metered before the parser sees it (see :mod:`plainmcp.http.head_limits`).
- A request body still arriving must bring at least :data:`~plainmcp.http.body_rate.MIN_BYTES_PER_SECOND`
  bytes a second over each :data:`~plainmcp.http.body_rate.WINDOW` (see :mod:`plainmcp.http.body_rate`).
- Only when no connection can be given up does a new connection go to a small reserve, which
  answers ``GET /health`` and ``503`` to anything else, once, then closes. Past the reserve, a
  connection is closed at once.
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
from .asgi import principal_subject
from .body_rate import BodyRate
from .coalesced_writes import CoalescedWrites
from .head_limits import MAX_HEAD_BYTES, MAX_HEADER_FIELDS, TOO_LARGE_431, HeadMeter

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
        self._preempted = 0
        self._warned = -_WARN_EVERY
        self.body_rate = BodyRate()

    # ----------------------------------------------------------------------------- admission

    def admit(self, connection: Any, peer: str) -> str:
        """Place a new connection: ``"slot"``, ``"reserve"``, or ``"refused"`` (close it now)."""
        own = self._peers.get(peer)
        held = len(own) if own is not None else 0
        if own is not None and held >= self.max_per_peer:
            victim = next((c for c in own if c in self._idle), None)
            if victim is None:
                return self._overflow()
            self._give_up(victim)
        elif self.slots >= self.max_connections:
            victim = self._idle_victim(held)
            if victim is not None:
                self._give_up(victim)
            else:
                victim = self._busy_victim(peer, held)
                if victim is None:
                    return self._overflow()
                self._preempt(victim)
        self.slots += 1
        self._peers.setdefault(peer, OrderedDict())[connection] = None
        self._idle[connection] = None
        return "slot"

    def _idle_victim(self, held: int) -> Any:
        """The longest-idle connection of a peer holding at least ``held`` slots (a peer holding
        fewer than the newcomer's is never made to give one up)."""
        for candidate in self._idle:
            if len(self._peers[candidate.guard_peer]) >= held:
                return candidate
        return None

    def _busy_victim(self, peer: str, held: int) -> Any:
        """The longest-serving connection of the owner holding the most slots, when that owner
        holds more than ``held + 1`` (so after the swap it still holds at least as many). An owner
        is the principal a connection's request authenticated as, else the connection's peer: a
        principal spread over many addresses counts once."""
        owners: dict[tuple[str, str], list[Any]] = {}
        for own in self._peers.values():
            for connection in own:
                owners.setdefault(_owner(connection), []).append(connection)
        top, holding = max(owners.items(), key=lambda item: len(item[1]))
        if top == ("peer", peer) or len(holding) <= held + 1:
            return None
        return min(holding, key=lambda connection: connection.guard_busy_since)

    def _preempt(self, victim: Any) -> None:
        self.release(victim)
        self._preempted += 1
        self._warn()
        victim.preempt()

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
                "refused, %d serving connections of the owner holding the most closed for a fair share, "
                "since the last warning",
                self.max_connections,
                self.max_per_peer,
                self._given_up,
                self._preempted,
            )
            self._warned = now
            self._given_up = 0
            self._preempted = 0

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
        if self._idle.pop(connection, False) is None:  # it was idle: busy from now
            connection.guard_busy_since = time.monotonic()
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
    ``client``, ``cycle``, ``flow``, ``loop``, ``transport``."""

    guard: ConnectionGuard
    # Set by the base protocol class.
    app: Any
    client: Any
    cycle: Any
    flow: Any
    loop: Any
    transport: Any

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # uvicorn's protocols take (config, server_state, ...)
        self._app = self.app
        self.app = self._serve
        self.guard_peer = ""
        self.guard_busy_since = 0.0
        self.guard_scope: Any = None  # the scope of the request being served, if any
        self._place = "refused"
        self._head_timer: asyncio.TimerHandle | None = None
        self._head = HeadMeter()
        self._fields = 0  # header fields the parser has reported for the message it is parsing
        self._field_bytes = 0
        self._serving = 0
        self._head_done = False  # a head is complete and its request not yet started

    def connection_made(self, transport: Any) -> None:
        # A response's head and body in one system call (coalesced_writes).
        transport = CoalescedWrites(transport, self.loop)
        super().connection_made(transport)
        self.guard_peer = peer_key(self.client[0]) if self.client else ""
        self._place = self.guard.admit(self, self.guard_peer)
        if self._place == "refused":
            transport.abort()
            return
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self.guard.body_rate.forget(self)
        if self._place == "slot":
            self.guard.release(self)
        elif self._place == "reserve":
            self.guard.reserve -= 1
        self._place = "gone"
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._serving or self._head_done:
            self.guard.body_rate.received(self, len(data))
            super().data_received(data)
            return
        if self._place == "refused head":
            return
        # Part of the next request head: the deadline runs from its first byte.
        if self._head_timer is None:
            self._arm()
        room = self._head.room(data)
        cycle = self.cycle
        super().data_received(data if room == len(data) else data[:room])
        if self.cycle is not cycle:
            # The parser completed a head (uvicorn starts a new request cycle for each): from
            # now on the connection is serving, even before the application's task has run,
            # so it can no longer be given up to a newcomer.
            self._disarm()
            self._head_done = True
            if self._place == "slot":
                self.guard.busy(self)
            if self.cycle is not None and self.cycle.more_body:
                self.guard.body_rate.started(self, self.loop)
            if room < len(data):
                self.data_received(data[room:])  # the body, or the next request
        elif room < len(data) and not self.transport.is_closing():
            self._refuse_head()

    def _refuse_head(self) -> None:
        """The head does not fit: 431, and the connection is closed (its slot is free)."""
        self._disarm()
        if self._place == "slot":
            self.guard.release(self)
        elif self._place == "reserve":
            self.guard.reserve -= 1
        self._place = "refused head"
        self.transport.write(TOO_LARGE_431)
        self.transport.close()

    # httptools reports each header as it parses it. The head of a pipelined request (one sent
    # behind a request still being served) reaches the parser unmetered, so it is bounded here.
    def on_message_begin(self) -> None:
        self._fields = 0
        self._field_bytes = 0
        super().on_message_begin()  # type: ignore[misc]  # httptools' callback: on the base class, not on asyncio.Protocol

    def on_header(self, name: bytes, value: bytes) -> None:
        self._fields += 1
        self._field_bytes += len(name) + len(value)
        if self._fields > MAX_HEADER_FIELDS or self._field_bytes > MAX_HEAD_BYTES:
            if not self.transport.is_closing():
                logger.info("closed a connection whose pipelined request head was too large")
                self.transport.abort()
            return
        super().on_header(name, value)  # type: ignore[misc]  # httptools' callback, as above

    def body_too_slow(self) -> None:
        """The body is arriving below the minimum rate: 408 (or a reset mid-response), and closed."""
        if self.transport.is_closing():
            return
        logger.info("closed a connection whose request body arrived below the minimum rate")
        if self.cycle is not None and not self.cycle.response_started:
            self.transport.write(_TIMEOUT_408)
            self.transport.close()
        else:
            self.transport.abort()

    def _arm(self) -> None:
        self._head.reset()
        self._head_timer = self.loop.call_later(self.guard.header_timeout, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._serving or self._head_done or self.transport.is_closing():
            return
        if self._head.bytes:
            self.transport.write(_TIMEOUT_408)
        self.transport.close()

    def give_up(self) -> None:
        """Closed to free its slot for a new connection (it was idle)."""
        self._disarm()
        self._place = "given up"
        self.transport.close()

    def preempt(self) -> None:
        """Closed while serving, to give a newcomer its fair share (see :class:`ConnectionGuard`).
        Reset rather than closed: a client that does not read would keep a close waiting."""
        self._disarm()
        self._place = "given up"
        self.transport.abort()

    async def _serve(self, scope: Any, receive: Any, send: Any) -> None:
        self._disarm()
        self._head_done = False
        self._serving += 1
        self.guard_scope = scope  # the app puts the request's principal in its state
        if self._place == "slot":
            self.guard.busy(self)
        try:
            if self._place != "reserve" or (scope["path"] == self.guard.health_path and scope["method"] == "GET"):
                await self._app(scope, receive, send if self._place != "reserve" else _closing(send))
            else:
                await _busy(send)
        finally:
            self._serving -= 1
            if not self._serving:
                self.guard_scope = None
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


def _owner(connection: Any) -> tuple[str, str]:
    scope = connection.guard_scope
    subject = principal_subject(scope) if scope is not None else None
    return ("principal", subject) if subject else ("peer", connection.guard_peer)


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
