"""Shared helpers for the weather tests: the stand-in's data behind an ``httpx.MockTransport``,
configs with quick retries, and fake clocks."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import httpx
from plainmcp_weather import standin_data as data
from plainmcp_weather.config import Config

BASE = "http://upstream.test"
#: Bound for any single wait in these tests.
QUICK = 15.0
SERVER_MODULE = [sys.executable, "-m", "plainmcp_weather"]


def place(name: str, admin1: str) -> dict[str, Any]:
    """The stand-in's recorded-shape place with this name and region."""
    (found,) = [p for p in data.PLACES if p["name"] == name and p["admin1"] == admin1]
    return dict(found)


def config(**overrides: Any) -> Config:
    """Every upstream at the mock host; no backoff worth waiting for."""
    settings: dict[str, Any] = {
        "geocoding_url": BASE,
        "forecast_url": BASE,
        "nws_url": BASE,
        "air_quality_url": BASE,
        "marine_url": BASE,
        "archive_url": BASE,
        "backoff": 0.0,
    }
    settings.update(overrides)
    return Config(**settings)


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def recorded(request: httpx.Request, now: float | None = None) -> httpx.Response:
    """Open-Meteo and NWS answers in their recorded shapes, from the stand-in's data (forecasts as of
    ``now``, Unix time; the real clock when None)."""
    query = dict(request.url.params)
    path = request.url.path
    if path == "/v1/search":
        results = data.search(query["name"], int(query.get("count", 10)), query.get("countryCode"))
        return httpx.Response(
            200, json={"results": results, "generationtime_ms": 0.4} if results else {"generationtime_ms": 0.4}
        )
    if path == "/v1/forecast":
        sections = {s: [v for v in query.get(s, "").split(",") if v] for s in ("current", "hourly", "daily")}
        units = {
            "temperature_unit": query["temperature_unit"],
            "wind_speed_unit": query["wind_speed_unit"],
            "precipitation_unit": query["precipitation_unit"],
        }
        return httpx.Response(
            200,
            json=data.forecast(
                float(query["latitude"]),
                float(query["longitude"]),
                sections,
                int(query.get("forecast_days", 7)),
                units,
                now,
            ),
        )
    if path == "/v1/air-quality":
        names = query["current"].split(",")
        return httpx.Response(
            200, json=data.air_quality(float(query["latitude"]), float(query["longitude"]), names, now)
        )
    if path == "/v1/marine":
        sections = {s: [v for v in query.get(s, "").split(",") if v] for s in ("current", "daily")}
        return httpx.Response(
            200,
            json=data.marine(
                float(query["latitude"]), float(query["longitude"]), sections, int(query["forecast_days"]), now
            ),
        )
    if path == "/v1/archive":
        units = {key: query[key] for key in ("temperature_unit", "wind_speed_unit", "precipitation_unit")}
        return httpx.Response(
            200,
            json=data.archive(
                float(query["latitude"]),
                float(query["longitude"]),
                query["start_date"],
                query["end_date"],
                query["daily"].split(","),
                units,
            ),
        )
    if path.startswith("/points/"):
        latitude, longitude = (float(part) for part in path.removeprefix("/points/").split(","))
        found = data.point(latitude, longitude)
        if found is None:
            return httpx.Response(
                404, json=data.problem(404, "Data Unavailable For Requested Point", "InvalidPoint", "x")
            )
        return httpx.Response(200, json=found)
    if path.startswith("/gridpoints/"):
        office, cell, *rest = path.removeprefix("/gridpoints/").split("/")
        x, y = (int(part) for part in cell.split(","))
        found = data.gridpoint_forecast(office, x, y, rest[-1] == "hourly", query.get("units", "us"), now)
        return httpx.Response(200, json=found) if found else httpx.Response(404, json={"status": 404})
    if path == "/alerts/active":
        if "area" in query:
            return httpx.Response(200, json=data.alerts(query["area"], None, None))
        latitude, longitude = (float(part) for part in query["point"].split(","))
        return httpx.Response(200, json=data.alerts(None, latitude, longitude))
    return httpx.Response(404, json={"error": True, "reason": "Not Found"})


class Recorder:
    """A MockTransport handler that logs requests and can be told to fail ``path`` prefixes."""

    def __init__(
        self, answer: Callable[[httpx.Request], httpx.Response] | None = None, now: float | None = None
    ) -> None:
        #: The moment the recorded forecasts are for (Unix time; None: the real clock).
        self.now = now
        self.answer = answer or (lambda request: recorded(request, self.now))
        self.requests: list[httpx.Request] = []
        self.failures: list[tuple[str, Callable[[httpx.Request], httpx.Response]]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        for prefix, fail in self.failures:
            if request.url.path.startswith(prefix):
                return fail(request)
        return self.answer(request)

    def count(self, prefix: str) -> int:
        return sum(1 for request in self.requests if request.url.path.startswith(prefix))

    def transport(self) -> httpx.MockTransport:
        """The network under the server's own client (the API key is added above it)."""
        return httpx.MockTransport(self)
