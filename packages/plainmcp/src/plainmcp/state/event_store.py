"""The legacy event store: the SSE streams of Streamable HTTP sessions, readable from any replica.

A legacy client resumes a broken SSE stream with ``GET`` + ``Last-Event-ID``, and behind a load
balancer that GET may reach any replica. Event ids are ``<stream key>-<seq>``, and with the session
id (the request's ``Mcp-Session-Id``) they name the stream, so any replica finds it here.

In one process there is nothing to share: the session's own event buffers
(:mod:`plainmcp.http.event_buffer`) are the store, and :func:`event_store` gives None. With Redis:

- one Stream per SSE stream, ``<prefix>legacy:events:<session id>:<stream key>``, entry ids
  ``<seq>-0`` (so ``XRANGE`` after an event id is exact), fields ``d`` (the message's JSON) and
  ``e`` (present on the entry that ends the stream: a request's answer); capped at ``max_events``
  (``MAXLEN ~``) and expiring ``ttl_seconds`` after the last write;
- a request's stream has one writer (the replica serving the request), which numbers the events;
  it is written only once another replica asks for it (``{"type": "want", "sid", "key"}`` on the
  fan-out), so streams read where they are served cost Redis nothing;
  the session's GET stream has many (any replica may notify the client), so Redis numbers them
  (``<stream key>:seq``, seeded from the clock so numbers never repeat if the counter expires);
- every append publishes ``{"type": "event", "sid", "key"}`` on the ``legacy`` fan-out topic,
  which wakes readers on other replicas (a reader also polls, in case a wake-up is missed).

Every method may raise :class:`~plainmcp.state.SharedStateUnavailable`.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .redis_state import RedisState

#: The fan-out topic of the legacy sessions' cross-replica messages (events, replies, endings).
TOPIC = "legacy"

#: An event as the store returns it: (sequence number, the message's JSON, whether it ends the stream).
StoredEvent = tuple[int, bytes, bool]

# Many writers: Redis numbers the event. ARGV: data, maxlen, ttl ms, wake-up message, dedupe key ('' for none).
_APPEND_NEXT = """
if ARGV[5] ~= '' then
  if not redis.call('SET', ARGV[5], '1', 'NX', 'PX', 1000) then return 0 end
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local t = redis.call('TIME')
  redis.call('SET', KEYS[2], t[1] .. '000')
end
local seq = redis.call('INCR', KEYS[2])
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], string.format('%d', seq) .. '-0', 'd', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PUBLISH', KEYS[3], ARGV[4])
return seq
"""


class RedisEventStore:
    """SSE streams of legacy sessions in Redis Streams (see the module for the keys)."""

    def __init__(self, state: RedisState, *, max_events: int, ttl_seconds: float) -> None:
        self._state = state
        self.max_events = max_events
        self._ttl_ms = max(1, int(ttl_seconds * 1000))
        self._channel = state.key("fanout", TOPIC)

    def _stream(self, session_id: str, key: str) -> str:
        return self._state.key("legacy", "events", session_id, key)

    def _wake(self, session_id: str, key: str) -> str:
        return json.dumps({"type": "event", "sid": session_id, "key": key}, separators=(",", ":"))

    async def append(self, session_id: str, key: str, events: list[StoredEvent]) -> None:
        """Add events the caller numbered (a request's stream: one writer), in one round trip; an
        event numbered 0 only makes the stream exist."""
        stream = self._stream(session_id, key)
        with self._state.guard("event store"):
            async with self._state.client.pipeline(transaction=False) as pipe:
                for seq, data, end in events:
                    fields: dict[str, bytes] = {"d": data, "e": b"1"} if end else {"d": data}
                    # Event 0 makes an empty stream exist (0-1: below every event, read by nobody).
                    entry = f"{seq}-0" if seq else "0-1"
                    pipe.xadd(stream, fields, id=entry, maxlen=self.max_events, approximate=True)
                pipe.pexpire(stream, self._ttl_ms)
                pipe.publish(self._channel, self._wake(session_id, key))
                await pipe.execute(raise_on_error=False)  # an id written twice is refused, harmlessly

    async def append_next(self, session_id: str, key: str, data: bytes, dedupe: str | None = None) -> int | None:
        """Add an event numbered by Redis (a GET stream: many writers); its number, or None when
        ``dedupe`` was already claimed within the last second (another replica wrote the same event)."""
        stream = self._stream(session_id, key)
        keys = (stream, stream + ":seq", self._channel)
        claim = self._state.key("legacy", "dedupe", dedupe) if dedupe else ""
        with self._state.guard("event store"):
            seq = await self._state.client.eval(
                _APPEND_NEXT, 3, *keys, data, self.max_events, self._ttl_ms, self._wake(session_id, key), claim
            )
        return int(seq) or None

    async def read_after(self, session_id: str, key: str, after: int, count: int = 256) -> list[StoredEvent] | None:
        """Events numbered above ``after`` (at most ``count``); None when the stream does not exist."""
        stream = self._stream(session_id, key)
        with self._state.guard("event store"):
            async with self._state.client.pipeline(transaction=False) as pipe:
                pipe.xrange(stream, min=f"{after + 1}-0", max="+", count=count)
                pipe.exists(stream)
                entries, exists = await pipe.execute()
        if not entries and not exists:
            return None
        return [_event(entry_id, fields) for entry_id, fields in entries]

    async def last(self, session_id: str, key: str) -> int:
        """The number of the newest event of a many-writer stream (0 if it has none)."""
        with self._state.guard("event store"):
            value = await self._state.client.get(self._stream(session_id, key) + ":seq")
        return int(value) if value else 0

    async def keep(self, session_id: str, key: str) -> None:
        """Renew the lifetime of a stream someone is reading (it outlives idle periods)."""
        stream = self._stream(session_id, key)
        with self._state.guard("event store"):
            async with self._state.client.pipeline(transaction=False) as pipe:
                pipe.pexpire(stream, self._ttl_ms)
                pipe.pexpire(stream + ":seq", self._ttl_ms)
                await pipe.execute()

    async def drop(self, session_id: str, keys: list[str]) -> None:
        """Delete streams of an ended session (the rest expire)."""
        names = [self._stream(session_id, key) for key in keys]
        with self._state.guard("event store"):
            await self._state.client.delete(*names, *(name + ":seq" for name in names))


def _event(entry_id: Any, fields: dict[Any, Any]) -> StoredEvent:
    seq = int((entry_id.decode() if isinstance(entry_id, bytes) else str(entry_id)).partition("-")[0])
    data = fields.get(b"d", fields.get("d", b""))
    return seq, data if isinstance(data, bytes) else str(data).encode(), (b"e" in fields or "e" in fields)


def event_store(shared: Any, *, max_events: int, ttl_seconds: float) -> RedisEventStore | None:
    """The store for ``shared`` (a :class:`~plainmcp.state.SharedState`): Redis Streams for a
    :class:`~plainmcp.state.redis_state.RedisState`, None for one process (see the module)."""
    from .redis_state import RedisState

    if isinstance(shared, RedisState):
        return RedisEventStore(shared, max_events=max_events, ttl_seconds=ttl_seconds)
    return None
