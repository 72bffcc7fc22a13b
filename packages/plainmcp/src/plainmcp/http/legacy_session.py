"""One legacy Streamable HTTP session as this replica holds it: its connection and its SSE streams.

Each outgoing message is routed to the stream of the request it belongs to (or to the session's GET
stream). Streams are numbered and buffered, so a dropped stream resumes with ``Last-Event-ID``.

With one process this object *is* the session. With replicas (a shared
:class:`~plainmcp.state.sessions.SessionDirectory`), it is one replica's copy, built from the
session's record on the first request that reaches this replica; then:

- what the client negotiated or changed (initialize, initialized, log level, subscriptions) is saved
  to the record before the answer goes out, and copies elsewhere follow (:meth:`LegacySession.apply`);
- a request's SSE stream stays here (it is read here, as in one process) until another replica is
  asked to resume it: that replica asks for it on the fan-out and this copy mirrors the stream to the
  shared event store from then on (:meth:`LegacySession.share_stream`), which costs nothing until a
  stream is resumed elsewhere; a stream cut with ``close_sse_stream`` is mirrored at once; the GET
  stream lives in the store only (any replica may write to it);
- our own requests to the client (sampling, elicitation, roots) are numbered from a random base,
  so a reply posted to another replica is forwarded to the copy waiting for it.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import logging
import secrets
import time
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from anyio.abc import ObjectSendStream

from ..connection import ServerConnection
from ..errors import ErrorCode
from ..framing import frame
from ..jsonrpc import Decoded, ErrorResponse, Message, Request, RequestId, Response
from ..peer import CallExtras
from ..session import Outbound
from ..state import SharedStateUnavailable
from ..state.sessions import SessionRecord
from ..versions import V2025_11_25, at_least
from .asgi import (
    EventStream,
    Receive,
    Scope,
    Send,
    error_payload,
    principal_subject,
    respond,
    respond_json,
    wait_disconnect,
)
from .event_buffer import EventBuffer

if TYPE_CHECKING:
    from ..server import Server
    from ..session import Observer
    from ..state.event_store import RedisEventStore, StoredEvent
    from ..state.sessions import SessionDirectory

logger = logging.getLogger(__name__)

#: Finished request streams kept resumable per copy (the most recent ones).
KEPT_FINISHED_STREAMS = 32
#: Writes a copy may have queued for the store before new ones are dropped (with a warning).
OUTBOX_LIMIT = 4096
#: Events written to (or read from) the store at a time.
READ_COUNT = 256


def task_owner(session_id: str) -> str:
    """The name of a session's tasks in the shared task store (not the session id: that is a secret)."""
    return "session:" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


class SessionHost(Protocol):
    """What a session needs of the app holding it (:class:`~plainmcp.http.streamable.StreamableHTTP`)."""

    server: Server
    observer: Observer | None
    replay_events: int
    replay_bytes: int
    max_message_bytes: int
    retry_ms: int
    keepalive_seconds: float
    session_idle_seconds: float
    sessions: dict[str, LegacySession]
    directory: SessionDirectory
    events: RedisEventStore | None
    replica: str

    def forget(self, session: LegacySession) -> None: ...

    def spawn(self, func: Any, *args: Any) -> None: ...

    def waker(self, session_id: str, key: str) -> anyio.Event: ...

    def wake(self, session_id: str, key: str) -> None: ...

    def wake_all(self, session_id: str) -> None: ...


