"""What the weather server's replicas share: answers, flights, rate limits and breaker state.

The service keeps its own in-process layer (:mod:`.cache`, :mod:`.flight`, :mod:`.resilience`); with
replicated state (``--redis``) :class:`Sharing` adds the layer every replica sees, a
:class:`plainmcp.ServerCache` taken from ``server.shared`` while the server is served (a
:meth:`plainmcp.Server.background` hook, :meth:`Sharing.serve`). In one process the in-process layer
is the whole story, so only the rate limit goes through the (in-memory) shared layer.

Losing Redis never fails a call: each shared operation that cannot reach it is skipped, the service
answers from its own cache or fetches, one warning is logged (not one per call), and operations are
not tried again for a pause (:data:`FIRST_PAUSE` seconds, doubled while it stays unreachable, at most
:data:`LONGEST_PAUSE`), so a dead or frozen Redis costs no time per call. The first operation that
succeeds afterwards logs that sharing is back.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from plainmcp import SharedStateUnavailable

if TYPE_CHECKING:
    from plainmcp import Cached, Server, ServerCache

logger = logging.getLogger(__name__)

#: The fan-out topic on which a replica fetching for the others tells them of each wait for a retry.
WAITS_TOPIC = "weather-waits"
#: Told what another replica's fetch announces (a :class:`.upstream.Wait` as a dict).
Listener = Callable[[dict[str, Any]], Awaitable[None]]

#: Seconds without trying Redis after it could not be reached; doubled each time it still cannot be.
FIRST_PAUSE = 1.0
#: The longest pause: Redis back is used again within this long.
LONGEST_PAUSE = 4.0

T = TypeVar("T")


class Sharing:
    """The shared layer as the service uses it: each method does nothing (or says "unknown") when
    there is no replicated layer, or when it is unreachable. ``clock`` is monotonic."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        #: The layer every replica shares, while served with replicated state.
        self.replicas: ServerCache | None = None
        #: Where rate limits are counted: the replicas' layer, or this process's.
        self.limits: ServerCache | None = None
        self._down_until = 0.0
        self._down = False
        self._pause = FIRST_PAUSE
        #: Tells this replica's fan-out messages from the others'.
        self.replica_id = os.urandom(8).hex()
        self._fanout: Any = None
        self._listeners: dict[str, Listener] = {}

    async def serve(self, server: Server) -> None:
        """A :meth:`plainmcp.Server.background` task: use ``server.shared`` while it is served."""
        from plainmcp import server_cache  # here: importing the server does not pay for it

        shared = server_cache(server.shared)
        self.limits = shared
        self.replicas = shared if shared.replicated else None
        try:
            if shared.replicated:
                self._fanout = server.shared.fanout
                await self._hear_waits()
            await anyio.sleep_forever()
        finally:
            self.replicas = self.limits = self._fanout = None

    async def _hear_waits(self) -> None:
        """Hand each wait another replica announces to the callers here waiting on that fetch."""
        async with self._fanout.subscribe(WAITS_TOPIC) as messages:
            async for message in messages:
                listener = self._listeners.get(message.get("key", ""))
                wait = message.get("wait")
                if listener is not None and message.get("from") != self.replica_id and isinstance(wait, dict):
                    try:
                        await listener(wait)
                    except Exception:
                        logger.debug("a listener of another replica's wait failed", exc_info=True)

    async def tell_replicas(self, key: str, wait: dict[str, Any]) -> None:
        """Tell the replicas waiting on this replica's fetch for ``key`` about a wait (best effort)."""
        if self._fanout is not None and self._clock() >= self._down_until:
            try:
                await self._fanout.publish(WAITS_TOPIC, {"from": self.replica_id, "key": key, "wait": wait})
            except SharedStateUnavailable:
                pass  # the callers elsewhere miss a progress report, nothing more

    async def _try(self, layer: ServerCache | None, operation: Callable[[ServerCache], Awaitable[T]]) -> T | None:
        """``operation(layer)``, or None when there is no layer or it cannot be reached (see the module)."""
        if layer is None or self._clock() < self._down_until:
            return None
        try:
            result = await operation(layer)
        except SharedStateUnavailable:
            pause = self._pause if self._down else FIRST_PAUSE
            self._down_until = self._clock() + pause
            self._pause = min(LONGEST_PAUSE, pause * 2)
            if not self._down:
                self._down = True
                logger.warning(
                    "the replicas' shared cache is unreachable: this replica answers from its own cache "
                    "and calls upstreams itself until it returns"
                )
            return None
        if self._down:
            self._down = False
            logger.warning("the replicas' shared cache is reachable again")
        return result

    # ---------------------------------------------------------------------------- operations

    async def get(self, key: str) -> Cached | None:
        return await self._try(self.replicas, lambda layer: layer.get(key))

    async def put(self, key: str, value: Any, ttl: float, keep: float) -> None:
        async def put(layer: ServerCache) -> None:
            try:
                await layer.put(key, value, ttl=ttl, keep=keep)
            except (TypeError, ValueError):  # not JSON: this replica keeps it for itself
                logger.debug("an answer is not JSON; not shared")

        await self._try(self.replicas, put)

    async def flight(
        self, key: str, work: Callable[[], Awaitable[Any]], *, hold: float, listener: Listener, **errors: Any
    ) -> Any:
        """``work()`` once across the replicas (see :meth:`plainmcp.ServerCache.flight`); without a
        reachable shared layer, just ``work()`` (the work itself never touches the shared layer's
        connection, so what it raises is its own). ``listener`` hears the waits another replica's
        fetch for ``key`` announces (:meth:`tell_replicas`) while this one waits for it."""

        async def run(layer: ServerCache) -> tuple[Any]:
            return (await layer.flight(key, work, hold=hold, **errors),)  # boxed: None is an answer too

        self._listeners[key] = listener  # one per key: the replica's own single flight merged its callers
        try:
            boxed = await self._try(self.replicas, run)
        finally:
            if self._listeners.get(key) is listener:
                del self._listeners[key]
        return await work() if boxed is None else boxed[0]

    async def acquire(self, name: str, limit: int, per: float) -> float:
        """Seconds to wait before a call under ``name``'s limit may go (0.0: go now; see
        :meth:`plainmcp.ServerCache.acquire`). Unreachable: 0.0 (an upstream's own 429 still stops us)."""
        waited = await self._try(self.limits, lambda layer: layer.acquire(name, limit, per))
        return waited or 0.0

    async def breaker_open_for(self, name: str) -> float:
        return await self._try(self.replicas, lambda layer: layer.breaker_open_for(name)) or 0.0

    async def breaker_failure(self, name: str, threshold: int, cooldown: float) -> float:
        left = await self._try(self.replicas, lambda layer: layer.breaker_failure(name, threshold, cooldown))
        return left or 0.0

    async def breaker_success(self, name: str) -> None:
        await self._try(self.replicas, lambda layer: layer.breaker_success(name))
