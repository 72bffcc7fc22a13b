"""One publishing bus for resource updates and list changes.

Servers publish from anywhere (a handler, a file watcher task); every live connection that
subscribed receives what it asked for. Legacy sessions subscribe with ``resources/subscribe`` and get
list changes once initialized; modern ``subscriptions/listen`` streams subscribe per type. Both are
just :class:`Subscriber` objects here.

With state shared by several replicas, :meth:`SubscriptionBus.publish` goes through a relay (set by
:meth:`SubscriptionBus.relay_through`, see :mod:`plainmcp.state.notifications`) so that subscribers on
every replica hear it; :meth:`SubscriptionBus.deliver_here` is what reaches this process's subscribers.

The bus also tells publishers who is listening (:meth:`SubscriptionBus.subscribed_uris`,
:meth:`SubscriptionBus.wait_changed`), so a file watcher can start when the first client subscribes
and stop when the last one leaves.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, Protocol

import anyio

logger = logging.getLogger(__name__)


def uri_covers(subscribed: str, uri: str) -> bool:
    """True when a subscription to ``subscribed`` asks for updates of ``uri``: the same URI, or one
    below it (a subscription to a folder covers the files in it)."""
    return uri == subscribed or uri.startswith(subscribed.rstrip("/") + "/")


def any_covers(subscribed: Iterable[str], uri: str) -> bool:
    return any(uri_covers(base, uri) for base in subscribed)


class Subscriber(Protocol):
    @property
    def subscribed_uris(self) -> Iterable[str]:
        """The resource URIs this subscriber asked to hear about (read-only here: an attribute or a property)."""

    async def deliver(self, method: str, params: dict[str, Any] | None) -> None:
        """Send the notification if this subscriber asked for it; never raise for a gone peer."""


class Relay(Protocol):
    """Where :meth:`SubscriptionBus.publish` sends notifications when replicas share state
    (:class:`plainmcp.state.notifications.NotificationRelay`)."""

    async def publish(self, method: str, params: dict[str, Any] | None) -> None: ...


class SubscriptionBus:
    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []
        self._changed: anyio.Event | None = None
        self._relay: Relay | None = None
        #: The name of the relayed notification being delivered (see :meth:`deliver_here`), else None.
        self.publication: str | None = None

    def relay_through(self, relay: Relay | None) -> None:
        """Publish through ``relay`` (replicas), or straight to this process's subscribers (None)."""
        self._relay = relay

    def attach(self, subscriber: Subscriber) -> None:
        self._subscribers.append(subscriber)
        self.changed()

    def detach(self, subscriber: Subscriber) -> None:
        try:
            self._subscribers.remove(subscriber)
        except ValueError:
            return
        self.changed()

    def __len__(self) -> int:
        return len(self._subscribers)

    # ------------------------------------------------------------------------------ interest

    def subscribed_uris(self) -> set[str]:
        """Every resource URI some connected client subscribed to (legacy and modern alike)."""
        uris: set[str] = set()
        for subscriber in self._subscribers:
            uris.update(subscriber.subscribed_uris)
        return uris

    def changed(self) -> None:
        """A subscriber came, went, or changed its URIs: wake :meth:`wait_changed`."""
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_changed(self) -> None:
        """Return after the next attach, detach, subscribe or unsubscribe."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    # ---------------------------------------------------------------------------- publishing

    async def publish(self, method: str, params: dict[str, Any] | None = None, *, local: bool = False) -> None:
        """Deliver one notification to every subscriber that wants it: on every replica with a relay,
        unless ``local`` (then to this process's subscribers only)."""
        if self._relay is not None and not local:
            await self._relay.publish(method, params)
            return
        await self.deliver_here(method, params)

    async def deliver_here(
        self, method: str, params: dict[str, Any] | None = None, *, publication: str | None = None
    ) -> None:
        """Deliver one notification to this process's subscribers that want it, in attach order.

        ``publication`` names a notification relayed from the replicas' fan-out (the same name on every
        replica); a subscriber reads it as :attr:`publication` on entry to its ``deliver``, before any await."""
        for subscriber in tuple(self._subscribers):
            self.publication = publication
            try:
                await subscriber.deliver(method, params)
            except Exception:
                logger.exception("delivering %s failed", method)
