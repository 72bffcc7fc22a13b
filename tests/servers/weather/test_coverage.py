"""The tools added for issue 21 (air quality, marine, historical weather, comparison): in memory over the
recorded shapes, then the real process against the real stand-in in both eras, faults included."""

from __future__ import annotations

from contextlib import asynccontextmanager

import anyio
import jsonschema
import pytest
from plainmcp import ToolError, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_weather.coverage import _day
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.standin import StandIn

from .support import QUICK, SERVER_MODULE, Recorder, config

pytestmark = pytest.mark.anyio

#: 2026-09-14T12:00:00Z: the archive reaches 2026-09-09.
WALL = 1_789_387_200.0
NEW_TOOLS = ("get_air_quality", "get_marine_forecast", "get_historical_weather", "compare_weather")


@asynccontextmanager
async def weather(**overrides):
    recorder = Recorder(now=WALL)
    server = build_server(config(**overrides), Deps(transport=recorder.transport(), wall=lambda: WALL))
    async with connect_in_memory(server) as client:
        client.recorder = recorder
        yield client


def text_of(result) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def test_air_quality_has_both_indexes_in_words_and_pollen_only_where_modelled():
    async with weather() as client:
        paris = await client.call_tool("get_air_quality", {"location": "Paris, France"})
        sydney = await client.call_tool("get_air_quality", {"location": "Sydney"})
    structured = paris["structuredContent"]
    assert structured["current"]["european_aqi"] == 32 and structured["european_category"] == "fair"
    assert structured["current"]["us_aqi"] == 48 and structured["us_category"] == "good"
    assert structured["current"]["time"] == "2026-09-14T14:00+02:00"
    assert "European AQI 32 (fair); US AQI 48 (good)" in text_of(paris) and "pollen alder 9.9, birch 9.9," in text_of(
        paris
    )
    assert "Copernicus Atmosphere Monitoring Service" in structured["attribution"] and "CAMS" in text_of(paris)
    assert sydney["structuredContent"]["current"]["birch_pollen"] is None and "pollen" not in text_of(sydney)
    (request,) = [r for r in client.recorder.requests if r.url.path == "/v1/air-quality"][:1]
    assert request.url.params["timezone"] == "auto" and "us_aqi" in request.url.params["current"].split(",")


async def test_marine_forecast_at_sea_and_inland():
    async with weather() as client:
        sea = await client.call_tool("get_marine_forecast", {"location": "Sydney", "days": 2})
        default = await client.call_tool("get_marine_forecast", {"latitude": -33.9, "longitude": 151.3})
        inland = await client.call_tool("get_marine_forecast", {"location": "Paris, France"})
        too_long = await client.call_tool("get_marine_forecast", {"location": "Sydney", "days": 8})
    assert sea["structuredContent"]["at_sea"] is True and len(sea["structuredContent"]["daily"]) == 2
    assert sea["structuredContent"]["current"]["sea_surface_temperature"] == 19.4
    assert "waves 1.2 m every 7.5 s" in text_of(sea) and "Marine data by Open-Meteo.com" in text_of(sea)
    assert default["structuredContent"]["days"] == 3 and len(default["structuredContent"]["daily"]) == 3
    assert inland["structuredContent"]["at_sea"] is False and "the point is inland" in text_of(inland)
    assert too_long["isError"] is True


async def test_historical_weather_for_a_range_with_totals():
    async with weather() as client:
        result = await client.call_tool(
            "get_historical_weather",
            {"location": "Tokyo", "start_date": "2024-07-01", "end_date": "2024-07-03", "units": "imperial"},
        )
    structured = result["structuredContent"]
    assert [row["time"] for row in structured["daily"]] == ["2024-07-01", "2024-07-02", "2024-07-03"]
    assert structured["totals"]["days_with_precipitation"] == 2
    assert structured["totals"]["temperature_max"] == max(row["temperature_max"] for row in structured["daily"])
    assert structured["units"]["temperature"] == "°F"
    (request,) = [r for r in client.recorder.requests if r.url.path == "/v1/archive"]
    assert request.url.params["start_date"] == "2024-07-01" and request.url.params["temperature_unit"] == "fahrenheit"
    assert "Mon 1 Jul: " in text_of(result) and "ERA5" in text_of(result)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        ("2024-07-03", "2024-07-01", "end_date is before start_date"),
        ("2024-01-01", "2024-03-01", "at most 31 days"),
        ("1939-12-30", "1940-01-02", "The archive covers 1940-01-01 to 2026-09-09"),
        ("2026-09-08", "2026-09-10", "The archive covers 1940-01-01 to 2026-09-09"),
        # The schema's "format": "date" is checked before the handler runs (which checks again).
        ("2024-7-1", "2024-07-03", 'start_date: "2024-7-1" is not a "date"'),
        ("2024-07-01", "2024-02-30", 'end_date: "2024-02-30" is not a "date"'),
    ],
)
async def test_historical_weather_refuses_a_range_it_cannot_serve_before_asking(start, end, message):
    async with weather() as client:
        result = await client.call_tool(
            "get_historical_weather", {"location": "Tokyo", "start_date": start, "end_date": end}
        )
        assert client.recorder.requests == []
    assert result["isError"] is True and message in text_of(result)


async def test_compare_weather_puts_places_side_by_side():
    async with weather() as client:
        result = await client.call_tool("compare_weather", {"locations": ["Paris, France", "Tokyo", "Sydney"]})
    places = result["structuredContent"]["places"]
    assert [place["location"]["country"] for place in places] == ["France", "Japan", "Australia"]
    assert all("temperature" in place["current"] and "temperature_max" in place["today"] for place in places)
    lines = text_of(result).splitlines()
    assert lines[0].startswith("3 places now") and lines[1].startswith("- Paris, Île-de-France, France")


