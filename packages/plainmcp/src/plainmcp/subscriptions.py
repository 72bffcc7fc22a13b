"""One publishing bus for resource updates and list changes.

Servers publish from anywhere (a handler, a file watcher task); every live connection that
subscribed receives what it asked for. Legacy sessions subscribe with ``resources/subscribe`` and get
list changes once initialized; modern ``subscriptions/listen`` streams subscribe per type. Both are
just :class:`Subscriber` objects here.
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

logger = logging.getLogger(__name__)


class Subscriber(Protocol):
    async def deliver(self, method: str, params: dict[str, Any] | None) -> None:
        """Send the notification if this subscriber asked for it; never raise for a gone peer."""


class SubscriptionBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def attach(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)

    def detach(self, subscriber: Subscriber) -> None:
        try:
            self._subscribers.remove(subscriber)
        except ValueError:
            pass

    def __len__(self) -> int:
        return len(self._subscribers)

    async def publish(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Deliver one notification to every subscriber that wants it, in attach order."""
        for subscriber in tuple(self._subscribers):
            try:
                await subscriber.deliver(method, params)
            except Exception:
                logger.exception("delivering %s failed", method)
