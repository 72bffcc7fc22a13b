"""What a server's replicas share about their upstreams: a TTL cache, single flight, rate limits, breakers.

A server that calls an upstream (weather calls Open-Meteo) keeps answers in a cache, merges identical
concurrent calls into one, stays under the upstream's rate limit and stops calling an upstream that is
down. Run as N replicas, each doing that alone multiplies the upstream's load by N and lets each learn
of an outage on its own. :class:`ServerCache` is the same four things for every replica at once;
:func:`server_cache` picks the implementation from the server's :class:`~plainmcp.state.SharedState`
(``server.shared``), so the server never learns which one runs:

- :class:`MemoryCache`: one process is the whole world (what a server does without ``--redis``);
- :class:`RedisCache`: on the replicas' Redis. Keys, under the state's prefix:
  ``cache:<key>`` (JSON ``{"v": value, "at": stored-at Unix time, "ttl": seconds}``, ``PX`` = TTL plus
  the time a stale answer may still be served), ``flight:<key>`` (the lock, ``SET NX PX``, holding the
  flight's id, its lease renewed while the work runs), ``flight-done:<key>:<id>`` (its outcome for the replicas waiting on it, a few seconds),
  ``rate:<name>`` (``INCR`` + ``PEXPIRE``: a fixed window, from the first call in it), ``breaker:<name>:failures``
  (``INCR``, deleted by a success) and ``breaker:<name>:open`` (``SET PX`` cool-down).

Values are JSON (what an upstream's answer is after parsing). Every operation of :class:`RedisCache`
may raise :class:`~plainmcp.state.SharedStateUnavailable`; the caller decides what to do without the
shared layer (weather falls back to its own cache and fetches).
"""

from __future__ import annotations

import json
import logging
import os
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from . import SharedStateUnavailable

if TYPE_CHECKING:
    from . import SharedState
    from .redis_state import RedisState

logger = logging.getLogger(__name__)

#: Seconds a flight's outcome stays readable by the replicas that waited on it.
OUTCOME_SECONDS = 10.0
#: Polling a flight under way on another replica: the first pause, doubled up to the last.
POLL_FIRST, POLL_MOST = 0.005, 0.1
#: A flight's lock is held a lease at a time, renewed while its work runs: a replica that dies holding
#: one delays the others by at most this long.
LEASE_SECONDS = 3.0
#: A breaker's failure count is forgotten after this long without a new failure.
FAILURES_KEPT_SECONDS = 600.0

#: The work of a flight; its result must be JSON.
Work = Callable[[], Awaitable[Any]]
#: Turns an exception of the work into JSON the other replicas' waiters can raise again (None: do not
#: share it: the waiters then run the work themselves), and back.
EncodeError = Callable[[Exception], "dict[str, Any] | None"]
DecodeError = Callable[["dict[str, Any]"], Exception]


@dataclass(frozen=True, slots=True)
class Cached:
    """A value from the cache: when it was stored (Unix time) and for how long it was fresh."""

    value: Any
    stored_at: float
    ttl: float

    def fresh(self, now: float) -> bool:
        return now < self.stored_at + self.ttl


