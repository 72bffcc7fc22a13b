"""The Streamable HTTP transport, both eras, as an ASGI application for one endpoint (``/mcp``).

Legacy era (2025-03-26 .. 2025-11-25): ``initialize`` mints a session (``Mcp-Session-Id``); each
session is one long-lived :class:`~plainmcp.http.legacy_session.LegacySession` whose outgoing
messages are routed to the SSE stream of the request they belong to (or to the GET stream). Streams
are numbered and buffered, so a dropped stream resumes with ``Last-Event-ID``. Sessions are recorded
in the server's session directory (:mod:`plainmcp.state.sessions`): with shared state, a session
made on any replica is served by every replica (see :mod:`plainmcp.http.legacy_session`).

Modern era (2026-07-28): each POST is one stateless request, served by a connection that lives for
that request only; the answer is JSON, or an SSE stream when notifications come first (progress,
logs, a ``subscriptions/listen`` stream). Closing the response stream cancels the request.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from .. import protocol
from ..envelope import is_modern_request
from ..errors import ErrorCode
from ..framing import DEFAULT_MAX_MESSAGE_BYTES, BatchPart, join_batch
from ..jsonrpc import (
    Batch,
    Decoded,
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
    error_response,
)
from ..session import Observer
from ..state import SharedStateUnavailable
from ..state.event_store import TOPIC, RedisEventStore, StoredEvent, event_store
from ..state.sessions import MemorySessions, SessionDirectory, SessionRecord, session_directory
from ..versions import LEGACY_VERSIONS, MODERN_VERSIONS
from .asgi import (
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
)
from .event_buffer import EventBuffer, parse_event_id
from .legacy_session import LegacySession
from .shared_streams import relay_legacy, stream_shared
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
        #: The sessions this process holds (with replicas: its copies of them).
        self.sessions: dict[str, LegacySession] = {}
        #: Where sessions are recorded; replaced by the shared one (if any) when running starts.
        self.directory: SessionDirectory = MemorySessions(session_idle_seconds)
        #: The shared event store (None in one process: the sessions' own buffers are the store).
        self.events: RedisEventStore | None = None
        #: This instance's name in messages to the other replicas.
        self.replica = secrets.token_hex(8)
        self._wakers: dict[tuple[str, str], anyio.Event] = {}
        self._task_group: TaskGroup | None = None
        self.stateless = StatelessHTTP(
            server, max_message_bytes=max_message_bytes, keepalive_seconds=keepalive_seconds, observer=observer
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Own the background work (legacy sessions, the idle reaper, what watches 2026-07-28
        exchanges) for the app's lifetime."""
        shared = self.server.shared
        self.directory = session_directory(shared, self.session_idle_seconds)
        self.events = event_store(shared, max_events=self.replay_events, ttl_seconds=self.session_idle_seconds)
        async with anyio.create_task_group() as task_group:
            self._task_group = self.stateless.background = task_group
            task_group.start_soon(self._reap_idle_sessions)
            if self.events is not None:
                await task_group.start(relay_legacy, self)  # serve once other replicas can be heard
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
                if session.busy():
                    if self.events is None:
                        await self.directory.touch(session.id)  # an open stream keeps it counted
                elif now - session.last_seen > self.session_idle_seconds:
                    # With replicas only this copy goes: the record expires by itself when unused.
                    logger.info("session %s idle for %.0f s: ended here", session.id[:8], now - session.last_seen)
                    session.close()

    def spawn(self, func: Any, *args: Any) -> None:
        """Run ``func(*args)`` in the app's background (it must not raise)."""
        if self._task_group is not None:
            self._task_group.start_soon(func, *args)

    def forget(self, session: LegacySession) -> None:
        """A session's copy here has ended; in one process that ends the session."""
        if self.events is None:
            self.spawn(self.directory.end, session.id)

    # ------------------------------------------------------------------- readers of the store

    def waker(self, session_id: str, key: str) -> anyio.Event:
        """Set at the next write to stream ``key`` of the session (or when the session ends here)."""
        event = self._wakers.get((session_id, key))
        if event is None:
            event = self._wakers[(session_id, key)] = anyio.Event()
        return event

    def wake(self, session_id: str, key: str) -> None:
        event = self._wakers.pop((session_id, key), None)
        if event is not None:
            event.set()

    def wake_all(self, session_id: str) -> None:
        for name in [name for name in self._wakers if name[0] == session_id]:
            self._wakers.pop(name).set()

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
                return
            try:
                session = await self._find(session_id, scope)
                if session is None:
                    await _session_not_found(send)
                elif method == "GET":
                    await self._get(scope, receive, send, session)
                else:
                    await self._end(session)
                    await respond(send, 204)
            except SharedStateUnavailable as problem:
                await _unavailable(send, problem)
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
        try:
            await self._serve_legacy(scope, receive, send, decoded, version)
        except SharedStateUnavailable as problem:
            await _unavailable(send, problem, decoded.id if isinstance(decoded, Request) else None)

    async def _serve_legacy(
        self, scope: Scope, receive: Receive, send: Send, decoded: Decoded, version: str | None
    ) -> None:
        session_id = header(scope, "mcp-session-id")
        if isinstance(decoded, Request) and decoded.method == protocol.INITIALIZE and session_id is None:
            opened = await self._open_session(principal_subject(scope))
            if opened is None:
                await respond_json(
                    send, 503, error_payload(ErrorCode.INTERNAL_ERROR, "Too many sessions; try again later")
                )
                return
            session = opened
        elif session_id is None:
            await respond_json(
                send, 400, error_payload(ErrorCode.INVALID_REQUEST, "Bad Request: missing Mcp-Session-Id header")
            )
            return
        elif (found := await self._find(session_id, scope)) is None:
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
            await self._accept(session, decoded)
            await respond(send, 202, headers=headers)

    async def _accept(self, session: LegacySession, message: Decoded) -> None:
        """A posted notification or reply. With replicas, what may concern work running on another
        replica (a reply to its request, a cancellation, progress) is forwarded there too."""
        if isinstance(message, (Response, ErrorResponse)):
            if self.events is None or session.connection.session.awaits(message.id):
                await session.feed(message)
            else:
                await self._forward(session, message)
            return
        await session.feed(message)
        if not isinstance(message, Notification):
            return
        if self.events is not None and message.method in _FORWARDED:
            await self._forward(session, message)
        else:
            await anyio.lowlevel.checkpoint()  # the session reads it (initialized: ready) ...
            await session.sync()  # ... and the change is saved before the 202

    async def _forward(self, session: LegacySession, message: Message) -> None:
        text = encode(message).decode("utf-8")
        await self.server.shared.fanout.publish(
            TOPIC, {"type": "input", "sid": session.id, "from": self.replica, "message": text}
        )

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
            if isinstance(item, Request):
                await session.feed(item)
            else:
                await self._accept(session, item)
        for buffer in buffers.values():
            await buffer.wait_finished()
            if buffer.reply is not None:
                replies.append(buffer.reply)
        await session.sync()
        # The reply is one message: within the server's message limit, every id still answered.
        body = join_batch(replies, self.max_message_bytes)
        if body:
            await respond(send, 200, body, content_type="application/json", headers=headers)
        else:
            await respond(send, 202, headers=headers)

    async def _open_session(self, owner: str | None) -> LegacySession | None:
        """A new session, recorded in the directory; None past ``max_sessions``."""
        # 192 random bits: the id is the session's only secret without authentication.
        record = SessionRecord(secrets.token_urlsafe(24), owner, secrets.token_hex(5))
        if not await self.directory.create(record, self.max_sessions):
            return None
        session = self._hold(record)
        logger.info("session %s opened (%d held here)", session.id[:8], len(self.sessions))
        return session

    def _hold(self, record: SessionRecord) -> LegacySession:
        assert self._task_group is not None, "StreamableHTTP must run inside running() (the app lifespan)"
        session = LegacySession(self, record)
        self.sessions[session.id] = session
        self._task_group.start_soon(session.run)
        return session

    async def _find(self, session_id: str, scope: Scope) -> LegacySession | None:
        """The session ``session_id`` if it lives and belongs to the caller: held here, or (with
        replicas) rebuilt here from its record. Raises SharedStateUnavailable."""
        local = self.sessions.get(session_id)
        if self.events is None:
            session = local  # in one process, what is held here is the truth ...
            if local is not None:
                await self.directory.touch(session_id)  # ... and its record (the count) follows it
        else:
            record = await self.directory.touch(session_id)  # one round trip; renews the record
            if record is None:
                if local is not None:
                    local.close()  # ended or expired elsewhere
                return None
            if local is None or local.closed:
                session = self._hold(record)
                logger.info("session %s taken up here (%d held here)", session_id[:8], len(self.sessions))
            else:
                local.apply(record)
                session = local
        return session if session is not None and session.owned_by(scope) else None

    async def _end(self, session: LegacySession) -> None:
        """DELETE: the session ends everywhere."""
        session.ended()
        await self.directory.end(session.id, self.replica)
        if self.events is not None:
            await self.events.drop(session.id, [session.standalone.key])

    async def _get(self, scope: Scope, receive: Receive, send: Send, session: LegacySession) -> None:
        if "text/event-stream" not in (header(scope, "accept") or "") and "*/*" not in (header(scope, "accept") or ""):
            await respond(send, 406)
            return
        session.last_seen = time.monotonic()
        headers = [("mcp-session-id", session.id)]
        last_event_id = header(scope, "last-event-id")
        if self.events is not None:
            await self._get_shared(receive, send, session, last_event_id, headers)
            return
        if last_event_id:
            # Only an id we issued, still in the replay window, resumes; anything else (of any
            # length or alphabet) is a clear 404, never a fresh stream that silently lost events.
            resume = parse_event_id(last_event_id)
            buffer = session.buffers.get(resume[0]) if resume is not None else None
            if resume is None or buffer is None:
                await _unknown_event_id(send)
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
        await session.stream(buffer, after, receive, send, headers)

    async def _request_stream(self, session: LegacySession, key: str, after: int) -> list[StoredEvent] | None:
        """The first events of request stream ``key`` from the store, asking the replica that serves
        the request to share it (bounded wait); None if no replica has it."""
        assert self.events is not None
        found = await self.events.read_after(session.id, key, after)
        if found is not None:
            return found
        waker = self.waker(session.id, key)
        await self.server.shared.fanout.publish(TOPIC, {"type": "want", "sid": session.id, "key": key})
        with anyio.move_on_after(WANT_SECONDS):
            await waker.wait()
        return await self.events.read_after(session.id, key, after)

    async def _get_shared(
        self,
        receive: Receive,
        send: Send,
        session: LegacySession,
        last_event_id: str | None,
        headers: list[tuple[str, str]],
    ) -> None:
        """GET with replicas: the GET stream lives in the event store; a request's stream is read
        here if this replica serves the request, else from the store."""
        assert self.events is not None
        key = session.standalone.key
        if last_event_id:
            resume = parse_event_id(last_event_id)
            if resume is None:
                await _unknown_event_id(send)
                return
            key, after = resume
            local = session.buffers.get(key)
            if local is not None and local is not session.standalone:
                await session.stream(local, after, receive, send, headers)
                return
            if key != session.standalone.key:
                first = await self._request_stream(session, key, after)
                if first is None:
                    await _unknown_event_id(send)
                    return
                await stream_shared(session, key, after, receive, send, headers, first=first, ends=True)
                return
        else:
            if session.shared_readers:
                await respond_json(
                    send, 409, error_payload(ErrorCode.INVALID_REQUEST, "Conflict: a GET stream is already open")
                )
                return
            # As in one process: the first GET gets what was published before it.
            after = 0 if not session.standalone_opened else await self.events.last(session.id, key)
            session.standalone_opened = True
            await session.sync()
        await stream_shared(session, key, after, receive, send, headers, ends=False)


