"""The first four tools: argument checks, the service calls, structured results and their short summaries.

The handlers are the methods of :class:`WeatherTools` (they share one :class:`WeatherService`), the
schemas are :mod:`.schemas`' constants, and :func:`register` adds them, one line per tool.
Every failure the model can act on becomes a :class:`plainmcp.ToolError` here, in :func:`_failures`:
no place, outside NWS coverage, an upstream refusing, failing, timing out or paused by its breaker.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from plainmcp import Context, Server, ToolAnnotations, ToolError, ToolResult, content

from . import localtime, schemas, views
from .nws import ATTRIBUTION as NWS_ATTRIBUTION
from .nws import OutsideCoverage
from .openmeteo import ATTRIBUTION, MAX_HOURS
from .places import label, parse_place, state_code
from .service import Answer, NoSuchPlace, WeatherService
from .units import units_for
from .upstream import OnWait, UpstreamError, Wait

#: The longest state or territory argument looked at ("Commonwealth of the Northern Mariana Islands" fits).
MAX_STATE = 60


@contextmanager
def _failures() -> Iterator[None]:
    """Turn the domain's failures into tool errors carrying their model-facing sentence."""
    try:
        yield
    except (UpstreamError, NoSuchPlace) as failure:
        raise ToolError(failure.message) from None


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _freshness(*answers: Answer) -> dict[str, Any]:
    """Stale if any part is stale; retrieved when the oldest part was."""
    return {"stale": any(a.stale for a in answers), "retrieved_at": _iso(min(a.retrieved_at for a in answers))}


def _stale_note(fields: dict[str, Any]) -> str:
    if not fields["stale"]:
        return ""
    return f" [Stale: the service is unavailable now; this answer was fetched at {fields['retrieved_at']}.]"


def _public(place: dict[str, Any]) -> dict[str, Any]:
    """A geocoded place as the tools show it (``admin1`` is called ``region``)."""
    return {
        "name": place["name"],
        "region": place.get("admin1"),
        "country": place.get("country"),
        "country_code": place.get("country_code"),
        "latitude": place["latitude"],
        "longitude": place["longitude"],
        "timezone": place.get("timezone"),
        "population": place.get("population"),
        "elevation": place.get("elevation"),
    }


def _coordinates(args: dict[str, Any]) -> tuple[float, float] | None:
    """Latitude and longitude when given (both, finite, in range); None when neither is.

    Raises:
        ToolError: only one of them, or a value out of range (the schema says so too).
    """
    latitude, longitude = args.get("latitude"), args.get("longitude")
    if latitude is None and longitude is None:
        return None
    if latitude is None or longitude is None:
        raise ToolError("Give both latitude and longitude, or a location name instead.")
    for name, value, limit in (("latitude", latitude, 90), ("longitude", longitude, 180)):
        if (
            not isinstance(value, (int, float))
            or isinstance(value, bool)
            or not math.isfinite(value)
            or abs(value) > limit
        ):
            raise ToolError(f"{name} must be a number from -{limit} to {limit}.")
    return float(latitude), float(longitude)


def _telling(ctx: Context) -> OnWait:
    """A watcher that tells the client about each wait for a retry (a backoff or a ``Retry-After``):
    progress when the call carried a progress token, and a warning log message when the client
    takes those, so a long wait is never silent. Progress counts the reports (it must only grow)."""
    reports = 0

    async def tell(wait: Wait) -> None:
        nonlocal reports
        reports += 1
        message = wait.message()
        await ctx.report_progress(reports, None, message)
        await ctx.warning(message, logger="plainmcp-weather")

    return tell


async def _place(
    service: WeatherService, args: dict[str, Any], watcher: OnWait | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[Answer]]:
    """The place a call is about: ``(location used, alternatives, answers it took)``.

    Raises:
        ToolError: neither or both of location and coordinates; an empty name; no such place.
    """
    point = _coordinates(args)
    name = args.get("location")
    if point is not None and name is not None:
        raise ToolError("Give either a location name or latitude and longitude, not both.")
    if point is not None:
        latitude, longitude = point
        return (
            {
                "name": f"{latitude:.4f}, {longitude:.4f}",
                "latitude": latitude,
                "longitude": longitude,
                "source": "coordinates",
            },
            [],
            [],
        )
    if not isinstance(name, str):
        raise ToolError('Give a location name ("Paris, France") or latitude and longitude.')
    try:
        query = parse_place(name)
    except ValueError as problem:
        raise ToolError(str(problem)) from None
    with _failures():
        resolved = await service.resolve(query, watcher)
    used = {**_public(resolved.place), "source": "geocoded"}
    return used, [_public(p) for p in resolved.alternatives], [resolved.answer]


