"""Open-Meteo's geocoding and forecast APIs: the query each call sends, and its answer as plain dicts.

Field names are ours (``temperature``, not ``temperature_2m``) so the tools' output schemas do not
depend on Open-Meteo's variable naming. An answer missing what we asked for raises
:class:`~plainmcp_weather.upstream.Unavailable` (it is the upstream's failure, not the caller's).
"""

from __future__ import annotations

import math
from typing import Any, TypeGuard

from .localtime import localize, zone
from .units import Units
from .upstream import OnWait, Unavailable, Upstream
from .wmo import describe

ATTRIBUTION = "Weather data by Open-Meteo.com (https://open-meteo.com/), licensed under CC BY 4.0"

#: Open-Meteo variable -> our field name, per section of the answer.
CURRENT = {
    "temperature_2m": "temperature",
    "apparent_temperature": "apparent_temperature",
    "relative_humidity_2m": "relative_humidity",
    "precipitation": "precipitation",
    "weather_code": "weather_code",
    "cloud_cover": "cloud_cover",
    "pressure_msl": "pressure_msl",
    "wind_speed_10m": "wind_speed",
    "wind_direction_10m": "wind_direction",
    "wind_gusts_10m": "wind_gusts",
    "is_day": "is_day",
}
DAILY = {
    "weather_code": "weather_code",
    "temperature_2m_max": "temperature_max",
    "temperature_2m_min": "temperature_min",
    "precipitation_sum": "precipitation_sum",
    "precipitation_probability_max": "precipitation_probability_max",
    "wind_speed_10m_max": "wind_speed_max",
    "wind_gusts_10m_max": "wind_gusts_max",
    "uv_index_max": "uv_index_max",
    "sunrise": "sunrise",
    "sunset": "sunset",
}
HOURLY = {
    "temperature_2m": "temperature",
    "apparent_temperature": "apparent_temperature",
    "relative_humidity_2m": "relative_humidity",
    "precipitation_probability": "precipitation_probability",
    "precipitation": "precipitation",
    "weather_code": "weather_code",
    "wind_speed_10m": "wind_speed",
}
#: Hours of hourly data a forecast returns at most, from the current hour: enough for "tomorrow
#: afternoon", small enough for a model's context (16 days of hours would be 384 rows).
MAX_HOURS = 48
#: Days of hourly data fetched so that :data:`MAX_HOURS` from now fit whatever the local hour.
HOURLY_DAYS = 3
#: Candidates fetched when a qualifier will filter them: "Portland" alone has dozens.
QUALIFIED_COUNT = 50


def unreadable(label: str) -> Unavailable:
    return Unavailable(f"The {label} service sent an answer that could not be read. Try again later.")


def place_from(raw: Any) -> dict[str, Any] | None:
    """One geocoding result as our place dict, or None when it lacks a name or coordinates."""
    if not isinstance(raw, dict):
        return None
    name, latitude, longitude = raw.get("name"), raw.get("latitude"), raw.get("longitude")
    if not isinstance(name, str) or not is_number(latitude) or not is_number(longitude):
        return None
    place: dict[str, Any] = {"name": name, "latitude": float(latitude), "longitude": float(longitude)}
    for key in ("id", "country", "country_code", "admin1", "admin2", "timezone", "population", "elevation"):
        value = raw.get(key)
        if value not in (None, ""):
            place[key] = value
    return place


def is_number(value: Any) -> TypeGuard[int | float]:
    """A finite JSON number (not a boolean, NaN or an infinity)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) < 2**53  # JSON ints have no size; past this no float holds them exactly
    return isinstance(value, float) and math.isfinite(value)


#: Our fields that hold text (times and dates); every other field holds a number.
TEXT_FIELDS = frozenset({"time", "sunrise", "sunset"})


def clean(field: str, value: Any) -> Any:
    """An upstream value as we serve it, or None (missing) when it is not what ``field`` holds: a
    string for :data:`TEXT_FIELDS`, a finite number otherwise (a WMO code: a whole one, 0-99). A
    wrong type from upstream is a gap in the data, never a failure of the call."""
    if field in TEXT_FIELDS:
        return value if isinstance(value, str) else None
    if not is_number(value):
        return None
    if field == "weather_code":
        return int(value) if value == int(value) and 0 <= value <= 99 else None
    return value


def _unit_labels(units: Any) -> dict[str, str]:
    units = units if isinstance(units, dict) else {}
    return {
        "temperature": units.get("temperature_2m") or units.get("temperature_2m_max") or "",
        "wind_speed": units.get("wind_speed_10m") or units.get("wind_speed_10m_max") or "",
        "precipitation": units.get("precipitation") or units.get("precipitation_sum") or "",
    }


def rename(values: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    row = {ours: clean(ours, values.get(theirs)) for theirs, ours in names.items()}
    row["conditions"] = describe(row.get("weather_code"))
    return row


def columns(section: Any, names: dict[str, str], limit: int | None, label: str) -> list[dict[str, Any]]:
    """Open-Meteo's column arrays (``{"time": [...], "temperature_2m": [...]}``) as rows."""
    if not isinstance(section, dict) or not isinstance(section.get("time"), list):
        raise unreadable(label)
    times = section["time"][:limit] if limit is not None else section["time"]
    rows = []
    for index, when in enumerate(times):
        values = {
            theirs: (column[index] if isinstance(column := section.get(theirs), list) and index < len(column) else None)
            for theirs in names
        }
        rows.append({"time": clean("time", when), **rename(values, names)})
    return rows


