"""The tools added for issue 21: air quality, marine forecasts, historical weather, and a comparison of
places. Each answers through the same :class:`WeatherService` as the first four (its cache, breakers,
single flight, retry progress), with an output schema, a short summary and its API's attribution.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

import anyio
from plainmcp import Context, Server, ToolError, ToolResult, content

from . import localtime, schemas, views
from .openmeteo import ATTRIBUTION
from .openmeteo_more import AIR_QUALITY_ATTRIBUTION, ARCHIVE_ATTRIBUTION, MARINE_ATTRIBUTION
from .service import WeatherService
from .tools import (
    _add,
    _alternatives_note,
    _failures,
    _freshness,
    _number,
    _place,
    _stale_note,
    _telling,
    _where_text,
)
from .units import units_for

#: The archive's first day; its last is a few days back (ERA5 is published with a delay).
ARCHIVE_START = date(1940, 1, 1)
ARCHIVE_DELAY_DAYS = 5

#: European AQI bands (EEA) and US AQI bands (EPA), each ``(upper bound, words)``.
EUROPEAN_BANDS = ((20, "good"), (40, "fair"), (60, "moderate"), (80, "poor"), (100, "very poor"))
US_BANDS = (
    (50, "good"),
    (100, "moderate"),
    (150, "unhealthy for sensitive groups"),
    (200, "unhealthy"),
    (300, "very unhealthy"),
)


def band(value: Any, bands: tuple[tuple[int, str], ...], beyond: str) -> str | None:
    """The words for an index value, or None when there is no value."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return None
    return next((words for upper, words in bands if value <= upper), beyond)


def _day(text: Any, name: str) -> date:
    """An ISO date argument (``YYYY-MM-DD``, nothing else).

    Raises:
        ToolError: anything else, saying what was expected.
    """
    if isinstance(text, str) and len(text) == 10:
        try:
            return date.fromisoformat(text)
        except ValueError:
            pass
    raise ToolError(f"{name} must be a date written YYYY-MM-DD, such as 2024-07-14.")