def _where_text(location: dict[str, Any]) -> str:
    where = (
        location["name"]
        if location["source"] == "coordinates"
        else label({"name": location["name"], "admin1": location.get("region"), "country": location.get("country")})
    )
    return f"{where} ({location['latitude']:.4f}, {location['longitude']:.4f})"


def _alternatives_note(alternatives: list[dict[str, Any]]) -> str:
    if not alternatives:
        return ""
    others = "; ".join(label({"name": p["name"], "admin1": p["region"], "country": p["country"]}) for p in alternatives)
    return (
        f"\nOther places with this name: {others} (to use one, add its region or country to the name, or "
        "give its coordinates)."
    )


def _number(value: Any, unit: str, digits: int = 1) -> str:
    if value is None:
        return "n/a"
    return f"{value:.{digits}f} {unit}".rstrip()


class WeatherTools:
    """The tools' handlers, answering through one :class:`WeatherService` (its cache, breakers and
    single flight are what the tools share). Each method's docstring is its tool's description."""

    def __init__(self, service: WeatherService) -> None:
        self.service = service

    async def search_locations(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Find places by name, most populous first: to choose one when a name is ambiguous."""
        try:
            query = parse_place(args["name"])
        except ValueError as problem:
            raise ToolError(str(problem)) from None
        count = int(args.get("count", 5))
        country = args.get("country")
        with _failures():
            answer = await self.service.search(query, count, country.upper() if country else None, _telling(ctx))
        results = [_public(place) for place in answer.value]
        structured = {"query": query.text, "results": results, **_freshness(answer), "attribution": ATTRIBUTION}
        if results:
            lines = [f"{len(results)} place(s) match {query.text!r}:"]
            lines += [
                f"{i}. {label({'name': p['name'], 'admin1': p['region'], 'country': p['country']})} "
                f"({p['latitude']:.4f}, {p['longitude']:.4f})"
                for i, p in enumerate(results, 1)
            ]
        else:
            lines = [f"No place matches {query.text!r}. Check the spelling or drop the qualifier."]
        return ToolResult([content.text("\n".join(lines) + _stale_note(structured) + f"\n{ATTRIBUTION}")], structured)

    async def get_current_weather(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Current weather anywhere on Earth."""
        units = units_for(args.get("units", "metric"), args.get("wind_speed_unit"))
        watcher = _telling(ctx)
        location, alternatives, answers = await _place(self.service, args, watcher)
        with _failures():
            answer = await self.service.weather(
                location["latitude"], location["longitude"], units, current=True, watcher=watcher
            )
        data = answer.value
        fields = _freshness(*answers, answer)
        structured = {
            "location": location,
            "alternatives": alternatives,
            "grid": data["grid"],
            "units": data["units"],
            "current": data["current"],
            **fields,
            "attribution": ATTRIBUTION,
        }
        now, unit = data["current"], data["units"]
        summary = (
            f"{_where_text(location)}: {now['conditions']}, "
            f"{_number(now.get('temperature'), unit['temperature'])} "
            f"(feels like {_number(now.get('apparent_temperature'), unit['temperature'])}), "
            f"wind {_number(now.get('wind_speed'), unit['wind_speed'])}"
            + (f" from {now['wind_direction']:.0f}°" if now.get("wind_direction") is not None else "")
            + (f", humidity {now['relative_humidity']:.0f}%" if now.get("relative_humidity") is not None else "")
            + f". Local time {now.get('time')} ({data['grid']['timezone']})."
        )
        note = _alternatives_note(alternatives) + _stale_note(fields)
        return ToolResult([content.text(summary + note + f"\n{ATTRIBUTION}")], structured)

    async def get_forecast(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Forecast anywhere, 7 days by default, in local dates. hourly: next 48 h; detail full: every field;
        source nws: the US forecaster's text."""
        days = args.get("days", 7)
        if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= schemas.MAX_DAYS:
            raise ToolError(f"days must be a whole number from 1 to {schemas.MAX_DAYS}.")
        hourly = bool(args.get("hourly", False))
        full = args.get("detail", "summary") == "full"
        # A client that asked for a task has its taskId here (the upstream may make it wait on retries);
        # the checks above run again in the task.
        await ctx.start_task()
        if args.get("source") == "nws":
            # Imported here: usforecast builds on this module's helpers.
            from .usforecast import nws_forecast

            return await nws_forecast(self.service, ctx, args, days=min(days, 7), hourly=hourly, full=full)
        units = units_for(args.get("units", "metric"), args.get("wind_speed_unit"))
        watcher = _telling(ctx)
        location, alternatives, answers = await _place(self.service, args, watcher)
        with _failures():
            answer = await self.service.weather(
                location["latitude"], location["longitude"], units, days=days, hourly=hourly, watcher=watcher
            )
        data = answer.value
        fields = _freshness(*answers, answer)
        now = self.service.now()
        grid = data["grid"]
        place_today = localtime.today(now, localtime.zone(grid["timezone"], grid.get("utc_offset_seconds", 0)))
        daily = [{**row, "day": localtime.day_label(row["time"], place_today)} for row in data["daily"]]
        structured: dict[str, Any] = {
            "location": location if full else {**_brief_place(location), "source": location["source"]},
            "alternatives": alternatives if full else [_brief_place(place) for place in alternatives],
            "grid": grid,
            "units": data["units"],
            "days": days,
            "source": "open-meteo",
            "detail": "full" if full else "summary",
            "daily": daily if full else [_pick(row, SUMMARY_DAILY) for row in daily],
        }
        if hourly:
            hours = _from_now(data.get("hourly", []), now)
            structured["hourly"] = hours if full else [_pick(row, SUMMARY_HOURLY) for row in hours]
        structured.update(fields, attribution=ATTRIBUTION)
        lines = [
            f"{days}-day forecast for {_where_text(location)}, local dates; {DAILY_LEGEND}:",
            *_daily_lines(daily, data["units"]),
        ]
        if alternatives:
            lines.append(_alternatives_note(alternatives).strip())
        if hourly:
            lines.append(f"Hourly values for the next {MAX_HOURS} hours are in the structured result.")
        return ToolResult([content.text("\n".join(lines) + _stale_note(fields) + f"\n{ATTRIBUTION}")], structured)

    async def get_alerts(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Active weather alerts for a US state or territory, or a US point (NWS). None for other countries."""
        point = _coordinates(args)
        state = args.get("state")
        watcher = _telling(ctx)
        code: str | None
        with _failures():
            if state is not None and point is None:
                code, where, answers = await self._alerts_for_state(state, watcher)
            elif point is not None and state is None:
                code, where, answers = await self._alerts_for_point(*point, watcher)
            else:
                raise ToolError('Give either a US state ("CA" or "California") or latitude and longitude.')
        data = answers[-1].value
        fields = _freshness(*answers)
        structured = {
            "state": code,
            "point": {"latitude": point[0], "longitude": point[1]} if point else None,
            "title": data.get("title"),
            "updated": data.get("updated"),
            "count": len(data["alerts"]),
            "alerts": data["alerts"],
            **fields,
            "attribution": NWS_ATTRIBUTION,
        }
        if data["alerts"]:
            lines = [f"{len(data['alerts'])} active alert(s) for {where}:"]
            lines += [
                f"- {a['event']} ({a.get('severity') or 'unknown severity'})"
                + (f", until {a['ends'] or a['expires']}" if (a.get("ends") or a.get("expires")) else "")
                + (f": {a['headline']}" if a.get("headline") else "")
                for a in data["alerts"]
            ]
        else:
            lines = [f"No active weather alerts for {where}."]
        return ToolResult([content.text("\n".join(lines) + _stale_note(fields) + f"\n{NWS_ATTRIBUTION}")], structured)

    async def _alerts_for_state(self, state: str, watcher: OnWait) -> tuple[str, str, list[Answer]]:
        """``(state code, where, [alerts answer])`` for a state's code or name.

        Raises:
            ToolError: not a US state or territory.
        """
        code = state_code(state) if len(state) <= MAX_STATE else None
        if code is None:
            raise ToolError(
                f"{state[:MAX_STATE]!r} is not a US state or territory. The NWS issues alerts only for the US; use a "
                "two-letter code such as CA, or the state's name."
            )
        return code, code, [await self.service.alerts(area=code, watcher=watcher)]

    async def _alerts_for_point(
        self, latitude: float, longitude: float, watcher: OnWait
    ) -> tuple[str | None, str, list[Answer]]:
        """``(state code or None, where, [point answer, alerts answer])`` for a point in the US.

        Raises:
            ToolError: the point is outside the NWS's area.
        """
        try:
            located = await self.service.point(latitude, longitude, watcher)
        except OutsideCoverage:
            raise ToolError(
                f"({latitude:.4f}, {longitude:.4f}) is outside the area of the US National Weather Service, "
                "which issues alerts only for the United States and its territories. There is no alert "
                "source for other countries here; get_forecast shows the expected weather anywhere."
            ) from None
        code = located.value.get("state")
        answer = await self.service.alerts(latitude=latitude, longitude=longitude, watcher=watcher)
        where = f"({latitude:.4f}, {longitude:.4f})" + (f" in {code}" if code else "")
        return code, where, [located, answer]


#: What a daily and an hourly row keep unless ``detail`` is "full": enough to plan a week, in a few
#: hundred tokens for seven days (the output schema lists every field; the others are optional). The
#: summary's text also gives each day's precipitation amount.
SUMMARY_DAILY = ("time", "conditions", "temperature_min", "temperature_max", "precipitation_probability_max")
SUMMARY_HOURLY = ("time", "conditions", "temperature", "precipitation_probability", "wind_speed")


def _pick(row: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: row[name] for name in names if name in row}


def _brief_place(place: dict[str, Any]) -> dict[str, Any]:
    """An alternative place with what tells it apart (the full record with ``detail`` "full")."""
    return _pick(place, ("name", "region", "country", "latitude", "longitude"))


def _from_now(hours: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
    """:data:`MAX_HOURS` rows from the hour ``now`` (Unix time) falls in; the last ones when every row
    is past (an old cached answer served stale)."""
    start = next(
        (index for index, row in enumerate(hours) if (at := localtime.timestamp(row["time"])) and at > now - 3600),
        max(0, len(hours) - MAX_HOURS),
    )
    return hours[start : start + MAX_HOURS]


def _daily_lines(daily: list[dict[str, Any]], units: dict[str, str]) -> list[str]:
    """One short line per forecast day: its local date, conditions, the temperature range (whole
    degrees), precipitation and its chance; :data:`DAILY_LEGEND` says so once."""
    lines = []
    for day in daily:
        low, high = day.get("temperature_min"), day.get("temperature_max")
        chance = day.get("precipitation_probability_max")
        lines.append(
            f"{day['day']}: {day['conditions']}, "
            + (f"{low:.0f} to {high:.0f} {units['temperature']}" if low is not None and high is not None else "n/a")
            + f", {_number(day.get('precipitation_sum'), units['precipitation'])}"
            + (f" ({chance:.0f}%)" if chance is not None else "")
        )
    return lines


#: What each of :func:`_daily_lines` says, in the order it says it.
DAILY_LEGEND = "conditions, low to high, precipitation (chance)"


def register(server: Server, tools: WeatherTools) -> None:
    """Add the four tools to ``server``, each answered by its method of ``tools``."""
    _add(server, tools.search_locations, "Search locations", schemas.SEARCH_INPUT, schemas.SEARCH_OUTPUT)
    _add(server, tools.get_current_weather, "Current weather", schemas.CURRENT_INPUT, schemas.CURRENT_OUTPUT)
    # A forecast waiting on upstream retries can run as a task the client polls or cancels.
    forecast_schemas = schemas.FORECAST_INPUT, schemas.FORECAST_OUTPUT
    forecast = tools.get_forecast
    _add(server, forecast, "Weather forecast", *forecast_schemas, task_support="optional", meta=views.tool_meta())
    _add(server, tools.get_alerts, "US weather alerts", schemas.ALERTS_INPUT, schemas.ALERTS_OUTPUT)


def _add(
    server: Server,
    handler: Callable[..., Awaitable[ToolResult]],
    title: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    task_support: str = "forbidden",
    meta: dict[str, Any] | None = None,
) -> None:
    """``handler`` as the tool of its name. All the tools only read, answer the same when repeated, and
    reach outside the process (the upstream APIs): their annotations say so. ``meta``: its MCP Apps view."""
    annotations = ToolAnnotations(title=title, read_only=True, idempotent=True, open_world=True)
    server.tool(
        handler.__name__,
        title=title,
        input_schema=input_schema,
        output_schema=output_schema,
        annotations=annotations,
        task_support=task_support,
        meta=meta,
    )(handler)
