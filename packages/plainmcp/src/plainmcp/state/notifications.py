"""Resource updates and list changes across replicas: the server's bus, relayed through the fan-out.

With replicated state, a notification published on one replica (by a handler, or a watcher) goes to
the fan-out; every replica's relay hands what arrives to its own subscribers (legacy sessions and
``subscriptions/listen`` streams). Several replicas often see the same change (each watching the same
files, or polling the same database): identical notifications within :data:`DEDUPE_SECONDS` are sent
once, by the first replica to claim them. They are "read it again" signals, so coalescing them loses
nothing a client could act on.

If the shared store is unreachable, a notification is still delivered to this replica's own
subscribers (and a warning logged): the call that made the change does not fail for it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from typing import TYPE_CHECKING, Any

from . import SharedState, SharedStateUnavailable

if TYPE_CHECKING:
    from ..subscriptions import SubscriptionBus

logger = logging.getLogger(__name__)

TOPIC = "notify"
#: Identical notifications closer together than this are sent once.
DEDUPE_SECONDS = 1.0


class NotificationRelay:
    """Publishes a bus's notifications to every replica and delivers theirs (see the module)."""

    def __init__(self, shared: SharedState, bus: SubscriptionBus) -> None:
        self.shared = shared
        self.bus = bus

    async def publish(self, method: str, params: dict[str, Any] | None) -> None:
        message = {"method": method, "params": params}
        digest = hashlib.sha256(json.dumps(message, sort_keys=True, default=str).encode()).hexdigest()
        try:
            if not await self.shared.claim(f"notify:{digest}", DEDUPE_SECONDS):
                return  # another replica (or this one, a moment ago) already sent it
            await self.shared.fanout.publish(TOPIC, message)
        except SharedStateUnavailable:
            logger.warning("%s reaches only this replica's subscribers: the shared store is unreachable", method)
            await self.bus.deliver_here(method, params)

    async def run(self) -> None:
        """Deliver what every replica publishes to this replica's subscribers, until cancelled."""
        async with self.shared.fanout.subscribe(TOPIC) as messages:
            async for message in messages:
                method = message.get("method")
                params = message.get("params")
                if isinstance(method, str) and (params is None or isinstance(params, dict)):
                    await self.bus.deliver_here(method, params)
