"""The HTTP+SSE transport of 2024-11-05 (deprecated, still served for old clients).

``GET /sse`` opens the stream and first sends an ``endpoint`` event naming the URL to POST to
(opaque to clients: ours carries a random session id). Each POST gets ``202 Accepted``; the answers
travel on the stream as ``message`` events. The stream closing ends the session.

With replicas (shared state), the session lives on the replica holding its stream; a POST that
reaches another replica is forwarded there (:mod:`plainmcp.state.sse_routes`), or gets 404 when no
replica holds the stream any more.

A client that does not read its stream gets backpressure, then is dropped: while ``high_water``
bytes of answers wait to be written, the session takes no new message and a POST gets ``503``;
a write the client leaves untaken for the HTTP app's ``write_timeout`` ends the stream, and with it
the session.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
from collections import deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from ..connection import ServerConnection
from ..errors import ErrorCode
from ..framing import frame
from ..jsonrpc import Batch, Decoded, Invalid, Request, decode
from ..peer import CallExtras
from ..session import Observer, Outbound
from ..state import SharedStateUnavailable
from ..state.sessions import SESSION_ID
from ..state.sse_routes import GONE, NOT_YOURS, RedisSSERoutes, sse_routes
from .asgi import (
    EventStream,
    Receive,
    Scope,
    Send,
    error_payload,
    principal_subject,
    read_json_body,
    respond,
    respond_json,
    wait_disconnect,
)

if TYPE_CHECKING:
    from ..server import Server

logger = logging.getLogger(__name__)


class LegacySSE:
    """ASGI app answering the SSE path (GET) and the message path (POST).

    A session's messages must come with the credentials that opened its stream (when the HTTP
    app authenticates): its id alone is not enough. ``observer`` goes to every session (metrics).
    """

    def __init__(
        self,
        server: Server,
        *,
        sse_path: str = "/sse",
        messages_path: str = "/messages",
        max_body_bytes: int = 4 * 1024 * 1024,
        max_sessions: int = 1000,
        keepalive_seconds: float = 15.0,
        observer: Observer | None = None,
        high_water: int = 1 << 20,
    ) -> None:
        self.server = server
        self.sse_path = sse_path
        self.messages_path = messages_path
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.keepalive_seconds = keepalive_seconds
        self.observer = observer
        self.high_water = high_water
        self.sessions: dict[str, MemoryObjectSendStream[Decoded]] = {}  # memory streams: close() and send_nowait()
        self.outputs: dict[str, _Output] = {}
        self.owners: dict[str, str | None] = {}
        self.connections: dict[str, ServerConnection] = {}
        self._routes: RedisSSERoutes | None | bool = False  # False: not looked up yet

    @property
    def routes(self) -> RedisSSERoutes | None:
        """Where POSTs for streams held by other replicas go (None in one process)."""
        if self._routes is False:
            self._routes = sse_routes(self.server.shared) if self.server.shared.replicated else None
        assert self._routes is not True
        return self._routes

    def begin_shutdown(self) -> None:
        """End every session: their streams close."""
        for input_send in list(self.sessions.values()):
            input_send.close()

    def handles(self, path: str) -> bool:
        return path in (self.sse_path, self.messages_path)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == self.sse_path and scope["method"] == "GET":
            await self._stream(scope, receive, send)
        elif scope["path"] == self.messages_path and scope["method"] == "POST":
            await self._message(scope, receive, send)
        else:
            allowed = "GET" if scope["path"] == self.sse_path else "POST"
            await respond(send, 405, headers=[("allow", allowed)])

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if len(self.sessions) >= self.max_sessions:
            await respond_json(send, 503, error_payload(ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later"))
            return
        session_id = secrets.token_urlsafe(24)
        input_send, input_receive = anyio.create_memory_object_stream[Decoded](64)
        output = _Output(self.max_body_bytes, self.high_water)
        connection = ServerConnection(self.server, _GatedInput(input_receive, output), output, observer=self.observer)
        self.sessions[session_id] = input_send
        self.outputs[session_id] = output
        self.connections[session_id] = connection
        self.owners[session_id] = principal_subject(scope)
        events = EventStream(send)
        endpoint = f"{scope.get('root_path', '')}{self.messages_path}?session_id={session_id}"
        logger.info("SSE session %s opened", session_id[:8])
        try:
            async with self._held(session_id, self.owners[session_id]) as forwarded:
                await events.start()
                await events.event(endpoint, event="endpoint")
                async with anyio.create_task_group() as task_group:
                    task_group.start_soon(connection.run)
                    task_group.start_soon(_close_on_disconnect, receive, input_send)
                    task_group.start_soon(events.keep_alive, self.keepalive_seconds)
                    if forwarded is not None:
                        task_group.start_soon(self._take_forwarded, session_id, forwarded, input_send)
                    while (data := await output.next()) is not None:
                        await events.event(data.decode("utf-8"), event="message")
                        output.taken(len(data))
                    task_group.cancel_scope.cancel()
                await events.close()  # the session ended here: the response ends properly too
        except OSError:
            pass  # the client went away
        except SharedStateUnavailable as problem:  # before the stream started: nothing was sent yet
            await respond_json(send, 503, error_payload(problem.code, problem.message, None, problem.data))
        finally:
            self.sessions.pop(session_id, None)
            self.outputs.pop(session_id, None)
            self.owners.pop(session_id, None)
            self.connections.pop(session_id, None)
            input_send.close()
            logger.info("SSE session %s closed", session_id[:8])

    def _held(self, session_id: str, owner: str | None) -> contextlib.AbstractAsyncContextManager[Any]:
        """With replicas: this replica holds the session while its stream is open (yields the messages
        other replicas forward); in one process nothing (yields None)."""
        routes = self.routes
        return contextlib.nullcontext(None) if routes is None else routes.held(session_id, owner)

    async def _take_forwarded(
        self, session_id: str, forwarded: AsyncIterator[dict[str, Any]], input_send: MemoryObjectSendStream[Decoded]
    ) -> None:
        """Feed the session the messages POSTed to other replicas (until the stream ends)."""
        try:
            async for message in forwarded:
                body = message.get("body")
                if not isinstance(body, str):
                    continue
                decoded = decode(body)
                self._expect(session_id, decoded, message.get("request_id"))
                try:
                    input_send.send_nowait(decoded)
                except anyio.WouldBlock:
                    logger.warning("SSE session %s: a forwarded message was dropped (64 waiting)", session_id[:8])
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        except Exception:  # Redis lost: the other replicas' POSTs cannot reach us; end cleanly
            # (the client sees its stream close and connects again) rather than half work.
            logger.warning("SSE session %s ended: forwarding from other replicas was lost", session_id[:8])
            input_send.close()

    def _expect(self, session_id: str, decoded: Decoded, http_request_id: Any) -> None:
        connection = self.connections.get(session_id)
        if isinstance(http_request_id, str) and connection is not None:
            for item in decoded.items if isinstance(decoded, Batch) else (decoded,):
                if isinstance(item, Request):
                    connection.session.expect(item.id, CallExtras(trace_id=http_request_id))

    async def _forward(self, scope: Scope, send: Send, session_id: str | None, body: bytes) -> None:
        """A POST for a session this replica does not hold: to the replica holding it, or 404."""
        routes = self.routes
        if routes is None or session_id is None or SESSION_ID.fullmatch(session_id) is None:
            await respond_json(send, 404, error_payload(ErrorCode.INVALID_REQUEST, "Session not found"))
            return
        message = {"body": body.decode("utf-8", "replace"), "request_id": (scope.get("state") or {}).get("request_id")}
        try:
            outcome = await routes.forward(session_id, principal_subject(scope), message)
        except SharedStateUnavailable as problem:
            await respond_json(send, 503, error_payload(problem.code, problem.message, None, problem.data))
            return
        if outcome in (GONE, NOT_YOURS, 0):
            await respond_json(send, 404, error_payload(ErrorCode.INVALID_REQUEST, "Session not found"))
            return
        await respond(send, 202, b"Accepted", content_type="text/plain")

    async def _message(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("session_id", [None])[0]
        input_send = self.sessions.get(session_id) if session_id else None
        held_here = input_send is not None and self.owners.get(session_id) == principal_subject(scope)
        if not held_here and self.routes is None:
            await respond_json(send, 404, error_payload(ErrorCode.INVALID_REQUEST, "Session not found"))
            return
        body = await read_json_body(scope, receive, send, self.max_body_bytes)
        if body is None:
            return
        decoded = decode(body)
        if isinstance(decoded, Invalid) and decoded.reply is not None and decoded.reply.code == ErrorCode.PARSE_ERROR:
            await respond_json(send, 400, decoded.reply.to_dict())
            return
        if input_send is None or not held_here:
            await self._forward(scope, send, session_id, body)
            return
        output = self.outputs.get(session_id)
        if output is not None and output.congested:
            # The client is not reading its stream: taking more work would only pile up answers.
            await respond_json(
                send,
                503,
                error_payload(ErrorCode.INTERNAL_ERROR, "Session busy: read the event stream first"),
                headers=[("retry-after", "1")],
            )
            return
        assert session_id is not None
        self._expect(session_id, decoded, (scope.get("state") or {}).get("request_id"))
        try:
            input_send.send_nowait(decoded)  # anything else, even invalid, is answered on the stream
        except anyio.WouldBlock:
            # 64 messages wait for the session already: never hold a POST (and its body) for more.
            await respond_json(
                send,
                503,
                error_payload(ErrorCode.INTERNAL_ERROR, "Session busy: too many messages waiting"),
                headers=[("retry-after", "1")],
            )
            return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await respond_json(send, 404, error_payload(ErrorCode.INVALID_REQUEST, "Session not found"))
            return
        await respond(send, 202, b"Accepted", content_type="text/plain")


async def _close_on_disconnect(receive: Receive, input_send: MemoryObjectSendStream[Decoded]) -> None:
    await wait_disconnect(receive)
    input_send.close()


class _Output(ObjectSendStream[Outbound]):
    """A session's write stream: framed messages waiting for the SSE writer, bounded in bytes.

    From ``high_water`` bytes waiting it is :attr:`congested`: senders wait, and the session's input
    (:class:`_GatedInput`) takes no new message until the writer catches up.
    """

    def __init__(self, max_message_bytes: int, high_water: int) -> None:
        self.max_message_bytes = max_message_bytes
        self.high_water = high_water
        self.congested = False
        self._queue: deque[bytes] = deque()
        self._size = 0
        self._closed = False
        self._changed = anyio.Event()
        self._room = anyio.Event()
        self._room.set()

    async def send(self, item: Outbound) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        data = frame(item.message, self.max_message_bytes).rstrip(b"\n")
        if not data:
            return  # a notification that cannot be sent (logged)
        self._queue.append(data)
        self._size += len(data)
        self._changed.set()
        if self._size >= self.high_water:
            if not self.congested:
                self.congested = True
                self._room = anyio.Event()
            await self.wait_room()

    async def wait_room(self) -> None:
        """Return once the waiting bytes are below ``high_water`` (or the stream closed)."""
        while self.congested:
            await self._room.wait()

    async def next(self) -> bytes | None:
        """The next message to write; None once the session closed this stream and all is written."""
        while not self._queue:
            if self._closed:
                return None
            self._changed = anyio.Event()
            await self._changed.wait()
        return self._queue.popleft()

    def taken(self, size: int) -> None:
        """The writer has written ``size`` bytes of what :meth:`next` gave it."""
        self._size -= size
        if self.congested and self._size < self.high_water:
            self.congested = False
            self._room.set()

    async def aclose(self) -> None:
        self._closed = True
        self._changed.set()
        if self.congested:
            self.congested = False
            self._room.set()


class _GatedInput(ObjectReceiveStream[Decoded]):
    """A session's read stream that delivers nothing while its output is congested."""

    def __init__(self, inner: MemoryObjectReceiveStream[Decoded], gate: _Output) -> None:
        self._inner = inner
        self._gate = gate

    def receive_nowait(self) -> Decoded:
        if self._gate.congested:
            raise anyio.WouldBlock
        return self._inner.receive_nowait()

    async def receive(self) -> Decoded:
        await self._gate.wait_room()
        return await self._inner.receive()

    async def aclose(self) -> None:
        await self._inner.aclose()
