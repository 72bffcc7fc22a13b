"""Open-Meteo's other APIs: air quality, marine forecasts and historical weather (the archive).

Each is its own host and its own upstream (own breaker), queried like the forecast API (variables
by section, ``timezone=auto``) and answered in the same shape; times are made local the same way
(see :mod:`.localtime`). An answer missing what we asked for raises
:class:`~plainmcp_weather.upstream.Unavailable`.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from .localtime import localize, zone
from .openmeteo import columns, is_number, unreadable
from .units import Units
from .upstream import OnWait, Upstream

AIR_QUALITY_ATTRIBUTION = (
    "Air quality data by Open-Meteo.com (https://open-meteo.com/), CC BY 4.0, based on the Copernicus "
    "Atmosphere Monitoring Service (CAMS)"
)
MARINE_ATTRIBUTION = "Marine data by Open-Meteo.com (https://open-meteo.com/), licensed under CC BY 4.0"
ARCHIVE_ATTRIBUTION = (
    "Historical weather by Open-Meteo.com (https://open-meteo.com/), CC BY 4.0, from the ERA5 reanalysis "
    "(Copernicus Climate Change Service)"
)

#: Air quality now: the indexes, the pollutants, and pollen (Europe only: null elsewhere). Names are
#: Open-Meteo's, kept as they are (they are already plain).
AIR_QUALITY = (
    "european_aqi",
    "us_aqi",
    "pm2_5",
    "pm10",
    "ozone",
    "nitrogen_dioxide",
    "sulphur_dioxide",
    "carbon_monoxide",
    "alder_pollen",
    "birch_pollen",
    "grass_pollen",
    "mugwort_pollen",
    "olive_pollen",
    "ragweed_pollen",
)
MARINE_CURRENT = (
    "wave_height",
    "wave_direction",
    "wave_period",
    "swell_wave_height",
    "swell_wave_direction",
    "swell_wave_period",
    "sea_surface_temperature",
)
MARINE_DAILY = ("wave_height_max", "wave_direction_dominant", "wave_period_max", "swell_wave_height_max")
#: The archive's daily variables -> our names (those of the forecast's daily rows where they match).
ARCHIVE_DAILY = {
    "weather_code": "weather_code",
    "temperature_2m_max": "temperature_max",
    "temperature_2m_min": "temperature_min",
    "temperature_2m_mean": "temperature_mean",
    "precipitation_sum": "precipitation_sum",
    "wind_speed_10m_max": "wind_speed_max",
}


def _grid(data: Any, label: str) -> tuple[dict[str, Any], int, Any]:
    """``(grid, utc offset, zone)`` of an answer, or Unavailable when it has no coordinates."""
    if not isinstance(data, dict) or not is_number(data.get("latitude")) or not is_number(data.get("longitude")):
        raise unreadable(label)
    offset = data.get("utc_offset_seconds")
    offset = int(offset) if is_number(offset) and abs(offset) <= 18 * 3600 else 0
    name = data.get("timezone") if isinstance(data.get("timezone"), str) else None
    grid = {
        "latitude": data["latitude"],
        "longitude": data["longitude"],
        "elevation": data.get("elevation"),
        "timezone": name or "GMT",
        "utc_offset_seconds": offset,
    }
    return grid, offset, zone(name, offset)


def _labels(units: Any, names: tuple[str, ...] | list[str]) -> dict[str, str]:
    units = units if isinstance(units, dict) else {}
    return {name: str(units[name]) for name in names if isinstance(units.get(name), str)}


def _current(data: dict[str, Any], names: tuple[str, ...], offset: int, place_zone: Any, label: str) -> dict[str, Any]:
    section = data.get("current")
    if not isinstance(section, dict):
        raise unreadable(label)
    return {"time": localize(section.get("time"), offset, place_zone), **{name: section.get(name) for name in names}}


class OpenMeteoMore:
    """The three APIs, each through its own :class:`Upstream` (whose transport adds the API key)."""

    def __init__(self, air_quality: Upstream, marine: Upstream, archive: Upstream, *, urls: dict[str, str]) -> None:
        self.air_quality_api, self.marine_api, self.archive_api = air_quality, marine, archive
        self.urls = {
            "air_quality": f"{urls['air_quality']}/v1/air-quality",
            "marine": f"{urls['marine']}/v1/marine",
            "archive": f"{urls['archive']}/v1/archive",
        }

    async def air_quality(self, latitude: float, longitude: float, on_wait: OnWait | None = None) -> dict[str, Any]:
        """Air quality now: ``{"grid", "units", "current": {time, european_aqi, ..., ragweed_pollen}}``.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json`.
        """
        params = {
            "latitude": round(latitude, 4),
            "longitude": round(longitude, 4),
            "current": ",".join(AIR_QUALITY),
            "timezone": "auto",
        }
        label = self.air_quality_api.label
        data = await self.air_quality_api.get_json(self.urls["air_quality"], params, on_wait)
        grid, offset, place_zone = _grid(data, label)
        return {
            "grid": grid,
            "units": _labels(data.get("current_units"), AIR_QUALITY),
            "current": _current(data, AIR_QUALITY, offset, place_zone, label),
        }

    async def marine(
        self, latitude: float, longitude: float, days: int, on_wait: OnWait | None = None
    ) -> dict[str, Any]:
        """Sea state now and ``days`` of daily maxima: ``{"grid", "units", "current", "daily": [...]}``.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json` (a point on land gets null values, not an error).
        """
        params = {
            "latitude": round(latitude, 4),
            "longitude": round(longitude, 4),
            "current": ",".join(MARINE_CURRENT),
            "daily": ",".join(MARINE_DAILY),
            "forecast_days": days,
            "timezone": "auto",
        }
        label = self.marine_api.label
        data = await self.marine_api.get_json(self.urls["marine"], params, on_wait)
        grid, offset, place_zone = _grid(data, label)
        daily = columns(data.get("daily"), {name: name for name in MARINE_DAILY}, days, label)
        for row in daily:
            row.pop("conditions", None)  # no weather code in a marine answer
        return {
            "grid": grid,
            "units": {
                **_labels(data.get("current_units"), MARINE_CURRENT),
                **_labels(data.get("daily_units"), MARINE_DAILY),
            },
            "current": _current(data, MARINE_CURRENT, offset, place_zone, label),
            "daily": daily,
        }

    async def archive(
        self, latitude: float, longitude: float, start: str, end: str, units: Units, on_wait: OnWait | None = None
    ) -> dict[str, Any]:
        """Daily weather from ``start`` to ``end`` (ISO dates, the place's): ``{"grid", "units", "daily"}``.

        Raises:
            UpstreamError: see :meth:`Upstream.get_json` (a date outside the archive is a Rejected 400).
        """
        params = {
            "latitude": round(latitude, 4),
            "longitude": round(longitude, 4),
            "start_date": start,
            "end_date": end,
            "daily": ",".join(ARCHIVE_DAILY),
            "timezone": "auto",
            **units.query(),
        }
        label = self.archive_api.label
        data = await self.archive_api.get_json(self.urls["archive"], params, on_wait)
        grid, _, _ = _grid(data, label)
        raw_units = data.get("daily_units") if isinstance(data.get("daily_units"), dict) else {}
        return {
            "grid": grid,
            "units": {
                "temperature": str(raw_units.get("temperature_2m_max") or ""),
                "wind_speed": str(raw_units.get("wind_speed_10m_max") or ""),
                "precipitation": str(raw_units.get("precipitation_sum") or ""),
            },
            # No more rows than days asked for, whatever the upstream sent.
            "daily": columns(
                data.get("daily"), ARCHIVE_DAILY, (date.fromisoformat(end) - date.fromisoformat(start)).days + 1, label
            ),
        }
