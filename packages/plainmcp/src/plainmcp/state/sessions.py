"""The legacy session directory: which Streamable HTTP sessions exist, and what each client negotiated.

A legacy session (2025-03-26 .. 2025-11-25) is state the client relies on between requests: the
revision ``initialize`` agreed on, the client's info and capabilities, whether it sent
``notifications/initialized``, its log level and its resource subscriptions. With one process the
session's connection holds it all; behind a load balancer the next request may land on any replica,
so the directory keeps a *record* of it that any replica can read and rebuild the session from.

A record lives ``idle_seconds`` after its last use (each :meth:`SessionDirectory.touch` refreshes it);
``max_sessions`` is counted over the live records of every replica. :class:`MemorySessions` is the
one-process directory, :class:`RedisSessions` the shared one (a string per record, a sorted set of
expiry times for counting, both under the state's prefix; changes and endings are published on the
``legacy`` fan-out topic in the same round trip).
"""

from __future__ import annotations

import json
import re
import time
from typing import TYPE_CHECKING, Any, Protocol

from .event_store import TOPIC

if TYPE_CHECKING:
    from .redis_state import RedisState

#: The session ids this server issues (``secrets.token_urlsafe(24)``: 192 bits); anything else is
#: unknown without asking the store.
SESSION_ID = re.compile(r"[A-Za-z0-9_-]{32}")


class SessionRecord:
    """What a replica needs to serve a session it did not start (plain JSON fields)."""

    __slots__ = (
        "client_capabilities",
        "client_info",
        "created",
        "id",
        "log_threshold",
        "owner",
        "ready",
        "standalone_key",
        "standalone_opened",
        "subscriptions",
        "version",
    )

    def __init__(self, session_id: str, owner: str | None, standalone_key: str) -> None:
        self.id = session_id
        self.owner = owner
        self.standalone_key = standalone_key
        self.standalone_opened = False
        self.version: str | None = None
        self.ready = False
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.log_threshold = 0
        self.subscriptions: list[str] = []
        self.created = time.time()

    def to_json(self) -> str:
        return json.dumps({name: getattr(self, name) for name in self.__slots__}, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> SessionRecord:
        """Raises ValueError for a record this code did not write."""
        fields = json.loads(text)
        if not isinstance(fields, dict) or not isinstance(fields.get("id"), str):
            raise ValueError("not a session record")
        record = cls(fields["id"], fields.get("owner"), str(fields.get("standalone_key", "")))
        for name in cls.__slots__:
            if name in fields:
                setattr(record, name, fields[name])
        return record

    def state(self) -> tuple[Any, ...]:
        """The part of the record the session itself changes (compared to know when to save)."""
        return (
            self.version,
            self.ready,
            self.client_info,
            self.client_capabilities,
            self.log_threshold,
            sorted(self.subscriptions),
            self.standalone_opened,
        )


class SessionDirectory(Protocol):
    """Where sessions are recorded. Every method may raise
    :class:`~plainmcp.state.SharedStateUnavailable` (the shared store is unreachable)."""

    #: True when other replicas read the same records.
    replicated: bool

    async def create(self, record: SessionRecord, max_sessions: int) -> bool:
        """Record a new session; False (nothing recorded) when ``max_sessions`` are live already."""

    async def touch(self, session_id: str) -> SessionRecord | None:
        """The live record of ``session_id``, its lifetime renewed; None if it ended or expired."""

    async def save(self, record: SessionRecord, origin: str = "") -> None:
        """Store the record's current state (the session changed it), its lifetime renewed; other
        replicas hear of it (``{"type": "changed", "sid", "from": origin, "record"}`` on the
        ``legacy`` fan-out topic) so their copies of the session follow."""

    async def end(self, session_id: str, origin: str = "") -> None:
        """Remove the record: the session is unknown everywhere from now on (and replicas hear
        ``{"type": "ended", "sid", "from": origin}``, so they drop their copies)."""


class MemorySessions:
    """The directory of one process: records in a dict, expired by the monotonic clock."""

    replicated = False

    def __init__(self, idle_seconds: float) -> None:
        self.idle_seconds = idle_seconds
        self._records: dict[str, tuple[SessionRecord, float]] = {}

    def __len__(self) -> int:
        return len(self._records)

    async def create(self, record: SessionRecord, max_sessions: int) -> bool:
        now = time.monotonic()
        if len(self._records) >= max_sessions:
            self._records = {key: value for key, value in self._records.items() if value[1] > now}
            if len(self._records) >= max_sessions:
                return False
        self._records[record.id] = (record, now + self.idle_seconds)
        return True

    async def touch(self, session_id: str) -> SessionRecord | None:
        found = self._records.get(session_id)
        now = time.monotonic()
        if found is None:
            return None
        if found[1] <= now:
            del self._records[session_id]
            return None
        self._records[session_id] = (found[0], now + self.idle_seconds)
        return found[0]

    async def save(self, record: SessionRecord, origin: str = "") -> None:
        if record.id in self._records:
            self._records[record.id] = (record, time.monotonic() + self.idle_seconds)

    async def end(self, session_id: str, origin: str = "") -> None:
        self._records.pop(session_id, None)


# Atomic so that two replicas creating sessions at once cannot both take the last place. Times come
# from Redis (TIME), not from the replicas, whose clocks may differ.
_CREATE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[4])
return 1
"""

# One round trip per request: read the record and renew its lifetime (and its place in the count).
_TOUCH = """
local record = redis.call('GET', KEYS[1])
if not record then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return false
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[1]), ARGV[2])
return record
"""

# Saving never resurrects a session another replica ended meanwhile (XX).
_SAVE = """
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'XX') then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PUBLISH', KEYS[3], ARGV[4])
  return 1
