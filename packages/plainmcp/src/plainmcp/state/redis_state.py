"""Shared state on Redis (or Valkey): what replicas behind one load balancer share.

Only the RESP subset both servers share is used: ``GET``/``SET NX PX``, ``PUBLISH``/``SUBSCRIBE``,
``PING`` here; the task store, legacy sessions and the servers' caches add hashes, Streams and
``EVAL`` in their own modules, through :meth:`RedisState.client` and :meth:`RedisState.guard`.
Every key starts with the prefix (``plainmcp:<server name>:`` unless the operator names another), so
several servers can share one Redis.

Faults: a command that cannot reach Redis fails within ``command_timeout`` seconds with
:class:`~plainmcp.state.SharedStateUnavailable` (a JSON-RPC error, never a hang); the client reconnects
on the next command, and subscriptions re-subscribe by themselves with a capped backoff, so service
recovers without a restart when Redis returns.

``redis`` (redis-py) is imported here only: a server that is not given ``--redis`` never loads it.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio

from . import SharedStateUnavailable
from .fanout import Subscription, backoff
from .keyring import KEY_BYTES, KeyRing

logger = logging.getLogger(__name__)

INSTALL_HINT = "--redis needs the redis package: pip install 'plainmcp[redis]' (pipx: pipx inject <server> redis)"


def redacted(url: str) -> str:
    """``url`` without its password, for logs and errors."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}:***@{host}", parts.path, parts.query, parts.fragment))


def _redis_errors() -> tuple[type[BaseException], ...]:
    import redis.exceptions

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


def _subscribe_failures() -> tuple[type[BaseException], ...]:
    return (TimeoutError, *_redis_errors())


def check_reachable(url: str, timeout: float = 3.0) -> None:
    """Ping Redis once, synchronously, before serving starts.

    Raises:
        RuntimeError: one line saying why (redis-py missing, a bad URL, Redis unreachable).
    """
    try:
        import redis
    except ImportError:
        raise RuntimeError(INSTALL_HINT) from None
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    except ValueError as problem:
        raise RuntimeError(f"--redis: not a Redis URL ({problem})") from None
    try:
        client.ping()
    except (redis.exceptions.RedisError, OSError) as problem:
        raise RuntimeError(f"cannot reach Redis at {redacted(url)}: {problem}") from None
    finally:
        client.close()


class RedisState:
    """:class:`~plainmcp.state.SharedState` on one Redis server.

    Args:
        url: ``redis://[user:password@]host:port/db`` (``rediss://`` for TLS, ``unix://`` for a socket).
        prefix: the start of every key and channel.
        keyring: a ring the operator gave (``PLAINMCP_STATE_KEYS``); without it the replicas share one
            random key kept in Redis, made by the first replica that starts.
        command_timeout: seconds a command may take before the call fails with SharedStateUnavailable.
    """

    kind = "redis"
    replicated = True

    def __init__(self, url: str, *, prefix: str, keyring: KeyRing | None = None, command_timeout: float = 2.0) -> None:
        self.url = url
        self.prefix = prefix
        self.command_timeout = command_timeout
        self._given_keyring = keyring
        self._keyring: KeyRing | None = keyring
        self._client: Any = None
        self._fanout = RedisFanout(self)
        self._up = True
        self._failures = 0

    def __repr__(self) -> str:
        return f"RedisState({redacted(self.url)!r}, prefix={self.prefix!r})"

    # ------------------------------------------------------------------------------ connection

    def key(self, *parts: str) -> str:
        """The Redis key (or channel) named by ``parts`` under this state's prefix."""
        return self.prefix + ":".join(parts)

    @property
    def client(self) -> Any:
        """The ``redis.asyncio.Redis`` client (valid inside :meth:`opened`), for the stores built on it."""
        if self._client is None:
            raise RuntimeError("RedisState is not opened")
        return self._client

    def new_client(self, **options: Any) -> Any:
        """A separate client on the same server (a subscription holds a connection of its own)."""
        import redis.asyncio
        from redis.asyncio.retry import Retry
        from redis.backoff import ExponentialBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError

        settings: dict[str, Any] = {
            "socket_timeout": self.command_timeout,
            "socket_connect_timeout": self.command_timeout,
            "health_check_interval": 15,
            # After Redis restarts, the pool's old connections fail once ("Connection closed by server"):
            # retried on a fresh connection instead of failing the call. Bounded: a Redis that is down
            # still fails within about one connect timeout.
            # Only a connection error is retried: a timeout (a frozen Redis) fails at once, within one timeout.
            "retry": Retry(ExponentialBackoff(cap=0.25, base=0.02), 2, supported_errors=(RedisConnectionError,)),
        }
        settings.update(options)
        return redis.asyncio.Redis.from_url(self.url, **settings)

    @contextmanager
    def guard(self, what: str) -> Iterator[None]:
        """Turn "Redis is unreachable" into :class:`SharedStateUnavailable` naming ``what``."""
        try:
            yield
        except _redis_errors() as problem:
            self._failures += 1
            if self._up:  # once per outage, not once per call
                logger.warning("shared state unavailable (%s): %s", what, problem)
            self._up = False
            raise SharedStateUnavailable(what) from None
        if not self._up:
            logger.info("shared state reachable again")
        self._up = True

    def counters(self) -> dict[str, float]:
        return {"up": 1.0 if self._up else 0.0, "failures": float(self._failures)}

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[None]:
        try:
            import redis.asyncio  # noqa: F401
        except ImportError:
            raise RuntimeError(INSTALL_HINT) from None
        self._client = self.new_client()
        try:
            if self._given_keyring is None:
                self._keyring = await self._shared_keyring()
            logger.info("shared state on Redis at %s (prefix %r)", redacted(self.url), self.prefix)
            yield
        finally:
            client, self._client = self._client, None
            with anyio.CancelScope(shield=True):
                await client.aclose()

    async def _shared_keyring(self) -> KeyRing:
        """The key every replica seals with: made once (``SET NX``), then read by every replica."""
        name = self.key("keyring")
        with self.guard("key ring"):
            await self.client.set(name, os.urandom(KEY_BYTES).hex(), nx=True)
            stored = await self.client.get(name)
        return KeyRing([bytes.fromhex(stored.decode("ascii"))])

    # ---------------------------------------------------------------------------- SharedState

    @property
    def keyring(self) -> KeyRing:
        if self._keyring is None:
            raise RuntimeError("the key ring is loaded when RedisState is opened")
        return self._keyring

    @property
    def fanout(self) -> RedisFanout:
        return self._fanout

    async def claim(self, name: str, ttl_seconds: float) -> bool:
        with self.guard("claim"):
            return bool(
                await self.client.set(self.key("claim", name), b"1", nx=True, px=max(1, int(ttl_seconds * 1000)))
            )

    async def health(self) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            with anyio.fail_after(self.command_timeout):
                await self.client.ping()
        except (TimeoutError, RuntimeError):
            return {"kind": self.kind, "reachable": False}
        except _redis_errors():
            return {"kind": self.kind, "reachable": False}
        return {"kind": self.kind, "reachable": True, "roundTripMs": round((time.perf_counter() - started) * 1000, 2)}


