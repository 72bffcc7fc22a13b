"""The Streamable HTTP transport, both eras, as an ASGI application for one endpoint (``/mcp``).

Legacy era (2025-03-26 .. 2025-11-25): ``initialize`` mints a session (``Mcp-Session-Id``); each
session is one long-lived :class:`~plainmcp.connection.ServerConnection` whose outgoing messages
are routed to the SSE stream of the request they belong to (or to the GET stream). Streams are
numbered and buffered, so a dropped stream resumes with ``Last-Event-ID``.

Modern era (2026-07-28): each POST is one stateless request, served by a connection that lives for
that request only; the answer is JSON, or an SSE stream when notifications come first (progress,
logs, a ``subscriptions/listen`` stream). Closing the response stream cancels the request.
"""

from __future__ import annotations

import functools
import itertools
import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ObjectSendStream, TaskGroup

from .. import protocol
from ..connection import ServerConnection
from ..envelope import is_modern_request
from ..errors import ErrorCode
from ..framing import DEFAULT_MAX_MESSAGE_BYTES, BatchPart, frame, join_batch
from ..jsonrpc import (
    Batch,
    Decoded,
    ErrorResponse,
    Invalid,
    Message,
    Request,
    RequestId,
    Response,
    decode,
    encode,
    error_response,
)
from ..peer import CallExtras
from ..session import Observer, Outbound
from ..versions import LEGACY_VERSIONS, MODERN_VERSIONS, V2025_11_25, at_least
from .asgi import (
    EventStream,
    Receive,
    Scope,
    Send,
    error_payload,
    header,
    principal_subject,
    read_json_body,
    repeated_header,
    respond,
    respond_json,
    wait_disconnect,
)
from .event_buffer import EventBuffer, parse_event_id
from .stateless import MIRRORED_HEADERS, StatelessHTTP

if TYPE_CHECKING:
    from ..server import Server

logger = logging.getLogger(__name__)