end
return 0
"""


class RedisSessions:
    """The directory shared by every replica on one Redis.

    Keys: ``<prefix>legacy:session:<id>`` (the record, JSON, expiring ``idle_seconds`` after its
    last use) and ``<prefix>legacy:sessions`` (a sorted set: session id -> expiry time in ms, for
    ``max_sessions``). Every operation is one round trip (a script).
    """

    replicated = True

    def __init__(self, state: RedisState, idle_seconds: float) -> None:
        self._state = state
        self._ttl_ms = max(1, int(idle_seconds * 1000))
        self._index = state.key("legacy", "sessions")
        self._channel = state.key("fanout", TOPIC)

    def _record_key(self, session_id: str) -> str:
        return self._state.key("legacy", "session", session_id)

    async def create(self, record: SessionRecord, max_sessions: int) -> bool:
        keys = (self._record_key(record.id), self._index)
        with self._state.guard("session directory"):
            created = await self._state.client.eval(
                _CREATE, 2, *keys, record.to_json(), self._ttl_ms, max_sessions, record.id
            )
        return bool(created)

    async def touch(self, session_id: str) -> SessionRecord | None:
        if SESSION_ID.fullmatch(session_id) is None:
            return None  # not an id we issue: no need to ask
        keys = (self._record_key(session_id), self._index)
        with self._state.guard("session directory"):
            raw = await self._state.client.eval(_TOUCH, 2, *keys, self._ttl_ms, session_id)
        if raw is None:
            return None
        try:
            return SessionRecord.from_json(raw)
        except ValueError:
            return None

    async def save(self, record: SessionRecord, origin: str = "") -> None:
        keys = (self._record_key(record.id), self._index, self._channel)
        text = record.to_json()
        news = _message({"type": "changed", "sid": record.id, "from": origin, "record": text})
        with self._state.guard("session directory"):
            await self._state.client.eval(_SAVE, 3, *keys, text, self._ttl_ms, record.id, news)

    async def end(self, session_id: str, origin: str = "") -> None:
        with self._state.guard("session directory"):
            async with self._state.client.pipeline(transaction=False) as pipe:
                pipe.delete(self._record_key(session_id))
                pipe.zrem(self._index, session_id)
                pipe.publish(self._channel, _message({"type": "ended", "sid": session_id, "from": origin}))
                await pipe.execute()


def _message(fields: dict[str, Any]) -> str:
    return json.dumps(fields, separators=(",", ":"))


def session_directory(shared: Any, idle_seconds: float) -> SessionDirectory:
    """The directory for ``shared`` (a :class:`~plainmcp.state.SharedState`): Redis-backed when the
    state is a :class:`~plainmcp.state.redis_state.RedisState`, else in this process."""
    from .redis_state import RedisState

    if isinstance(shared, RedisState):
        return RedisSessions(shared, idle_seconds)
    return MemorySessions(idle_seconds)