class RedisFanout:
    """:class:`~plainmcp.state.fanout.Fanout` on Redis pub/sub (at most once, as pub/sub is)."""

    kind = "redis"

    def __init__(self, state: RedisState) -> None:
        self._state = state

    async def publish(self, topic: str, message: dict[str, Any]) -> None:
        payload = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        with self._state.guard(f"publishing on {topic}"):
            await self._state.client.publish(self._state.key("fanout", topic), payload)

    @asynccontextmanager
    async def subscribe(self, topic: str) -> AsyncIterator[Subscription]:
        """The subscription is in place when the block is entered: Redis confirmed it (or the first
        attempt failed within the command timeout, and it is retried in the background). A replica
        that serves requests before its subscriptions exist would miss what others publish meanwhile."""
        channel = self._state.key("fanout", topic)
        messages = self._messages(channel, await self._subscribed(channel))
        try:
            yield messages
        finally:
            with anyio.CancelScope(shield=True):
                await messages.aclose()  # closes its connection now, not when the collector finds it

    async def _subscribed(self, channel: str) -> tuple[Any, Any] | None:
        """A client and its pubsub subscribed to ``channel``, once Redis has confirmed it; None if
        Redis cannot be reached within the command timeout."""
        # No read timeout on a subscription: it waits for messages; health checks find a dead link.
        client = self._state.new_client(socket_timeout=None, health_check_interval=5)
        pubsub = client.pubsub()
        try:
            await subscribe_confirmed(pubsub, channel, self._state.command_timeout)
            return client, pubsub
        except _subscribe_failures() as problem:
            logger.warning("subscription to %s not made (%s); retrying", channel, str(problem) or "timed out")
            with anyio.CancelScope(shield=True):
                await pubsub.aclose()
                await client.aclose()
            return None

    async def _messages(self, channel: str, subscribed: tuple[Any, Any] | None) -> Subscription:
        """The channel's messages, re-subscribing after a lost connection (with a capped backoff);
        ``subscribed``: the first subscription, already made."""
        attempt = 0 if subscribed is not None else 1
        while True:
            if subscribed is None:
                await anyio.sleep(backoff(attempt - 1))
                subscribed = await self._subscribed(channel)
                if subscribed is None:
                    attempt += 1
                    continue
                if attempt:
                    logger.info("subscription to %s restored", channel)
            client, pubsub = subscribed
            attempt = 0
            try:
                async for raw in pubsub.listen():
                    message = _decode(raw)
                    if message is not None:
                        yield message
            except _redis_errors() as problem:
                logger.warning("subscription to %s lost (%s); reconnecting", channel, problem)
            finally:
                with anyio.CancelScope(shield=True):
                    await pubsub.aclose()
                    await client.aclose()
            subscribed, attempt = None, 1


async def subscribe_confirmed(pubsub: Any, channel: str, timeout: float) -> None:
    """Subscribe ``pubsub`` to ``channel`` and return once Redis has confirmed it: from then on, nothing
    published there is missed. Raises TimeoutError after ``timeout`` seconds, or a redis-py error."""
    with anyio.fail_after(timeout):
        await pubsub.subscribe(channel)
        # SUBSCRIBE only sends the command; its confirmation is the first thing the connection reads.
        while True:
            confirmation = await pubsub.get_message(timeout=timeout)
            if isinstance(confirmation, dict) and confirmation.get("type") == "subscribe":
                return


def _decode(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, dict) or raw.get("type") != "message":
        return None
    try:
        message = json.loads(raw["data"])
    except (ValueError, TypeError):
        logger.warning("a fan-out message that is not JSON was dropped")
        return None
    return message if isinstance(message, dict) else None
