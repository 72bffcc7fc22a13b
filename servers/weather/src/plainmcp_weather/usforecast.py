"""``get_forecast`` with ``source: "nws"``: the US National Weather Service's own forecast, the
forecaster's text for each 12-hour period ("Tonight", "Tuesday") and, with ``hourly``, its hours.

The place is found as for any forecast, then located on the NWS grid (``/points``: outside the US it
is a clear error pointing at the default source), then the grid cell's forecast is read.
"""

from __future__ import annotations

from typing import Any

from plainmcp import Context, ToolError, ToolResult, content

from . import localtime
from .nws import FORECAST_ATTRIBUTION as ATTRIBUTION
from .nws import OutsideCoverage
from .openmeteo import MAX_HOURS
from .service import WeatherService
from .tools import _alternatives_note, _failures, _freshness, _pick, _place, _stale_note, _telling, _where_text

#: What a period keeps unless ``detail`` is "full" (the text goes in the summary instead).
SUMMARY_PERIOD = ("name", "start", "conditions", "temperature", "precipitation_probability", "wind")
SUMMARY_HOUR = ("time", "conditions", "temperature", "precipitation_probability", "wind")


async def nws_forecast(
    service: WeatherService, ctx: Context, args: dict[str, Any], *, days: int, hourly: bool, full: bool
) -> ToolResult:
    """The NWS forecast for the place of ``args``: ``days`` days of named periods (two a day), and the
    next :data:`MAX_HOURS` hours when ``hourly``.

    Raises:
        ToolError: no such place, outside the NWS's area, or an upstream failure.
    """
    units = "us" if args.get("units", "metric") == "imperial" else "si"
    watcher = _telling(ctx)
    location, alternatives, answers = await _place(service, args, watcher)
    latitude, longitude = location["latitude"], location["longitude"]
    with _failures():
        try:
            located = await service.point(latitude, longitude, watcher)
        except OutsideCoverage:
            raise ToolError(
                f"{_where_text(location)} is outside the area of the US National Weather Service, which "
                "forecasts only for the United States and its territories. Leave out source: the default "
                "(Open-Meteo) covers the whole Earth."
            ) from None
        grid = located.value.get("grid")
        if grid is None:
            raise ToolError(f"The National Weather Service has no forecast grid for {_where_text(location)}.")
        named = await service.nws_forecast(grid, hourly=False, units=units, watcher=watcher)
        hours = await service.nws_forecast(grid, hourly=True, units=units, watcher=watcher) if hourly else None
    periods = named.value["periods"][: 2 * days]
    structured: dict[str, Any] = {
        "location": location,
        "alternatives": alternatives,
        "source": "nws",
        "units": {
            "temperature": "°F" if units == "us" else "°C",
            "wind_speed": "mph" if units == "us" else "km/h",
            "precipitation": "",
        },
        "days": days,
        "detail": "full" if full else "summary",
        "updated": named.value.get("updated"),
        "periods": periods if full else [_pick(period, SUMMARY_PERIOD) for period in periods],
    }
    if hours is not None:
        now = service.now()
        upcoming = [
            {
                "time": hour["start"],
                "conditions": hour["conditions"] or "Unknown",
                "temperature": hour["temperature"],
                "precipitation_probability": hour["precipitation_probability"],
                "wind": hour["wind"],
            }
            for hour in hours.value["periods"]
            if isinstance(hour.get("start"), str)
            and (at := localtime.timestamp(hour["start"])) is not None
            and at > now - 3600
        ][:MAX_HOURS]
        structured["hourly"] = upcoming if full else [_pick(hour, SUMMARY_HOUR) for hour in upcoming]
    fields = _freshness(*answers, located, named, *([hours] if hours is not None else []))
    structured.update(fields, attribution=ATTRIBUTION)
    unit = structured["units"]["temperature"]
    lines = [f"National Weather Service forecast for {_where_text(location)}:"]
    lines += [
        f"{period['name'] or period['start']}: {period['text'] or period['conditions']}"
        + ("" if period["text"] or period["temperature"] is None else f", {period['temperature']} {unit}")
        for period in periods
    ]
    if not periods:
        lines.append("The NWS gave no forecast periods for this point.")
    if hours is not None:
        lines.append(f"Hourly values for the next {MAX_HOURS} hours are in the structured result.")
    text = "\n".join(lines) + _alternatives_note(alternatives) + _stale_note(fields) + f"\n{ATTRIBUTION}"
    return ToolResult([content.text(text)], structured)