class ServerCache(Protocol):
    """A server's shared cache, single flight, rate limits and breaker state (see the module)."""

    #: True when other processes share it (see :attr:`plainmcp.state.SharedState.replicated`).
    replicated: bool

    async def get(self, key: str) -> Cached | None:
        """The value stored under ``key`` (fresh or not) while it is kept, else None."""

    async def put(self, key: str, value: Any, *, ttl: float, keep: float = 0.0) -> None:
        """Store ``value`` (JSON), fresh for ``ttl`` seconds and kept ``keep`` seconds more."""

    async def flight(
        self,
        key: str,
        work: Work,
        *,
        hold: float,
        encode_error: EncodeError | None = None,
        decode_error: DecodeError | None = None,
    ) -> Any:
        """``await work()`` unless a flight for ``key`` is under way on some replica: then its outcome.

        ``hold`` bounds how long a flight may take: past it another caller runs the work; on Redis
        the lock is a lease of :data:`LEASE_SECONDS` renewed while the work runs, so a replica that
        dies mid-flight holds the others back one lease at most. An exception the work raises reaches waiters elsewhere through ``encode_error`` and
        ``decode_error``; without them (or when ``encode_error`` gives None) they run the work.
        """

    async def acquire(self, name: str, limit: int, per: float) -> float:
        """Take one of ``limit`` calls allowed per ``per`` seconds under ``name``: 0.0 when taken,
        else the seconds until the window with room begins (nothing was taken)."""

    async def breaker_open_for(self, name: str) -> float:
        """Seconds the shared breaker ``name`` stays open (0.0: closed)."""

    async def breaker_failure(self, name: str, threshold: int, cooldown: float) -> float:
        """Count a failure; the ``threshold``-th in a row opens the breaker for ``cooldown`` seconds.
        Returns :meth:`breaker_open_for` after it."""

    async def breaker_success(self, name: str) -> None:
        """A success: the failures in a row start again from zero."""


def server_cache(shared: SharedState) -> ServerCache:
    """The :class:`ServerCache` on ``shared``: one per state object, so every caller shares it."""
    cache = _MADE.get(shared)
    if cache is None:
        from .redis_state import RedisState  # the module only: redis itself is imported when opened

        cache = RedisCache(shared) if isinstance(shared, RedisState) else MemoryCache()
        _MADE[shared] = cache
    return cache


_MADE: weakref.WeakKeyDictionary[Any, ServerCache] = weakref.WeakKeyDictionary()


# ---------------------------------------------------------------------------------------- memory