class LegacySession:
    """One legacy client session (or this replica's copy of it), made from its record.

    ``owner`` is the authenticated subject that opened it (None without authentication): a
    session id is useless with anyone else's credentials.
    """

    def __init__(self, app: SessionHost, record: SessionRecord) -> None:
        self.app = app
        self.record = record
        self.id = record.id
        self.owner = record.owner
        self.last_seen = time.monotonic()
        self.replicated = app.events is not None
        self._input, input_receive = anyio.create_memory_object_stream[Decoded](64)
        # Copies on several replicas number their requests to the client far apart (see the module).
        first_id = (secrets.randbits(31) + 1) << 20 if self.replicated else 1
        self.connection = _SessionConnection(
            self, app.server, input_receive, _RoutingStream(self), observer=app.observer, first_request_id=first_id
        )
        # Stream keys: a random prefix of this copy's and a counter (unique within the session, as
        # event ids must be), not a read of the OS random source per request.
        self._key_prefix = secrets.token_hex(4)
        self._keys = itertools.count(1)
        self.standalone = EventBuffer(app.replay_events, record.standalone_key, max_bytes=app.replay_bytes)
        self.standalone_opened = record.standalone_opened
        self.buffers: dict[str, EventBuffer] = {self.standalone.key: self.standalone}
        self._by_request: dict[RequestId, EventBuffer] = {}
        self._finished: list[str] = []
        self.closed = False
        #: Readers of the shared GET stream on this replica (replicated only).
        self.shared_readers = 0
        #: Set while a published notification is being delivered: the key that lets one replica's copy
        #: write it to the shared GET stream when every replica's copy receives it.
        self._delivering: str | None = None
        self.outbox = Outbox(self) if self.replicated else None
        if self.replicated:
            # Legacy tasks belong to the session, on whichever replica (not to this copy).
            self.connection.legacy.tasks.owner = task_owner(self.id)
        self._saved = record.state()
        if record.version is not None:
            self.apply(record, force=True)

    # -------------------------------------------------------------------------------- lifetime

    async def run(self) -> None:
        try:
            async with anyio.create_task_group() as task_group:
                if self.outbox is not None:
                    task_group.start_soon(self.outbox.run)
                await self.connection.run()
                if self.outbox is not None:
                    self.outbox.close()  # what is queued still goes out, for a while
                    with anyio.move_on_after(2.0):
                        await self.outbox.done.wait()
                task_group.cancel_scope.cancel()
        finally:
            self.close()
            for buffer in self.buffers.values():
                buffer.finish()
            self.app.forget(self)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            if self.app.sessions.get(self.id) is self:
                del self.app.sessions[self.id]
            self._input.close()
            self.app.wake_all(self.id)

    def ended(self) -> None:
        """The session ended (DELETE, on any replica): this copy closes, and the session's tasks
        running here stop (with replicas they outlive a copy, not the session)."""
        self.close()
        if self.replicated:
            self.app.server.tasks.forget_owner(task_owner(self.id))

    def owned_by(self, scope: Scope) -> bool:
        return principal_subject(scope) == self.owner

    def busy(self) -> bool:
        return self.shared_readers > 0 or any(buffer.readers for buffer in self.buffers.values())

    async def feed(self, item: Decoded) -> None:
        try:
            try:
                self._input.send_nowait(item)  # no extra event-loop turn when there is room
            except anyio.WouldBlock:
                await self._input.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("session %s closed; dropped input", self.id[:8])

    # ---------------------------------------------------------------------------- the record

    def apply(self, record: SessionRecord, *, force: bool = False) -> None:
        """Take over what another replica's copy saved (unless nothing changed since we last saw it:
        then our own unsaved changes stay)."""
        state = record.state()
        if state == self._saved and not force:
            return
        legacy = self.connection.legacy
        legacy.version = record.version
        legacy.ready = record.ready
        legacy.client_info = record.client_info
        legacy.client_capabilities = record.client_capabilities
        legacy.log_threshold = record.log_threshold
        if legacy.subscriptions != set(record.subscriptions):
            legacy.subscriptions = set(record.subscriptions)
            self.app.server.bus.changed()
        self.standalone_opened = self.standalone_opened or record.standalone_opened
        self.record = record
        self._saved = state

    async def sync(self) -> None:
        """Save what this copy changed (before the answer that follows it goes out)."""
        legacy = self.connection.legacy
        record = self.record
        record.version = legacy.version
        record.ready = legacy.ready
        record.client_info = legacy.client_info
        record.client_capabilities = legacy.client_capabilities
        record.log_threshold = legacy.log_threshold
        record.subscriptions = sorted(legacy.subscriptions)
        record.standalone_opened = self.standalone_opened
        state = record.state()
        if state == self._saved:
            return
        try:
            await self.app.directory.save(record, self.app.replica)
        except SharedStateUnavailable:
            logger.warning("session %s: a change could not be shared with the other replicas", self.id[:8])
            return
        self._saved = state

    # ------------------------------------------------------------------------------- routing

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
        if buffer is None and self.outbox is not None:
            self.outbox.to_get_stream(data, self._delivering)
            return
        (buffer or self.standalone).push(data, last=reply is not None and buffer is not None)
        if reply is not None and buffer is not None and target is not None:  # target found the buffer
            buffer.reply = (reply.id if isinstance(reply, Response) else None, data)
            buffer.finish()
            del self._by_request[target]
            self._retire(buffer.key)

    def delivering(self, method: str, params: dict[str, Any] | None, publication: str | None = None) -> str:
        """The key naming one published notification to this session, the same on every replica: the
        fan-out's name for it when it was relayed (two equal changes stay two), else its content (a change
        every replica's watcher observed for itself is written once)."""
        named = ["relayed", publication] if publication is not None else [method, params]
        text = json.dumps([self.id, *named], sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def _retire(self, key: str) -> None:
        # Finished streams stay resumable for a while: keep the most recent few.
        self._finished.append(key)
        while len(self._finished) > KEPT_FINISHED_STREAMS:
            self.buffers.pop(self._finished.pop(0), None)

    # ------------------------------------------------------------------------------- answers

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
            await self.sync()
            await respond(send, 200, buffer.history[0][1], content_type="application/json", headers=headers)
            return
        await self.stream(buffer, 0, receive, send, headers, interruptions=0)
        await self.sync()

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
        self.share_stream(buffer.key)  # the client comes back for the rest, maybe elsewhere
        buffer.interrupt()
        return True

    def share_stream(self, key: str) -> bool:
        """Mirror request stream ``key`` to the shared event store from now on (its history first),
        so another replica can resume it; False if this copy does not have it."""
        buffer = self.buffers.get(key)
        if self.outbox is None or buffer is None or buffer is self.standalone:
            return False
        self.outbox.open_request_stream(key)
        buffer.mirror(functools.partial(self.outbox.to_request_stream, key))
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
        if at_least(self.connection.version or "", V2025_11_25):
            # The priming event: an id to resume from before anything else happens, and how
            # soon to come back if the stream closes (SSE polling).
            await events.event("", id=buffer.event_id(after), retry=self.app.retry_ms)
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(cancel_on_disconnect, receive, task_group.cancel_scope)
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


async def cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    await wait_disconnect(receive)
    scope.cancel()


class Outbox:
    """The event-store writes of one session copy, made in order by :meth:`run`."""

    def __init__(self, session: LegacySession) -> None:
        self.session = session
        self._send, self._receive = anyio.create_memory_object_stream[tuple[Any, ...]](OUTBOX_LIMIT)
        self.done = anyio.Event()

    def to_get_stream(self, data: bytes, dedupe: str | None) -> None:
        """Queue a message for the session's GET stream (``dedupe``: written once for all replicas)."""
        self._put(("get", data, dedupe))

    def open_request_stream(self, key: str) -> None:
        """Queue the creation of request stream ``key`` in the store (with no event yet, it exists)."""
        self._put(("request", key, (0, b"", False)))

    def to_request_stream(self, key: str, seq: int, data: bytes, last: bool) -> None:
        """Queue a copy of event ``seq`` of the request stream ``key`` (``EventBuffer.mirror``)."""
        self._put(("request", key, (seq, data, last)))

    def _put(self, item: tuple[Any, ...]) -> None:
        try:
            self._send.send_nowait(item)
        except anyio.WouldBlock:
            logger.warning(
                "session %s: event store writes are %d behind; one dropped", self.session.id[:8], OUTBOX_LIMIT
            )
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def close(self) -> None:
        self._send.close()

    async def run(self) -> None:
        try:
            async with self._receive:
                async for first in self._receive:
                    items = [first]
                    while len(items) < READ_COUNT:
                        try:
                            items.append(self._receive.receive_nowait())
                        except (anyio.WouldBlock, anyio.EndOfStream):
                            break
                    await self._write(items)
        finally:
            self.done.set()

    async def _write(self, items: list[tuple[Any, ...]]) -> None:
        store = self.session.app.events
        assert store is not None
        session_id = self.session.id
        index = 0
        try:
            while index < len(items):
                item = items[index]
                index += 1
                if item[0] == "get":
                    await store.append_next(session_id, self.session.standalone.key, item[1], item[2])
                    continue
                batch: list[StoredEvent] = [item[2]]
                while index < len(items) and items[index][0] == "request" and items[index][1] == item[1]:
                    batch.append(items[index][2])
                    index += 1
                await store.append(session_id, item[1], batch)  # one round trip for the lot
        except Exception as problem:  # never the session's end: the store is only for resuming elsewhere
            if not isinstance(problem, SharedStateUnavailable):
                logger.exception("session %s: writing to the event store failed", session_id[:8])
            logger.warning(
                "session %s: %d events not stored (resuming elsewhere will miss them)",
                session_id[:8],
                len(items) - index + 1,
            )


class _SessionConnection(ServerConnection):
    """The session's connection: marks each published notification it passes on (see ``_delivering``)."""

    def __init__(self, owner: LegacySession, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self._owner = owner

    async def deliver(self, method: str, params: dict[str, Any] | None) -> None:
        owner = self._owner
        publication = owner.app.server.bus.publication
        owner._delivering = owner.delivering(method, params, publication) if owner.replicated else None
        try:
            await super().deliver(method, params)  # routed without an await in between
        finally:
            owner._delivering = None


class _RoutingStream(ObjectSendStream[Outbound]):
    """A legacy session's write stream: each message goes straight into its stream's buffer."""

    def __init__(self, session: LegacySession) -> None:
        self._session = session

    async def send(self, item: Outbound) -> None:
        self._session.route(item)

    async def aclose(self) -> None:
        pass
