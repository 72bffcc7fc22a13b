"""The US National Weather Service API (api.weather.gov): active alerts, and which US point is where.

The NWS wants a User-Agent naming the application and a contact (it blocks anonymous clients),
``Accept: application/geo+json``, and coordinates with at most 4 decimals (more gets a 301 to the
rounded URL: rounding here saves that round trip; redirects are followed anyway).
"""

from __future__ import annotations

from typing import Any

from .upstream import OnWait, Rejected, Unavailable, Upstream

ATTRIBUTION = "Alerts from the US National Weather Service (api.weather.gov), public domain"
ACCEPT = "application/geo+json"
#: Alert fields we return, in the NWS's own names on the right.
ALERT_FIELDS = {
    "event": "event",
    "headline": "headline",
    "severity": "severity",
    "urgency": "urgency",
    "certainty": "certainty",
    "area": "areaDesc",
    "effective": "effective",
    "onset": "onset",
    "expires": "expires",
    "ends": "ends",
    "sender": "senderName",
    "description": "description",
    "instruction": "instruction",
}
#: Long NWS texts are cut here: the model needs the gist, the headline and instruction carry the rest.
MAX_TEXT = 2000


class OutsideCoverage(Exception):
    """The point is not one the NWS covers (outside the US and its territories)."""


def coordinate(value: float) -> str:
    """A coordinate as the NWS wants it: at most 4 decimals, no trailing zeros (``-97.09``)."""
    text = f"{round(value, 4):.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _unreadable(label: str) -> Unavailable:
    return Unavailable(f"The {label} service sent an answer that could not be read. Try again later.")


def _text(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value[:MAX_TEXT] + " [...]" if len(value) > MAX_TEXT else value


def alert_from(feature: Any) -> dict[str, Any] | None:
    properties = feature.get("properties") if isinstance(feature, dict) else None
    if not isinstance(properties, dict):
        return None
    return {ours: _text(properties.get(theirs)) for ours, theirs in ALERT_FIELDS.items()}


class NWS:
    """Calls to api.weather.gov through ``upstream`` (whose headers carry the User-Agent)."""

    def __init__(self, upstream: Upstream, *, base_url: str) -> None:
        self.upstream = upstream
        self.base_url = base_url

    async def point(self, latitude: float, longitude: float, on_wait: OnWait | None = None) -> dict[str, Any]:
        """Where a point is: ``{"state", "city", "office"}``.

        Raises:
            OutsideCoverage: the NWS has no data for the point (its 404).
            UpstreamError: anything else from :meth:`Upstream.get_json`.
        """
        url = f"{self.base_url}/points/{coordinate(latitude)},{coordinate(longitude)}"
        try:
            data = await self.upstream.get_json(url, None, on_wait)
        except Rejected as rejected:
            if rejected.status == 404:
                raise OutsideCoverage from None
            raise
        properties = data.get("properties") if isinstance(data, dict) else None
        if not isinstance(properties, dict):
            raise _unreadable(self.upstream.label)
        relative = properties.get("relativeLocation")
        where = relative.get("properties") if isinstance(relative, dict) else None
        where = where if isinstance(where, dict) else {}
        return {"state": where.get("state"), "city": where.get("city"), "office": properties.get("cwa")}

    async def alerts(
        self,
        *,
        area: str | None = None,
        latitude: float | None = None,
        longitude: float | None = None,
        on_wait: OnWait | None = None,
    ) -> dict[str, Any]:
        """Active alerts for a state/territory code or a point: ``{"title", "updated", "alerts": [...]}``.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json` (an unknown area is a Rejected 400).
        """
        if area is not None:
            params = {"area": area}
        elif latitude is not None and longitude is not None:
            params = {"point": f"{coordinate(latitude)},{coordinate(longitude)}"}
        else:
            raise ValueError("alerts needs an area or a point")
        data = await self.upstream.get_json(f"{self.base_url}/alerts/active", params, on_wait)
        features = data.get("features") if isinstance(data, dict) else None
        if not isinstance(features, list):
            raise _unreadable(self.upstream.label)
        alerts = [alert for alert in map(alert_from, features) if alert is not None]
        return {"title": _text(data.get("title")), "updated": data.get("updated"), "alerts": alerts}