class OpenMeteo:
    """The two Open-Meteo APIs. The API key (commercial plan) is not handled here: the HTTP client's
    transport adds it as ``apikey``, below anything that logs URLs (see :mod:`.redaction`)."""

    def __init__(
        self,
        geocoding: Upstream,
        forecast: Upstream,
        *,
        geocoding_url: str,
        forecast_url: str,
        language: str = "en",
    ) -> None:
        self.geocoding = geocoding
        self.forecast_api = forecast
        self.search_url = f"{geocoding_url}/v1/search"
        self.forecast_url = f"{forecast_url}/v1/forecast"
        self.language = language

    async def search(
        self, name: str, count: int, country_code: str | None = None, on_wait: OnWait | None = None
    ) -> list[dict[str, Any]]:
        """Places whose name matches ``name`` (no qualifier: see :mod:`.places`), most populous first.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json`.
        """
        params: dict[str, Any] = {"name": name, "count": count, "language": self.language, "format": "json"}
        if country_code:
            params["countryCode"] = country_code.upper()
        data = await self.geocoding.get_json(self.search_url, params, on_wait)
        if not isinstance(data, dict):
            raise unreadable(self.geocoding.label)
        results = data.get("results") or []  # absent when nothing matches
        if not isinstance(results, list):
            raise unreadable(self.geocoding.label)
        return [place for place in map(place_from, results) if place is not None]

    async def weather(
        self,
        latitude: float,
        longitude: float,
        units: Units,
        *,
        current: bool = False,
        days: int = 0,
        hourly: bool = False,
        on_wait: OnWait | None = None,
    ) -> dict[str, Any]:
        """Current conditions and/or ``days`` of daily forecast, plus the hours of at least
        :data:`HOURLY_DAYS` days from local midnight when ``hourly``. Times of day carry the offset valid
        at that moment in the place's zone (see :mod:`.localtime`); daily dates are the place's.

        Returns ``{"grid": {latitude, longitude, elevation, timezone}, "units": {...},
        "current"?: {...}, "daily"?: [...], "hourly"?: [...]}``.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json`; Unavailable also for an answer without
                the sections asked for.
        """
        params: dict[str, Any] = {
            "latitude": round(latitude, 4),
            "longitude": round(longitude, 4),
            "timezone": "auto",  # local times; daily values need a timezone
            **units.query(),
        }
        if current:
            params["current"] = ",".join(CURRENT)
        if days:
            params["daily"] = ",".join(DAILY)
        params["forecast_days"] = max(days, 1, HOURLY_DAYS if hourly else 0)
        if hourly:
            params["hourly"] = ",".join(HOURLY)
        label = self.forecast_api.label
        data = await self.forecast_api.get_json(self.forecast_url, params, on_wait)
        if not isinstance(data, dict) or not is_number(data.get("latitude")) or not is_number(data.get("longitude")):
            raise unreadable(label)
        offset = data.get("utc_offset_seconds")
        offset = int(offset) if is_number(offset) and abs(offset) <= 18 * 3600 else 0
        zone_name = data.get("timezone") if isinstance(data.get("timezone"), str) else None
        place_zone = zone(zone_name, offset)
        answer: dict[str, Any] = {
            "grid": {
                "latitude": data["latitude"],
                "longitude": data["longitude"],
                "elevation": clean("elevation", data.get("elevation")),
                "timezone": zone_name or "GMT",
                "utc_offset_seconds": offset,
            },
        }
        if current:
            section = data.get("current")
            if not isinstance(section, dict):
                raise unreadable(label)
            when = clean("time", section.get("time"))
            answer["current"] = {"time": localize(when, offset, place_zone), **rename(section, CURRENT)}
            answer["units"] = _unit_labels(data.get("current_units"))
        if days:
            answer["daily"] = columns(data.get("daily"), DAILY, days, label)
            answer.setdefault("units", _unit_labels(data.get("daily_units")))
        if hourly:
            # Every hour asked for (the caller keeps MAX_HOURS from its "now"), each at its true local
            # time; no more rows than asked for, whatever the upstream sent.
            answer["hourly"] = [
                {**row, "time": localize(row["time"], offset, place_zone)}
                for row in columns(data.get("hourly"), HOURLY, 24 * params["forecast_days"], label)
            ]
        answer.setdefault("units", _unit_labels({}))
        return answer