async def _repeated(send: Send, name: str, request_id: RequestId | None = None) -> None:
    await respond_json(
        send,
        400,
        error_payload(ErrorCode.INVALID_REQUEST, f"Bad Request: the {name} header was sent more than once", request_id),
    )


async def _unknown_event_id(send: Send) -> None:
    await respond_json(send, 404, error_payload(ErrorCode.INVALID_REQUEST, "Unknown or expired Last-Event-ID"))


async def _unavailable(send: Send, problem: SharedStateUnavailable, request_id: RequestId | None = None) -> None:
    """The session directory (Redis) is unreachable: 503 and a JSON-RPC error, never a hang or a 500."""
    await respond_json(send, 503, error_payload(problem.code, problem.message, request_id, problem.data))


async def _session_not_found(send: Send) -> None:
    await respond_json(
        send,
        404,
        error_payload(ErrorCode.INVALID_REQUEST, "Session not found: it ended or never existed; initialize again"),
    )


#: How long a GET resuming a request stream waits for the replica serving it to share it.
WANT_SECONDS = 2.0

#: Client notifications that may concern work running on another replica.
_FORWARDED = frozenset({protocol.CANCELLED, protocol.PROGRESS})


def _is_modern(decoded: Decoded, version_header: str | None) -> bool:
    if version_header in MODERN_VERSIONS:
        return True
    if isinstance(decoded, Request):
        return is_modern_request(decoded)
    return False
