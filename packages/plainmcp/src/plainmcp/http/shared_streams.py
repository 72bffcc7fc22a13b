"""Legacy sessions across replicas: reading the shared event store, and the messages replicas send
each other about sessions (the ``legacy`` fan-out topic). The writing is the session's
(:class:`~plainmcp.http.legacy_session.Outbox`).

- :func:`stream_shared`: an SSE response fed from the store (the GET stream, or a request's stream
  resumed on a replica that is not serving the request), woken by the fan-out and polling besides.
- :func:`relay_legacy`: what other replicas say: an event was written (wake readers), a reply or a
  cancellation for a copy here, a record changed, a session ended.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
from anyio.abc import TaskStatus

from ..jsonrpc import ErrorResponse, Notification, Response, decode
from ..state import SharedStateUnavailable
from ..state.event_store import TOPIC, StoredEvent
from ..state.sessions import SessionRecord
from ..versions import V2025_11_25, at_least
from .asgi import EventStream, Receive, Send
from .legacy_session import READ_COUNT, LegacySession, SessionHost, cancel_on_disconnect

logger = logging.getLogger(__name__)

#: A reader of the store looks again this often even without a wake-up (one may be missed).
POLL_SECONDS = 1.0


async def stream_shared(
    session: LegacySession,
    key: str,
    after: int,
    receive: Receive,
    send: Send,
    headers: list[tuple[str, str]],
    *,
    first: list[StoredEvent] | None = None,
    ends: bool,
) -> None:
    """Write the stored events of stream ``key`` after ``after`` as SSE, then live ones, until the
    client leaves, the session ends or (``ends``: a request's stream) its answer was sent.

    ``first`` is a batch already read (the caller checked that the stream exists)."""
    events = EventStream(send)
    await events.start(headers)
    if at_least(session.connection.version or "", V2025_11_25):
        await events.event("", id=f"{key}-{after}", retry=session.app.retry_ms)
    if not ends:
        session.shared_readers += 1
    try:
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(cancel_on_disconnect, receive, task_group.cancel_scope)
            task_group.start_soon(events.keep_alive, session.app.keepalive_seconds)
            try:
                await _follow(session, key, after, events, first, ends)
            except (OSError, SharedStateUnavailable):
                pass  # the client left, or the store did: the client resumes later
            task_group.cancel_scope.cancel()
    finally:
        if not ends:
            session.shared_readers -= 1
    try:
        await events.close()
    except OSError:
        pass


async def _follow(
    session: LegacySession,
    key: str,
    cursor: int,
    events: EventStream,
    pending: list[StoredEvent] | None,
    ends: bool,
) -> None:
    app = session.app
    store = app.events
    assert store is not None
    beat = min(30.0, app.session_idle_seconds / 3)
    next_beat = time.monotonic() + beat
    while not session.closed:
        waker = app.waker(session.id, key)  # taken before reading: a write during the read wakes us
        batch = pending if pending is not None else await store.read_after(session.id, key, cursor, READ_COUNT)
        pending = None
        if batch is None:
            if ends:
                return  # the stream expired
            batch = []
        for seq, data, end in batch:
            if seq <= cursor:
                continue
            cursor = seq
            await events.event(data.decode("utf-8"), event="message", id=f"{key}-{seq}")
            if end and ends:
                return
        if len(batch) >= READ_COUNT:
            continue
        with anyio.move_on_after(POLL_SECONDS):
            await waker.wait()
        if time.monotonic() >= next_beat:
            # A reader keeps its session (and its stream) alive, as an open stream does in one process.
            next_beat = time.monotonic() + beat
            if await app.directory.touch(session.id) is None:
                session.close()
                return
            await store.keep(session.id, key)


async def relay_legacy(app: SessionHost, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
    """Act on what replicas publish about legacy sessions, until cancelled. Started (``task_status``)
    once the subscription is in place."""
    async with app.server.shared.fanout.subscribe(TOPIC) as messages:
        task_status.started()
        async for message in messages:
            try:
                _on_message(app, message)
            except Exception:
                logger.exception("a legacy session message could not be handled")


def _on_message(app: SessionHost, message: dict[str, Any]) -> None:
    kind, session_id = message.get("type"), message.get("sid")
    if not isinstance(session_id, str):
        return
    if kind == "event":
        app.wake(session_id, str(message.get("key")))
        return
    if kind == "want":
        held = app.sessions.get(session_id)
        if held is not None:
            held.share_stream(str(message.get("key")))
        return
    session = app.sessions.get(session_id)
    if session is None or message.get("from") == app.replica:
        return
    if kind == "ended":
        session.ended()
    elif kind == "changed" and isinstance(message.get("record"), str):
        session.apply(SessionRecord.from_json(message["record"]))
    elif kind == "input" and isinstance(message.get("message"), str):
        item = decode(message["message"])
        if isinstance(item, (Response, ErrorResponse)):
            if session.connection.session.awaits(item.id):
                app.spawn(session.feed, item)
        elif isinstance(item, Notification):
            app.spawn(session.feed, item)  # a cancellation or progress for work running here
