"""The 2024-11-05 HTTP+SSE transport across replicas: POSTs forwarded to the replica holding the stream.

In that transport a session *is* its ``GET /sse`` stream: every answer travels on it, so the session
lives where the stream is (ownership). A client's POSTs to the endpoint may reach any replica; one that
does not hold the stream forwards the message to the one that does, through Redis:

- ``<prefix>legacy:sse:<session id>``: the route, holding the authenticated subject that opened the
  stream (``""`` without authentication); it expires unless the holder renews it, so a replica that
  died leaves no route behind for long;
- ``<prefix>fanout:sse:<session id>``: a channel only the holder subscribes to. Forwarding checks the
  route and the subject and publishes in one script, and the number of receivers tells whether the
  holder is still there (0: the session is gone, the client gets 404).

One process needs none of this (:func:`sse_routes` gives None).
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from . import SharedStateUnavailable

if TYPE_CHECKING:
    from .redis_state import RedisState

logger = logging.getLogger(__name__)

# -1: no such session; -2: another subject's session; else the number of holders that received it.
_FORWARD = """
local owner = redis.call('GET', KEYS[1])
if not owner then return -1 end
if owner ~= ARGV[2] then return -2 end
return redis.call('PUBLISH', KEYS[2], ARGV[1])
"""

#: Forwarding outcomes.
GONE, NOT_YOURS = -1, -2


class RedisSSERoutes:
    """Routes of HTTP+SSE sessions to the replica holding their stream (see the module)."""

    def __init__(self, state: RedisState, ttl_seconds: float = 30.0) -> None:
        self._state = state
        self.ttl_seconds = ttl_seconds

    def _route(self, session_id: str) -> str:
        return self._state.key("legacy", "sse", session_id)

    def _channel(self, session_id: str) -> str:
        return self._state.key("fanout", "sse", session_id)

    @asynccontextmanager
    async def held(self, session_id: str, owner: str | None) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """Hold ``session_id`` here for the block: subscribed (confirmed by Redis) before the route is
        published, renewed while the block runs, removed after. Yields the forwarded messages.

        Raises:
            SharedStateUnavailable: Redis cannot be reached when the block starts.
        """
        from .redis_state import subscribe_confirmed  # a route exists only with Redis state

        client = self._state.new_client(socket_timeout=None)
        pubsub = client.pubsub()
        try:
            with self._state.guard("SSE session routes"):
                await subscribe_confirmed(pubsub, self._channel(session_id), self._state.command_timeout)
                await self._renew(session_id, owner)
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._keep, session_id, owner)
                yield _messages(pubsub)
                task_group.cancel_scope.cancel()
        except TimeoutError:
            raise SharedStateUnavailable("SSE session routes") from None
        finally:
            with anyio.CancelScope(shield=True):
                try:
                    await self._state.client.delete(self._route(session_id))
                except Exception:  # the route expires by itself
                    logger.debug("could not remove the route of SSE session %s", session_id[:8])
                await pubsub.aclose()
                await client.aclose()

    async def _renew(self, session_id: str, owner: str | None) -> None:
        await self._state.client.set(self._route(session_id), owner or "", px=int(self.ttl_seconds * 1000))

    async def _keep(self, session_id: str, owner: str | None) -> None:
        while True:
            await anyio.sleep(self.ttl_seconds / 3)
            try:
                with self._state.guard("SSE session routes"):
                    await self._renew(session_id, owner)
            except SharedStateUnavailable:
                pass  # logged; renewed on the next turn when Redis is back

    async def forward(self, session_id: str, owner: str | None, message: dict[str, Any]) -> int:
        """Send ``message`` to the replica holding ``session_id``: :data:`GONE`, :data:`NOT_YOURS`, or
        the number of holders that received it (0: the holder went away).

        Raises:
            SharedStateUnavailable: Redis cannot be reached.
        """
        payload = json.dumps(message, separators=(",", ":"))
        keys = (self._route(session_id), self._channel(session_id))
        with self._state.guard("SSE session routes"):
            return int(await self._state.client.eval(_FORWARD, 2, *keys, payload, owner or ""))


async def _messages(pubsub: Any) -> AsyncIterator[dict[str, Any]]:
    async for raw in pubsub.listen():
        if not isinstance(raw, dict) or raw.get("type") != "message":
            continue
        try:
            message = json.loads(raw["data"])
        except (ValueError, TypeError):
            continue
        if isinstance(message, dict):
            yield message


def sse_routes(shared: Any) -> RedisSSERoutes | None:
    """The routes for ``shared`` (a :class:`~plainmcp.state.SharedState`): Redis for a
    :class:`~plainmcp.state.redis_state.RedisState`, None for one process."""
    from .redis_state import RedisState

    if isinstance(shared, RedisState):
        return RedisSSERoutes(shared)
    return None
