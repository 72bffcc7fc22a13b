"""A fan-out of messages to every replica: the interface, and the in-process implementation.

A message is a JSON object published on a topic (a short name, such as ``"notify"``); every
subscription to that topic, on every replica, receives it, the publisher's own replica included.
Delivery is at most once: a subscriber that is not listening (or a store that is down) misses the
message, which is what ``subscriptions/listen`` promises (no replay). The Redis implementation is in
:mod:`plainmcp.state.redis_state`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Protocol

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

logger = logging.getLogger(__name__)

#: Messages a slow in-process subscriber may fall behind before the oldest are dropped (at most once).
SUBSCRIBER_BUFFER = 1024

#: What a subscription yields: the messages of its topic, in publishing order per publisher.
Subscription = AsyncGenerator[dict[str, Any], None]


class Fanout(Protocol):
    async def publish(self, topic: str, message: dict[str, Any]) -> None:
        """Send ``message`` to every subscription of ``topic`` on every replica.

        Raises:
            SharedStateUnavailable: the shared store cannot be reached (nothing was sent).
        """

    def subscribe(self, topic: str) -> AbstractAsyncContextManager[Subscription]:
        """The messages of ``topic`` for the block's duration (reconnecting by itself if the store goes
        away: messages published meanwhile are missed)."""


class MemoryFanout:
    """Every subscription lives in this process: one process, one replica."""

    kind = "memory"

    def __init__(self) -> None:
        self._topics: dict[str, set[MemoryObjectSendStream[dict[str, Any]]]] = {}

    async def publish(self, topic: str, message: dict[str, Any]) -> None:
        for stream in tuple(self._topics.get(topic, ())):
            try:
                stream.send_nowait(message)
            except anyio.WouldBlock:
                logger.warning("a subscriber of %r is %d messages behind; one dropped", topic, SUBSCRIBER_BUFFER)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._topics.get(topic, set()).discard(stream)

    @asynccontextmanager
    async def subscribe(self, topic: str) -> AsyncIterator[Subscription]:
        send: MemoryObjectSendStream[dict[str, Any]]
        receive: MemoryObjectReceiveStream[dict[str, Any]]
        send, receive = anyio.create_memory_object_stream(SUBSCRIBER_BUFFER)
        self._topics.setdefault(topic, set()).add(send)
        try:
            async with receive:
                yield _messages(receive)
        finally:
            streams = self._topics.get(topic)
            if streams is not None:
                streams.discard(send)
                if not streams:
                    del self._topics[topic]
            send.close()


async def _messages(receive: MemoryObjectReceiveStream[dict[str, Any]]) -> Subscription:
    async for message in receive:
        yield message


def backoff(attempt: int, *, first: float = 0.05, most: float = 2.0) -> float:
    """Seconds to wait before reconnection attempt ``attempt`` (0, 1, ...): doubling, capped."""
    return min(most, first * math.pow(2, min(attempt, 16)))
