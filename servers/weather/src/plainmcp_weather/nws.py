"""The US National Weather Service API (api.weather.gov): active alerts, and which US point is where.

The NWS wants a User-Agent naming the application and a contact (it blocks anonymous clients),
``Accept: application/geo+json``, and coordinates with at most 4 decimals (more gets a 301 to the
rounded URL: rounding here saves that round trip; redirects are followed anyway).
"""

from __future__ import annotations

import re
from typing import Any

from .upstream import OnWait, Rejected, Unavailable, Upstream

ATTRIBUTION = "Alerts from the US National Weather Service (api.weather.gov), public domain"
FORECAST_ATTRIBUTION = "Forecast from the US National Weather Service (api.weather.gov), public domain"
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


#: Periods kept from an answer: 14 named (7 days) or, hourly, a week of hours (the tool keeps fewer).
MAX_PERIODS = 168
_GRID_ID = re.compile(r"[A-Z]{3}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 10_000


def _period(raw: Any) -> dict[str, Any] | None:
    """One NWS forecast period in our names, or None when it is not an object."""
    if not isinstance(raw, dict):
        return None
    chance = raw.get("probabilityOfPrecipitation")
    chance = chance.get("value") if isinstance(chance, dict) else None
    wind = " ".join(part for part in (raw.get("windSpeed"), raw.get("windDirection")) if isinstance(part, str))
    temperature = raw.get("temperature")
    return {
        "name": _text(raw.get("name")) or None,
        "start": _text(raw.get("startTime")),
        "end": _text(raw.get("endTime")),
        "is_daytime": raw.get("isDaytime") if isinstance(raw.get("isDaytime"), bool) else None,
        "temperature": temperature
        if isinstance(temperature, (int, float)) and not isinstance(temperature, bool)
        else None,
        "temperature_unit": _text(raw.get("temperatureUnit")),
        "precipitation_probability": chance if isinstance(chance, (int, float)) else None,
        "wind": wind or None,
        "conditions": _text(raw.get("shortForecast")),
        "text": _text(raw.get("detailedForecast")) or None,
    }


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
        """Where a point is: ``{"state", "city", "office", "grid"}`` (``grid``: the forecast office's grid
        cell, ``(office id, x, y)``, or None).

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
        grid_id, grid_x, grid_y = properties.get("gridId"), properties.get("gridX"), properties.get("gridY")
        cell = (
            [grid_id, grid_x, grid_y]
            if isinstance(grid_id, str) and _GRID_ID.fullmatch(grid_id) and _is_int(grid_x) and _is_int(grid_y)
            else None
        )
        return {"state": where.get("state"), "city": where.get("city"), "office": properties.get("cwa"), "grid": cell}

    async def forecast(
        self, grid: list[Any], *, hourly: bool, units: str, on_wait: OnWait | None = None
    ) -> dict[str, Any]:
        """The forecaster's periods for a grid cell (from :meth:`point`): 12-hour named periods with
        their text, or hours. ``units`` is ``us`` or ``si``. The URL is built from the cell, never
        taken from an answer, so it cannot lead off this upstream.

        Returns ``{"updated", "periods": [{name, start, end, is_daytime, temperature, temperature_unit,
        precipitation_probability, wind, conditions, text}]}``.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json`.
        """
        office, x, y = grid
        url = f"{self.base_url}/gridpoints/{office}/{int(x)},{int(y)}/forecast" + ("/hourly" if hourly else "")
        data = await self.upstream.get_json(url, {"units": units}, on_wait)
        properties = data.get("properties") if isinstance(data, dict) else None
        periods = properties.get("periods") if isinstance(properties, dict) else None
        if not isinstance(properties, dict) or not isinstance(periods, list):
            raise _unreadable(self.upstream.label)
        rows = [row for row in map(_period, periods[:MAX_PERIODS]) if row is not None]
        return {"updated": properties.get("updateTime"), "periods": rows}

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
        return self._alerts_from(data)

    def _alerts_from(self, data: Any) -> dict[str, Any]:
        features = data.get("features") if isinstance(data, dict) else None
        if not isinstance(features, list):
            raise _unreadable(self.upstream.label)
        alerts = [alert for alert in map(alert_from, features) if alert is not None]
        return {"title": _text(data.get("title")), "updated": data.get("updated"), "alerts": alerts}

    async def alerts_if_changed(
        self, area: str, validators: dict[str, str]
    ) -> tuple[dict[str, Any] | None, dict[str, str]]:
        """A conditional poll of an area's active alerts: ``(None, validators)`` when the NWS says
        nothing changed since ``validators`` (its ETag / Last-Modified, from the previous poll; empty
        the first time), else ``(alerts as :meth:`alerts` gives them, the new validators)``.

        Raises:
            UpstreamError: see :meth:`Upstream.fetch`.
        """
        conditions = {}
        if "etag" in validators:
            conditions["If-None-Match"] = validators["etag"]
        if "last-modified" in validators:
            conditions["If-Modified-Since"] = validators["last-modified"]
        status, headers, data = await self.upstream.fetch(
            f"{self.base_url}/alerts/active", {"area": area}, conditions=conditions
        )
        if status == 304:
            return None, validators
        fresh = {name: headers[name] for name in ("etag", "last-modified") if name in headers}
        return self._alerts_from(data), fresh