class MemoryCache:
    """:class:`ServerCache` in this process. At most ``max_entries`` values (least recently used
    first out); ``clock`` is monotonic, ``wall`` Unix time (both injectable for tests)."""

    replicated = False

    def __init__(
        self,
        max_entries: int = 4096,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.max_entries = max_entries
        self._clock = clock
        self._wall = wall
        self._values: OrderedDict[str, tuple[Cached, float]] = OrderedDict()  # (value, kept until: clock)
        self._flights: dict[str, _Flight] = {}
        self._windows: dict[str, tuple[float, int]] = {}  # name -> (its window ends: clock, calls taken)
        self._failures: dict[str, int] = {}
        self._open_until: dict[str, float] = {}

    async def get(self, key: str) -> Cached | None:
        found = self._values.get(key)
        if found is None:
            return None
        if found[1] <= self._clock():
            del self._values[key]
            return None
        self._values.move_to_end(key)
        return found[0]

    async def put(self, key: str, value: Any, *, ttl: float, keep: float = 0.0) -> None:
        if ttl <= 0 or self.max_entries == 0:
            return
        self._values[key] = (Cached(value, self._wall(), ttl), self._clock() + ttl + keep)
        self._values.move_to_end(key)
        while len(self._values) > self.max_entries:
            self._values.popitem(last=False)

    async def flight(
        self,
        key: str,
        work: Work,
        *,
        hold: float,
        encode_error: EncodeError | None = None,
        decode_error: DecodeError | None = None,
    ) -> Any:
        while (flight := self._flights.get(key)) is not None:
            with anyio.move_on_after(hold):
                await flight.done.wait()
            if flight.finished:
                if flight.error is None:
                    return flight.value
                raise flight.error.with_traceback(None)
            if not flight.done.is_set():
                break  # it takes longer than ``hold``: as if its replica had died, run the work here
            # its caller was cancelled before an outcome: one of the waiters leads now
        flight = self._flights[key] = _Flight()
        try:
            flight.value = await work()
            flight.finished = True
            return flight.value
        except Exception as error:
            flight.error, flight.finished = error, True
            raise
        finally:
            if self._flights.get(key) is flight:
                del self._flights[key]
            flight.done.set()
            del flight  # no cycle: flight -> error -> traceback -> this frame

    async def acquire(self, name: str, limit: int, per: float) -> float:
        now = self._clock()
        ends, taken = self._windows.get(name, (0.0, 0))
        if ends <= now:
            ends, taken = now + per, 0
        if taken >= limit:
            return ends - now
        self._windows[name] = (ends, taken + 1)
        return 0.0

    async def breaker_open_for(self, name: str) -> float:
        return max(0.0, self._open_until.get(name, 0.0) - self._clock())

    async def breaker_failure(self, name: str, threshold: int, cooldown: float) -> float:
        count = self._failures.get(name, 0) + 1
        if count >= threshold:
            self._failures[name] = 0
            self._open_until[name] = self._clock() + cooldown
        else:
            self._failures[name] = count
        return await self.breaker_open_for(name)

    async def breaker_success(self, name: str) -> None:
        self._failures.pop(name, None)


class _Flight:
    __slots__ = ("done", "error", "finished", "value")

    def __init__(self) -> None:
        self.done = anyio.Event()
        self.finished = False  # the work returned or raised (was not cancelled)
        self.value: Any = None
        self.error: Exception | None = None


# ----------------------------------------------------------------------------------------- redis

# INCR a window's counter, the first call of a window giving it its expiry, in one step (a counter
# left without expiry would never reset); the answer says how long the window still runs.
_ACQUIRE = """
local taken = redis.call('INCR', KEYS[1])
if taken == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {taken, redis.call('PTTL', KEYS[1])}
"""

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_FAILURE = """
local failures = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if failures >= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
end
return redis.call('PTTL', KEYS[2])
"""


class RedisCache:
    """:class:`ServerCache` on the replicas' :class:`~plainmcp.state.redis_state.RedisState`;
    ``lease``: seconds a flight's lock is held between two renewals."""

    replicated = True

    def __init__(self, state: RedisState, *, lease: float = LEASE_SECONDS) -> None:
        self.state = state
        self.lease = lease

    async def get(self, key: str) -> Cached | None:
        with self.state.guard("cache"):
            raw = await self.state.client.get(self.state.key("cache", key))
        if raw is None:
            return None
        try:
            stored = json.loads(raw)
            return Cached(stored["v"], float(stored["at"]), float(stored["ttl"]))
        except (ValueError, TypeError, KeyError):
            logger.warning("an unreadable shared cache entry was ignored")
            return None

    async def put(self, key: str, value: Any, *, ttl: float, keep: float = 0.0) -> None:
        if ttl <= 0:
            return
        payload = _json({"v": value, "at": time.time(), "ttl": ttl})
        with self.state.guard("cache"):
            await self.state.client.set(self.state.key("cache", key), payload, px=_ms(ttl + keep))

    async def flight(
        self,
        key: str,
        work: Work,
        *,
        hold: float,
        encode_error: EncodeError | None = None,
        decode_error: DecodeError | None = None,
    ) -> Any:
        client, lock = self.state.client, self.state.key("flight", key)
        while True:
            ours = os.urandom(8).hex()
            with self.state.guard("single flight"):
                if await client.set(lock, ours, nx=True, px=_ms(min(hold, self.lease))):
                    break
                theirs = await client.get(lock)
            if theirs is None:
                continue  # it ended between the two commands: claim again
            outcome = await self._outcome_of(key, lock, theirs.decode("ascii"))
            if outcome is None:
                continue  # that flight ended without an outcome for us (or its replica died)
            if "v" in outcome:
                return outcome["v"]
            if decode_error is not None and isinstance(outcome.get("error"), dict):
                raise decode_error(outcome["error"])
        return await self._lead(key, lock, ours, work, hold, encode_error)

    async def _lead(
        self, key: str, lock: str, ours: str, work: Work, hold: float, encode_error: EncodeError | None
    ) -> Any:
        """Run the work while renewing the lock's lease, then publish its outcome for the waiters."""
        done = self.state.key("flight-done", key, ours)
        failure: Exception | None = None
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._renew, lock, ours, hold)
                try:
                    result = await work()
                except Exception as error:  # kept out of the task group (no exception group)
                    failure = error
                group.cancel_scope.cancel()
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._finish(lock, ours, done, None)
            raise
        if failure is not None:
            shared = encode_error(failure) if encode_error is not None else None
            await self._finish(lock, ours, done, None if shared is None else {"error": shared})
            try:
                raise failure
            finally:
                del failure  # no cycle: failure -> traceback -> this frame
        await self._finish(lock, ours, done, {"v": result})
        return result

    async def _renew(self, lock: str, ours: str, hold: float) -> None:
        """Keep the lock ours a lease at a time, for at most ``hold`` seconds: a replica that dies
        stops renewing, and the waiters elsewhere take over within one lease."""
        lease = min(hold, self.lease)
        with anyio.move_on_after(max(0.0, hold - lease)):
            while True:
                await anyio.sleep(lease / 3)
                try:
                    with self.state.guard("single flight"):
                        if not await self.state.client.eval(_RENEW, 1, lock, ours, _ms(lease)):
                            return  # no longer ours (expired and claimed elsewhere)
                except SharedStateUnavailable:
                    return  # the waiters will run the work themselves once the lease ends

    async def _finish(self, lock: str, ours: str, done: str, outcome: dict[str, Any] | None) -> None:
        """Publish the outcome (if any) for the waiters, then release the lock if it is still ours."""
        client = self.state.client
        try:
            with self.state.guard("single flight"):
                if outcome is not None:
                    try:
                        payload = _json(outcome)
                    except (TypeError, ValueError):
                        payload = None  # not JSON: the waiters run the work themselves
                    if payload is not None:
                        await client.set(done, payload, px=_ms(OUTCOME_SECONDS))
                held = await client.get(lock)
                if held is not None and held.decode("ascii") == ours:
                    await client.delete(lock)
        except Exception:
            # The work's own outcome matters more to this caller than telling the others; they fall
            # back to running it themselves once the lock expires.
            logger.debug("could not publish a flight's outcome", exc_info=True)

    async def _outcome_of(self, key: str, lock: str, flight_id: str) -> dict[str, Any] | None:
        """Wait for the outcome of flight ``flight_id``; None when it ended without one (or died)."""
        client, done = self.state.client, self.state.key("flight-done", key, flight_id)
        pause = POLL_FIRST
        while True:
            with self.state.guard("single flight"):
                async with client.pipeline(transaction=False) as pipe:
                    raw, holder = await pipe.get(done).get(lock).execute()
            if raw is not None:
                try:
                    outcome = json.loads(raw)
                except ValueError:
                    return None
                return outcome if isinstance(outcome, dict) else None
            if holder is None or holder.decode("ascii") != flight_id:
                return None
            await anyio.sleep(pause)
            pause = min(POLL_MOST, pause * 2)

    async def acquire(self, name: str, limit: int, per: float) -> float:
        with self.state.guard("rate limit"):
            taken, left = await self.state.client.eval(_ACQUIRE, 1, self.state.key("rate", name), _ms(per))
        if int(taken) <= limit:
            return 0.0
        return max(1, int(left)) / 1000

    async def breaker_open_for(self, name: str) -> float:
        with self.state.guard("breaker"):
            left = await self.state.client.pttl(self.state.key("breaker", name, "open"))
        return max(0, int(left)) / 1000

    async def breaker_failure(self, name: str, threshold: int, cooldown: float) -> float:
        keys = (self.state.key("breaker", name, "failures"), self.state.key("breaker", name, "open"))
        with self.state.guard("breaker"):
            left = await self.state.client.eval(
                _FAILURE, 2, *keys, threshold, _ms(cooldown), _ms(FAILURES_KEPT_SECONDS)
            )
        return max(0, int(left)) / 1000

    async def breaker_success(self, name: str) -> None:
        with self.state.guard("breaker"):
            await self.state.client.delete(self.state.key("breaker", name, "failures"))


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