async def test_compare_weather_names_the_place_it_could_not_find():
    async with weather() as client:
        result = await client.call_tool("compare_weather", {"locations": ["Paris", "Atlantis"]})
        one = await client.call_tool("compare_weather", {"locations": ["Paris"]})
    assert result["isError"] is True and "'Atlantis': No place named 'Atlantis' was found" in text_of(result)
    assert one["isError"] is True


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_stdio_new_tools_against_the_standin_in_both_eras(version):
    with StandIn() as standin:
        standin.fault("/v1/air-quality", "status", times=1, status=503)
        standin.fault("/v1/marine", "malformed", times=1)
        urls = [
            word
            for name in ("geocoding", "forecast", "nws", "air-quality", "marine", "archive")
            for word in (f"--{name}-url", standin.url)
        ]
        async with connect_stdio([*SERVER_MODULE, *urls, "--backoff", "0.01"], protocol_version=version) as client:
            schemas = {tool["name"]: tool["outputSchema"] for tool in await client.list_all_tools()}
            with anyio.fail_after(QUICK):
                results = {
                    "get_air_quality": await client.call_tool("get_air_quality", {"location": "London"}),
                    "get_marine_forecast": await client.call_tool("get_marine_forecast", {"location": "Miami"}),
                    "get_historical_weather": await client.call_tool(
                        "get_historical_weather",
                        {"location": "Sydney", "start_date": "2000-01-01", "end_date": "2000-01-31"},
                    ),
                    "compare_weather": await client.call_tool("compare_weather", {"locations": ["London", "Miami"]}),
                }
                marine_again = await client.call_tool("get_marine_forecast", {"location": "Miami"})
        assert standin.count("/v1/air-quality") == 2  # the 503 was retried
        assert standin.count("/v1/marine") == 2
    assert results["get_marine_forecast"]["isError"] is True  # garbage is not retried: an error that says so
    assert "could not be read" in text_of(results["get_marine_forecast"])
    results["get_marine_forecast"] = marine_again
    for name in NEW_TOOLS:
        result = results[name]
        assert not result.get("isError"), (name, text_of(result))
        jsonschema.validate(result["structuredContent"], schemas[name])
        assert result["structuredContent"]["attribution"] in text_of(result)
    assert len(results["get_historical_weather"]["structuredContent"]["daily"]) == 31


async def test_nws_forecast_gives_the_forecasters_periods_and_hours():
    async with weather() as client:
        result = await client.call_tool(
            "get_forecast", {"location": "Miami", "source": "nws", "days": 2, "hourly": True, "units": "imperial"}
        )
    structured = result["structuredContent"]
    assert structured["source"] == "nws" and structured["units"]["temperature"] == "°F"
    # 12:00 UTC is 08:00 in Miami: the day's period first, then its night.
    assert [period["name"] for period in structured["periods"]] == ["Today", "Tonight", "Tuesday", "Tuesday Night"]
    assert structured["periods"][0]["start"] == "2026-09-14T06:00:00-04:00"
    assert "text" not in structured["periods"][0]  # the summary keeps the text for the reader, in content
    assert "\nToday: Partly Cloudy, with a high near " in text_of(result)
    hours = structured["hourly"]
    assert len(hours) == 48 and hours[0]["time"] == "2026-09-14T08:00:00-04:00" and hours[0]["wind"].endswith(" SE")
    gridpoints = [r for r in client.recorder.requests if r.url.path.startswith("/gridpoints/")]
    assert [r.url.path for r in gridpoints] == [
        "/gridpoints/MFL/110,50/forecast",
        "/gridpoints/MFL/110,50/forecast/hourly",
    ]
    assert {r.url.params["units"] for r in gridpoints} == {"us"}
    assert "Forecast from the US National Weather Service" in text_of(result)


async def test_nws_forecast_outside_the_us_points_at_the_default_source():
    async with weather() as client:
        result = await client.call_tool("get_forecast", {"location": "Tokyo", "source": "nws"})
        assert not [r for r in client.recorder.requests if r.url.path.startswith("/gridpoints/")]
    assert result["isError"] is True and "Leave out source" in text_of(result)


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_stdio_nws_forecast_against_the_standin_in_both_eras(version):
    with StandIn() as standin:
        standin.fault("/gridpoints/", "status", times=1, status=500)
        urls = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
        async with connect_stdio([*SERVER_MODULE, *urls, "--backoff", "0.01"], protocol_version=version) as client:
            (tool,) = [tool for tool in await client.list_all_tools() if tool["name"] == "get_forecast"]
            with anyio.fail_after(QUICK):
                result = await client.call_tool(
                    "get_forecast", {"location": "Portland, OR", "source": "nws", "detail": "full"}
                )
        assert standin.count("/gridpoints/PQR/112,103/forecast") == 2  # the 500 was retried
    assert not result.get("isError"), text_of(result)
    jsonschema.validate(result["structuredContent"], tool["outputSchema"])
    periods = result["structuredContent"]["periods"]
    assert len(periods) == 14 and all(period["text"] for period in periods)


@pytest.mark.parametrize("value", ["2024-7-1", "2024-02-30", "20240701", None, 20240701, "2024-07-01T00:00"])
def test_the_handler_checks_dates_itself_too(value):
    """The schema's "format": "date" is checked by the core; the handler does not rely on it."""
    with pytest.raises(ToolError, match="start_date must be a date written YYYY-MM-DD"):
        _day(value, "start_date")
    assert _day("2024-07-01", "start_date").isoformat() == "2024-07-01"
