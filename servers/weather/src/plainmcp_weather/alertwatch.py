"""Alerts you can subscribe to: ``weather://alerts/{area}`` and the poller behind its subscriptions.

The NWS pushes nothing, so the server polls, and politely: only areas someone is subscribed to now
(legacy ``resources/subscribe`` or a 2026-07-28 listen stream alike), each at most once per
``alerts_poll`` seconds (60 by default, never less against api.weather.gov), conditionally
(``If-None-Match`` / ``If-Modified-Since``: an unchanged list costs a 304 and no body). When an
area's alerts differ from the last poll (one issued, updated, or expired and gone), its subscribers
get ``notifications/resources/updated``. The first poll of an area sets the baseline.

Replicas (``--redis``) share their polls: the list a replica fetched is kept for the others for one
``alerts_poll``, so an area is asked for about once per interval whatever the number of replicas
subscribed to it. Each replica still compares the list with the one it saw last and tells its own
subscribers, so each hears of a change once (a replica may hear of it up to one interval later).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from plainmcp import ErrorCode, MCPError, Server

from .nws import ATTRIBUTION
from .places import state_code
from .service import WeatherService
from .upstream import UpstreamError

logger = logging.getLogger(__name__)

TEMPLATE = "weather://alerts/{area}"
_URI = re.compile(r"^weather://alerts/([A-Za-z]{2})$")


def area_of(uri: str) -> str | None:
    """The area code of an alerts URI (``weather://alerts/FL`` -> ``FL``), or None for another URI."""
    match = _URI.match(uri)
    if match is None:
        return None
    code = state_code(match.group(1))
    return code if code == match.group(1).upper() else None


async def read_alerts(service: WeatherService, uri: str, area: str) -> str:
    """The resource: an area's active alerts as JSON (as ``get_alerts`` gives them).

    Raises:
        MCPError: -32602 for an area that is not a US state or territory code; -32603 with the
            upstream's sentence when the NWS cannot be read.
    """
    code = area_of(uri)
    if code is None:
        raise MCPError(
            ErrorCode.INVALID_PARAMS, f"{area!r} is not a US state or territory code (such as FL): no alerts resource."
        )
    try:
        answer = await service.alerts(area=code)
    except UpstreamError as failure:
        raise MCPError(ErrorCode.INTERNAL_ERROR, failure.message) from None
    value = answer.value
    return json.dumps(
        {
            "area": code,
            "title": value.get("title"),
            "updated": value.get("updated"),
            "count": len(value["alerts"]),
            "alerts": value["alerts"],
            "stale": answer.stale,
            "attribution": ATTRIBUTION,
        },
        ensure_ascii=False,
    )


def signature(alerts: dict[str, Any]) -> list[tuple[Any, ...]]:
    """What makes two polls differ for a subscriber: each alert's event, headline, times and severity."""
    keys = ("event", "headline", "severity", "effective", "expires", "ends", "description")
    return sorted(tuple(str(alert.get(key)) for key in keys) for alert in alerts["alerts"])


@dataclass
class _Area:
    validators: dict[str, str] = field(default_factory=dict)
    seen: list[tuple[Any, ...]] | None = None  # None until the first poll
    polled_at: float | None = None
    last: dict[str, Any] | None = None  # the list of the last poll (shared again after a 304)


class AlertWatcher:
    """Polls the subscribed areas (a :meth:`plainmcp.Server.background` task: :meth:`run`).

    ``clock`` is monotonic (injectable); ``polls`` counts the NWS requests made, for tests.
    """

    def __init__(self, service: WeatherService, *, every: float, clock: Callable[[], float]) -> None:
        self.service = service
        self.every = every
        self.clock = clock
        self.areas: dict[str, _Area] = {}
        self.polls = 0

    def subscribed(self, server: Server) -> dict[str, set[str]]:
        """``{area: its URIs}`` for every alerts URI someone is subscribed to now (``weather://alerts/fl``
        and ``weather://alerts/FL`` are one area, polled once, and both hear of a change)."""
        found: dict[str, set[str]] = {}
        for uri in server.subscribed_uris():
            code = area_of(uri)
            if code is not None:
                found.setdefault(code, set()).add(uri)
        return found

    async def run(self, server: Server) -> None:
        """Poll while someone is subscribed; sleep on the subscriptions while nobody is."""
        while True:
            wanted = self.subscribed(server)
            for gone in set(self.areas) - set(wanted):
                del self.areas[gone]  # a new subscription starts from a new baseline
            if not wanted:
                await server.subscriptions_changed()
                continue
            for code, uris in sorted(wanted.items()):
                area = self.areas.setdefault(code, _Area())
                if area.polled_at is None or self.clock() - area.polled_at >= self.every:
                    await self._poll(server, code, uris, area)
            due = min(area.polled_at or 0.0 for area in self.areas.values()) + self.every - self.clock()
            with anyio.move_on_after(max(due, 0.0)):
                await server.subscriptions_changed()

    async def _poll(self, server: Server, code: str, uris: set[str], area: _Area) -> None:
        area.polled_at = self.clock()
        sharing, name = self.service.sharing, f"alerts-poll:{code}"
        polled = await sharing.get(name)
        if polled is not None and polled.fresh(self.service.now()) and isinstance(polled.value, dict):
            alerts: dict[str, Any] | None = polled.value  # another replica polled within the interval
            area.validators = {}  # our validators are older than this list: a 304 would not say "as this"
        else:
            self.polls += 1
            try:
                alerts, area.validators = await self.service.nws.alerts_if_changed(code, area.validators)
            except UpstreamError as failure:
                logger.warning("alerts for %s: %s", code, failure.message)
                return
            if alerts is not None or area.last is not None:
                await sharing.put(name, alerts if alerts is not None else area.last, self.every, 0.0)
        if alerts is None:
            return  # 304: unchanged
        area.last = alerts
        self.service.remember_alerts(code, alerts)  # a read after the notification sees this poll's list
        now = signature(alerts)
        changed = area.seen is not None and now != area.seen
        area.seen = now
        if changed:
            logger.info("alerts for %s changed: notifying subscribers", code)
            for uri in sorted(uris):
                await server.notify_resource_updated(uri, observed=True)