class StreamableHTTP:
    """ASGI app for the MCP endpoint. Run it inside :meth:`running` (the HTTP app's lifespan does).

    Args:
        server: the :class:`~plainmcp.Server` to serve.
        max_body_bytes: larger POST bodies get 413.
        max_sessions: legacy sessions at once; a new ``initialize`` past it gets 503.
        session_idle_seconds: a legacy session unused this long (and with no open stream) is ended.
        replay_events, replay_bytes: events (and their total size) kept per stream for
            ``Last-Event-ID`` resumption.
        max_message_bytes: an outgoing message larger than this is replaced by an error (for a
            response) or dropped (for a notification).
        observer: passed to every session (``Session(observer=...)``): metrics.
        keepalive_seconds: interval of SSE comment lines on idle long-lived streams.
        retry_ms: the reconnection delay advised in each stream's priming event.
    """

    def __init__(
        self,
        server: Server,
        *,
        max_body_bytes: int = 4 * 1024 * 1024,
        max_sessions: int = 1000,
        session_idle_seconds: float = 1800.0,
        replay_events: int = 256,
        replay_bytes: int = 16 * 1024 * 1024,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        keepalive_seconds: float = 15.0,
        retry_ms: int = 1000,
        observer: Observer | None = None,
    ) -> None:
        self.server = server
        self.retry_ms = retry_ms
        self.max_body_bytes = max_body_bytes
        self.max_sessions = max_sessions
        self.session_idle_seconds = session_idle_seconds
        self.replay_events = replay_events
        self.replay_bytes = replay_bytes
        self.max_message_bytes = max_message_bytes
        self.observer = observer
        self.keepalive_seconds = keepalive_seconds
        self.sessions: dict[str, LegacySession] = {}
        self._task_group: TaskGroup | None = None
        self.stateless = StatelessHTTP(
            server, max_message_bytes=max_message_bytes, keepalive_seconds=keepalive_seconds, observer=observer
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Own the background work (legacy sessions, the idle reaper, what watches 2026-07-28
        exchanges) for the app's lifetime."""
        async with anyio.create_task_group() as task_group:
            self._task_group = self.stateless.background = task_group
            task_group.start_soon(self._reap_idle_sessions)
            try:
                yield
            finally:
                self.begin_shutdown()
                task_group.cancel_scope.cancel()
                self._task_group = self.stateless.background = None

    def begin_shutdown(self) -> None:
        """End what keeps connections open, gracefully: listen streams get their final result,
        legacy sessions end (their streams finish). Call before the HTTP server waits for its
        connections to close."""
        self.stateless.end_all()
        for session in list(self.sessions.values()):
            session.close()

    async def _reap_idle_sessions(self) -> None:
        while True:
            await anyio.sleep(min(30.0, self.session_idle_seconds / 2))
            now = time.monotonic()
            for session in list(self.sessions.values()):
                if now - session.last_seen > self.session_idle_seconds and not session.busy():
                    logger.info("session %s idle for %.0f s: ended", session.id[:8], now - session.last_seen)
                    session.close()

    # --------------------------------------------------------------------------------- routing

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send)
        elif method in ("GET", "DELETE"):
            if (repeated := repeated_header(scope, MIRRORED_HEADERS)) is not None:
                await _repeated(send, repeated)
                return
            session_id = header(scope, "mcp-session-id")
            if session_id is None or header(scope, "mcp-protocol-version") in MODERN_VERSIONS:
                # 2026-07-28 has no GET stream and no sessions; legacy needs a session for both.
                await respond(send, 405, headers=[("allow", "POST")])
            elif (session := self.sessions.get(session_id)) is None or not session.owned_by(scope):
                await _session_not_found(send)
            elif method == "GET":
                await self._get(scope, receive, send, session)
            else:
                session.close()
                await respond(send, 204)
        else:
            await respond(send, 405, headers=[("allow", "GET, POST, DELETE")])

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        accept = header(scope, "accept") or ""
        if not (("application/json" in accept and "text/event-stream" in accept) or "*/*" in accept):
            await respond_json(
                send,
                406,
                error_payload(
                    ErrorCode.INVALID_REQUEST, "Not Acceptable: accept application/json and text/event-stream"
                ),
            )
            return
        body = await read_json_body(scope, receive, send, self.max_body_bytes)
        if body is None:
            return
        decoded = decode(body)
        if isinstance(decoded, Invalid):
            reply = decoded.reply or ErrorResponse(
                None, {"code": ErrorCode.INVALID_REQUEST, "message": "Invalid Request"}
            )
            await respond_json(send, 400, reply.to_dict())
            return
        version_header = header(scope, "mcp-protocol-version")
        if _is_modern(decoded, version_header):
            await self.stateless.serve(scope, receive, send, decoded, version_header)
        else:
            await self._post_legacy(scope, receive, send, decoded, version_header)

    # ---------------------------------------------------------------------------------- legacy

    async def _post_legacy(
        self, scope: Scope, receive: Receive, send: Send, decoded: Decoded, version: str | None
    ) -> None:
        if (repeated := repeated_header(scope, MIRRORED_HEADERS)) is not None:
            await _repeated(send, repeated, decoded.id if isinstance(decoded, Request) else None)
            return
        session_id = header(scope, "mcp-session-id")
        if isinstance(decoded, Request) and decoded.method == protocol.INITIALIZE and session_id is None:
            if len(self.sessions) >= self.max_sessions:
                await respond_json(
                    send, 503, error_payload(ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later")
                )
                return
            session = self._open_session(principal_subject(scope))
        elif session_id is None:
            await respond_json(
                send, 400, error_payload(ErrorCode.INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            )
            return
        elif (found := self.sessions.get(session_id)) is None or not found.owned_by(scope):
            await _session_not_found(send)
            return
        elif version is not None and version not in LEGACY_VERSIONS:
            await respond_json(
                send,
                400,
                error_payload(ErrorCode.INVALID_REQUEST, f"Bad Request: unsupported MCP-Protocol-Version {version!r}"),
            )
            return
        else:
            session = found
        session.last_seen = time.monotonic()
        headers = [("mcp-session-id", session.id)]
        if isinstance(decoded, Batch):
            await self._post_batch(send, session, decoded, headers, (scope.get("state") or {}).get("request_id"))
        elif isinstance(decoded, Request):
            await session.answer(decoded, receive, send, headers, scope.get("state"))
        else:
            await session.feed(decoded)
            await respond(send, 202, headers=headers)

    async def _post_batch(
        self,
        send: Send,
        session: LegacySession,
        batch: Batch,
        headers: list[tuple[str, str]],
        http_request_id: str | None,
    ) -> None:
        if not session.connection.accepts_batches():
            await respond_json(
                send,
                400,
                error_payload(
                    ErrorCode.INVALID_REQUEST, "Invalid Request: batches are not supported in this protocol revision"
                ),
                headers=headers,
            )
            return
        replies: list[BatchPart] = [
            (None, encode(item.reply)) for item in batch.items if isinstance(item, Invalid) and item.reply is not None
        ]
        # One pass, each step O(1): the batch costs time linear in its length.
        to_feed: list[Message] = []
        buffers: dict[RequestId, EventBuffer] = {}
        for item in batch.items:
            if isinstance(item, Invalid):
                continue
            if isinstance(item, Request):
                if item.id in buffers or session.owns(item.id):
                    replies.append(
                        (
                            None,
                            encode(
                                error_response(item.id, ErrorCode.INVALID_REQUEST, "Invalid Request: id already in use")
                            ),
                        )
                    )
                    continue
                buffers[item.id] = session.open_stream(item.id)
                session.attach(item.id, http_request_id)
            to_feed.append(item)
        for item in to_feed:
            await session.feed(item)
        for buffer in buffers.values():
            await buffer.wait_finished()
            if buffer.reply is not None:
                replies.append(buffer.reply)
        # The reply is one message: within the server's message limit, every id still answered.
        body = join_batch(replies, self.max_message_bytes)
        if body:
            await respond(send, 200, body, content_type="application/json", headers=headers)
        else:
            await respond(send, 202, headers=headers)

    def _open_session(self, owner: str | None) -> LegacySession:
        assert self._task_group is not None, "StreamableHTTP must run inside running() (the app lifespan)"
        session = LegacySession(self, secrets.token_urlsafe(24), owner)
        self.sessions[session.id] = session
        self._task_group.start_soon(session.run)
        logger.info("session %s opened (%d open)", session.id[:8], len(self.sessions))
        return session

    async def _get(self, scope: Scope, receive: Receive, send: Send, session: LegacySession) -> None:
        if "text/event-stream" not in (header(scope, "accept") or "") and "*/*" not in (header(scope, "accept") or ""):
            await respond(send, 406)
            return
        session.last_seen = time.monotonic()
        last_event_id = header(scope, "last-event-id")
        if last_event_id:
            # Only an id we issued, still in the replay window, resumes; anything else (of any
            # length or alphabet) is a clear 404, never a fresh stream that silently lost events.
            resume = parse_event_id(last_event_id)
            buffer = session.buffers.get(resume[0]) if resume is not None else None
            if resume is None or buffer is None:
                await respond_json(
                    send, 404, error_payload(ErrorCode.INVALID_REQUEST, "Unknown or expired Last-Event-ID")
                )
                return
            after = resume[1]
        else:
            buffer = session.standalone
            if buffer.readers:
                await respond_json(
                    send, 409, error_payload(ErrorCode.INVALID_REQUEST, "Conflict: a GET stream is already open")
                )
                return
            # The first GET also gets what was published before it (as far as the buffer reaches);
            # a later one without Last-Event-ID starts from now, since the earlier GET saw the rest.
            after = 0 if not session.standalone_opened else buffer.seq
            session.standalone_opened = True
        await session.stream(buffer, after, receive, send, [("mcp-session-id", session.id)])


class LegacySession:
    """One legacy client session: a server connection and the streams its messages go to.

    ``owner`` is the authenticated subject that opened it (None without authentication): a
    session id is useless with anyone else's credentials.
    """

    def __init__(self, app: StreamableHTTP, session_id: str, owner: str | None = None) -> None:
        self.app = app
        self.id = session_id
        self.owner = owner
        self.last_seen = time.monotonic()
        self._input, input_receive = anyio.create_memory_object_stream[Decoded](64)
        self.connection = ServerConnection(app.server, input_receive, _RoutingStream(self), observer=app.observer)
        # Stream keys: a random prefix of the session's and a counter (unique within the session,
        # as event ids must be), not a read of the OS random source per request.
        self._key_prefix = secrets.token_hex(4)
        self._keys = itertools.count(1)
        self.standalone = EventBuffer(app.replay_events, self._next_key(), max_bytes=app.replay_bytes)
        self.standalone_opened = False
        self.buffers: dict[str, EventBuffer] = {self.standalone.key: self.standalone}
        self._by_request: dict[RequestId, EventBuffer] = {}
        self._finished: list[str] = []
        self.closed = False

    async def run(self) -> None:
        try:
            await self.connection.run()
        finally:
            self.close()
            self.app.sessions.pop(self.id, None)
            for buffer in self.buffers.values():
                buffer.finish()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.app.sessions.pop(self.id, None)
            self._input.close()

    def owned_by(self, scope: Scope) -> bool:
        return principal_subject(scope) == self.owner

    def busy(self) -> bool:
        return any(buffer.readers for buffer in self.buffers.values())

    async def feed(self, item: Decoded) -> None:
        try:
            try:
                self._input.send_nowait(item)  # no extra event-loop turn when there is room
            except anyio.WouldBlock:
                await self._input.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("session %s closed; dropped input", self.id[:8])

    def _next_key(self) -> str:
        return f"{self._key_prefix}{next(self._keys):x}"

    def owns(self, request_id: RequestId) -> bool:
        """Whether a request with this id is being answered on a stream of this session."""
        return request_id in self._by_request

    def open_stream(self, request_id: RequestId) -> EventBuffer:
        buffer = EventBuffer(self.app.replay_events, self._next_key(), max_bytes=self.app.replay_bytes)
        self.buffers[buffer.key] = buffer
        self._by_request[request_id] = buffer
        return buffer

    def route(self, outbound: Outbound) -> None:
        """Send each outgoing message to the stream of the request it belongs to."""
        for message in outbound.message if isinstance(outbound.message, list) else [outbound.message]:
            self._deliver(message, outbound.related_to)

    def _deliver(self, message: Message, related_to: RequestId | None) -> None:
        reply = message if isinstance(message, (Response, ErrorResponse)) else None
        target = reply.id if reply is not None else related_to
        buffer = self._by_request.get(target) if target is not None else None
        data = frame(message, self.app.max_message_bytes).rstrip(b"\n")
        if not data:
            return  # a notification that cannot be sent (logged)
        (buffer or self.standalone).push(data)
        if reply is not None and buffer is not None and target is not None:  # target found the buffer
            buffer.reply = (reply.id if isinstance(reply, Response) else None, data)
            buffer.finish()
            del self._by_request[target]
            self._retire(buffer.key)

    def _retire(self, key: str) -> None:
        # Finished streams stay resumable for a while: keep the most recent few.
        self._finished.append(key)
        while len(self._finished) > 32:
            self.buffers.pop(self._finished.pop(0), None)

    async def answer(
        self,
        request: Request,
        receive: Receive,
        send: Send,
        headers: list[tuple[str, str]],
        scope_state: dict[str, Any] | None = None,
    ) -> None:
        """Serve one posted request: JSON if its answer comes first, else an SSE stream."""
        if self.owns(request.id):
            # Refused here, before it can take over the stream of the request that owns the id.
            payload = error_payload(ErrorCode.INVALID_REQUEST, "Invalid Request: id already in use", request.id)
            await respond_json(send, 200, payload, headers=headers)
            return
        buffer = self.open_stream(request.id)
        self.attach(request.id, (scope_state or {}).get("request_id"))
        await self.feed(request)
        await buffer.wait_started()  # the interruption count is still 0 when a POST starts
        if buffer.finished and buffer.seq == 0:
            await respond_json(
                send, 500, error_payload(ErrorCode.INTERNAL_ERROR, "Session ended", request.id), headers=headers
            )
            return
        if buffer.finished and buffer.seq == 1:
            await respond(send, 200, buffer.history[0][1], content_type="application/json", headers=headers)
            return
        await self.stream(buffer, 0, receive, send, headers, interruptions=0)

    def attach(self, request_id: RequestId, http_request_id: str | None) -> None:
        """Give the request about to be fed its per-call extras: the HTTP request id it came
        with, and the way to end its SSE response early (``ctx.close_sse_stream()``)."""
        extras = CallExtras(trace_id=http_request_id, close_stream=functools.partial(self.close_stream, request_id))
        self.connection.session.expect(request_id, extras)

    def close_stream(self, request_id: RequestId) -> bool:
        """End the SSE response of ``request_id`` now (SSE polling, SEP-1699): the client
        reconnects with ``Last-Event-ID`` and gets the rest. False if there is no such stream."""
        buffer = self._by_request.get(request_id)
        if buffer is None or not at_least(self.connection.version or "", V2025_11_25):
            return False
        buffer.interrupt()
        return True

    async def stream(
        self,
        buffer: EventBuffer,
        after: int,
        receive: Receive,
        send: Send,
        headers: list[tuple[str, str]],
        *,
        interruptions: int | None = None,
    ) -> None:
        """Write ``buffer``'s events after ``after`` as SSE until it finishes or the client leaves.

        Leaving is not cancelling (legacy): what is not delivered stays for a resuming GET.
        """
        events = EventStream(send)
        await events.start(headers)
        version = self.connection.version or ""
        if at_least(version, V2025_11_25):
            # The priming event: an id to resume from before anything else happens, and how
            # soon to come back if the stream closes (SSE polling).
            await events.event("", id=buffer.event_id(after), retry=self.app.retry_ms)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(_cancel_on_disconnect, receive, task_group.cancel_scope)
            task_group.start_soon(events.keep_alive, self.app.keepalive_seconds)
            try:
                async for seq, data in buffer.read_from(after, interruptions):
                    await events.event(data.decode("utf-8"), event="message", id=buffer.event_id(seq))
            except OSError:
                pass  # the client went away while we wrote
            task_group.cancel_scope.cancel()
        try:
            await events.close()
        except OSError:
            pass


class _RoutingStream(ObjectSendStream[Outbound]):
    """A legacy session's write stream: each message goes straight into its stream's buffer."""

    def __init__(self, session: LegacySession) -> None:
        self._session = session

    async def send(self, item: Outbound) -> None:
        self._session.route(item)

    async def aclose(self) -> None:
        pass


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    await wait_disconnect(receive)
    scope.cancel()


async def _repeated(send: Send, name: str, request_id: RequestId | None = None) -> None:
    await respond_json(
        send,
        400,
        error_payload(ErrorCode.INVALID_REQUEST, f"Bad Request: the {name} header was sent more than once", request_id),
    )


async def _session_not_found(send: Send) -> None:
    await respond_json(
        send,
        404,
        error_payload(ErrorCode.INVALID_REQUEST, "Session not found: it ended or never existed; initialize again"),
    )


def _is_modern(decoded: Decoded, version_header: str | None) -> bool:
    if version_header in MODERN_VERSIONS:
        return True
    if isinstance(decoded, Request):
        return is_modern_request(decoded)
    return False