class CoverageTools:
    """The handlers of the four added tools. Each method's docstring is its tool's description."""

    def __init__(self, service: WeatherService) -> None:
        self.service = service

    async def get_air_quality(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Air quality now anywhere: European and US AQI, PM2.5, PM10, ozone, NO2; pollen (Europe only)."""
        watcher = _telling(ctx)
        location, alternatives, answers = await _place(self.service, args, watcher)
        with _failures():
            answer = await self.service.air_quality(location["latitude"], location["longitude"], watcher)
        data, fields = answer.value, _freshness(*answers, answer)
        now, units = data["current"], data["units"]
        european = band(now.get("european_aqi"), EUROPEAN_BANDS, "extremely poor")
        us = band(now.get("us_aqi"), US_BANDS, "hazardous")
        structured = {
            "location": location,
            "alternatives": alternatives,
            "grid": data["grid"],
            "units": units,
            "current": now,
            "european_category": european,
            "us_category": us,
            **fields,
            "attribution": AIR_QUALITY_ATTRIBUTION,
        }
        parts = [
            f"European AQI {_number(now.get('european_aqi'), '', 0)} ({european or 'n/a'})",
            f"US AQI {_number(now.get('us_aqi'), '', 0)} ({us or 'n/a'})",
            f"PM2.5 {_number(now.get('pm2_5'), units.get('pm2_5', ''))}",
            f"PM10 {_number(now.get('pm10'), units.get('pm10', ''))}",
            f"ozone {_number(now.get('ozone'), units.get('ozone', ''))}",
        ]
        pollen = {
            name.removesuffix("_pollen"): value
            for name, value in now.items()
            if name.endswith("_pollen") and isinstance(value, (int, float)) and value > 0
        }
        if pollen:
            parts.append("pollen " + ", ".join(f"{kind} {value:g}" for kind, value in pollen.items()))
        text = f"Air quality at {_where_text(location)}, {now.get('time')}: " + "; ".join(parts) + "."
        text += _alternatives_note(alternatives) + _stale_note(fields) + f"\n{AIR_QUALITY_ATTRIBUTION}"
        return ToolResult([content.text(text)], structured)

    async def get_marine_forecast(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Waves, swell and sea temperature at a coast or offshore point, 1-7 days (3 by default). Not inland."""
        days = args.get("days", 3)
        watcher = _telling(ctx)
        location, alternatives, answers = await _place(self.service, args, watcher)
        with _failures():
            answer = await self.service.marine(location["latitude"], location["longitude"], days, watcher)
        data, fields = answer.value, _freshness(*answers, answer)
        now, units = data["current"], data["units"]
        at_sea = any(now.get(name) is not None for name in ("wave_height", "sea_surface_temperature"))
        structured = {
            "location": location,
            "alternatives": alternatives,
            "grid": data["grid"],
            "units": units,
            "current": now,
            "days": days,
            "daily": data["daily"],
            "at_sea": at_sea,
            **fields,
            "attribution": MARINE_ATTRIBUTION,
        }
        if not at_sea:
            lines = [
                f"No sea data for {_where_text(location)}: the point is inland. Give a coastal town or "
                "coordinates at sea."
            ]
        else:
            metres = units.get("wave_height", "m")
            lines = [
                f"Sea at {_where_text(location)}, {now.get('time')}: waves {_number(now.get('wave_height'), metres)}"
                f" every {_number(now.get('wave_period'), 's')}, swell {_number(now.get('swell_wave_height'), metres)},"
                f" water {_number(now.get('sea_surface_temperature'), units.get('sea_surface_temperature', '°C'))}."
            ]
            lines += [
                f"{row['time']}: waves up to {_number(row.get('wave_height_max'), metres)}, "
                f"swell up to {_number(row.get('swell_wave_height_max'), metres)}"
                for row in data["daily"]
            ]
        text = "\n".join(lines) + _alternatives_note(alternatives) + _stale_note(fields) + f"\n{MARINE_ATTRIBUTION}"
        return ToolResult([content.text(text)], structured)

    async def get_historical_weather(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Past daily weather, 1940 to 5 days ago, at most 31 days a call. The future: get_forecast."""
        start, end = _day(args.get("start_date"), "start_date"), _day(args.get("end_date"), "end_date")
        last = datetime.fromtimestamp(self.service.now(), UTC).date() - timedelta(days=ARCHIVE_DELAY_DAYS)
        if end < start:
            raise ToolError("end_date is before start_date.")
        if (end - start).days + 1 > schemas.MAX_HISTORY_DAYS:
            raise ToolError(f"Ask for at most {schemas.MAX_HISTORY_DAYS} days per call; split a longer range.")
        if start < ARCHIVE_START or end > last:
            raise ToolError(
                f"The archive covers {ARCHIVE_START.isoformat()} to {last.isoformat()} (it trails today by "
                f"{ARCHIVE_DELAY_DAYS} days); get_forecast has the days since."
            )
        units = units_for(args.get("units", "metric"))
        watcher = _telling(ctx)
        location, alternatives, answers = await _place(self.service, args, watcher)
        with _failures():
            answer = await self.service.archive(
                location["latitude"], location["longitude"], start.isoformat(), end.isoformat(), units, watcher
            )
        data, fields = answer.value, _freshness(*answers, answer)
        daily = data["daily"]
        totals = _totals(daily)
        structured = {
            "location": location,
            "alternatives": alternatives,
            "grid": data["grid"],
            "units": data["units"],
            "start_date": start.isoformat(),
            "end_date": end.isoformat(),
            "daily": daily,
            "totals": totals,
            **fields,
            "attribution": ARCHIVE_ATTRIBUTION,
        }
        unit = data["units"]
        lines = [
            f"Weather at {_where_text(location)} from {start.isoformat()} to {end.isoformat()}: highest "
            f"{_number(totals['temperature_max'], unit['temperature'])}, lowest "
            f"{_number(totals['temperature_min'], unit['temperature'])}, precipitation "
            f"{_number(totals['precipitation_sum'], unit['precipitation'])} on {totals['days_with_precipitation']} "
            f"of {len(daily)} days."
        ]
        if len(daily) <= 7:
            lines += [
                f"{localtime.day_label(row['time'])}: {row['conditions']}, "
                f"{_number(row.get('temperature_min'), '')} to {_number(row.get('temperature_max'), unit['temperature'])}"
                for row in daily
            ]
        text = "\n".join(lines) + _alternatives_note(alternatives) + _stale_note(fields) + f"\n{ARCHIVE_ATTRIBUTION}"
        return ToolResult([content.text(text)], structured)

    async def compare_weather(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Current weather and today's range for 2-5 places side by side, e.g. to choose where to go."""
        queries = args["locations"]
        units = units_for(args.get("units", "metric"))
        watcher = _telling(ctx)
        results: list[Any] = [None] * len(queries)

        async def one(index: int, query: Any) -> None:
            # Each place's failure is kept, not raised: a task group would wrap a ToolError in an
            # ExceptionGroup, and the model needs to know which place failed.
            try:
                location, _, answers = await _place(self.service, {"location": query}, watcher)
                with _failures():
                    answer = await self.service.weather(
                        location["latitude"], location["longitude"], units, current=True, days=1, watcher=watcher
                    )
                results[index] = (location, answer, answers)
            except ToolError as failure:
                results[index] = failure

        async with anyio.create_task_group() as tasks:
            for index, query in enumerate(queries):
                tasks.start_soon(one, index, query)
        failed = [
            (query, result) for query, result in zip(queries, results, strict=True) if isinstance(result, ToolError)
        ]
        if failed:
            raise ToolError(" ".join(f"{query!r}: {failure}" for query, failure in failed))
        places: list[dict[str, Any]] = []
        every_answer: list[Any] = []
        unit: Any = None
        for query, (location, answer, answers) in zip(queries, results, strict=True):
            data: dict[str, Any] = answer.value
            unit = data["units"]
            every_answer += [*answers, answer]
            places.append({"query": query, "location": location, "current": data["current"], "today": data["daily"][0]})
        fields = _freshness(*every_answer)
        structured = {"units": unit, "places": places, **fields, "attribution": ATTRIBUTION}
        lines = [f"{len(places)} places now (today's low to high, chance of precipitation):"]
        lines += [
            f"- {_where_text(place['location'])}: {place['current']['conditions']}, "
            f"{_number(place['current'].get('temperature'), unit['temperature'])} "
            f"({_number(place['today'].get('temperature_min'), '')} to "
            f"{_number(place['today'].get('temperature_max'), unit['temperature'])}, "
            f"{_number(place['today'].get('precipitation_probability_max'), '', 0)}%)"
            for place in places
        ]
        text = "\n".join(lines) + _stale_note(fields) + f"\n{ATTRIBUTION}"
        return ToolResult([content.text(text)], structured)


def _totals(daily: list[dict[str, Any]]) -> dict[str, Any]:
    """Highest, lowest, precipitation over the range, and the days with any."""
    highs = [row["temperature_max"] for row in daily if isinstance(row.get("temperature_max"), (int, float))]
    lows = [row["temperature_min"] for row in daily if isinstance(row.get("temperature_min"), (int, float))]
    rain = [row["precipitation_sum"] for row in daily if isinstance(row.get("precipitation_sum"), (int, float))]
    return {
        "temperature_max": max(highs) if highs else None,
        "temperature_min": min(lows) if lows else None,
        "precipitation_sum": round(sum(rain), 2) if rain else None,
        "days_with_precipitation": sum(1 for value in rain if value > 0),
    }


def register(server: Server, tools: CoverageTools) -> None:
    """Add the four tools to ``server``, each answered by its method of ``tools``."""
    _add(server, tools.get_air_quality, "Air quality", schemas.AIR_QUALITY_INPUT, schemas.AIR_QUALITY_OUTPUT)
    _add(server, tools.get_marine_forecast, "Marine forecast", schemas.MARINE_INPUT, schemas.MARINE_OUTPUT)
    _add(server, tools.get_historical_weather, "Historical weather", schemas.HISTORY_INPUT, schemas.HISTORY_OUTPUT)
    compare_schemas = schemas.COMPARE_INPUT, schemas.COMPARE_OUTPUT
    _add(server, tools.compare_weather, "Compare places", *compare_schemas, meta=views.tool_meta())
