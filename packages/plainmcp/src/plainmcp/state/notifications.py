"""Resource updates and list changes across replicas: the server's bus, relayed through the fan-out.

With replicated state, a notification published on one replica goes to the fan-out; every replica's
relay hands what arrives to its own subscribers (legacy sessions and ``subscriptions/listen`` streams).
Changes a watcher observed are published with ``local=True`` and skip the relay (see
``Server.notify_resource_updated``): every replica with subscribers runs its own watcher, so relaying
them too would tell each subscriber once per replica.

If the shared store is unreachable, a notification is still delivered to this replica's own
subscribers (and a warning logged): the call that made the change does not fail for it.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskStatus

from . import SharedState, SharedStateUnavailable

if TYPE_CHECKING:
    from ..subscriptions import SubscriptionBus

logger = logging.getLogger(__name__)

TOPIC = "notify"


class NotificationRelay:
    """Publishes a bus's notifications to every replica and delivers theirs (see the module)."""

    def __init__(self, shared: SharedState, bus: SubscriptionBus) -> None:
        self.shared = shared
        self.bus = bus

    async def publish(self, method: str, params: dict[str, Any] | None) -> None:
        try:
            # The id names this one publication on every replica: subscribers held by several replicas
            # (a legacy session's copies) write it once, and two equal changes stay two.
            await self.shared.fanout.publish(TOPIC, {"method": method, "params": params, "id": os.urandom(12).hex()})
        except SharedStateUnavailable:
            logger.warning("%s reaches only this replica's subscribers: the shared store is unreachable", method)
            await self.bus.deliver_here(method, params)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Deliver what every replica publishes to this replica's subscribers, until cancelled.
        Started (``task_status``) once the subscription is in place."""
        async with self.shared.fanout.subscribe(TOPIC) as messages:
            task_status.started()
            async for message in messages:
                method = message.get("method")
                params = message.get("params")
                publication = message.get("id")
                if isinstance(method, str) and (params is None or isinstance(params, dict)):
                    await self.bus.deliver_here(
                        method, params, publication=publication if isinstance(publication, str) else None
                    )
