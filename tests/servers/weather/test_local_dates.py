"""Local dates everywhere (issue 21): "today" is the place's date, hours carry the offset valid at
that moment (across a daylight-saving change too), and a 7-day summary stays small.

The upstream is the stand-in's data as of the server's own clock, in Open-Meteo's shape: one UTC
offset (the one valid at request time) applied to the whole series, as Open-Meteo does.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.standin import StandIn

from .support import QUICK, SERVER_MODULE, Recorder, config

pytestmark = pytest.mark.anyio


def at(*fields: int) -> float:
    return datetime(*fields, tzinfo=UTC).timestamp()


@asynccontextmanager
async def weather_at(now: float):
    """A server whose clock says ``now``, over forecasts recorded as of ``now``."""
    recorder = Recorder(now=now)
    server = build_server(config(), Deps(transport=recorder.transport(), wall=lambda: now))
    async with connect_in_memory(server) as client:
        yield client


def text_of(result) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def test_forecast_days_are_the_dates_at_a_utc_plus_14_place():
    # 12:00 UTC on Monday 14 September is 02:00 on Tuesday 15 September on Kiritimati.
    async with weather_at(at(2026, 9, 14, 12)) as client:
        forecast = await client.call_tool("get_forecast", {"location": "Kiritimati", "days": 2, "detail": "full"})
        current = await client.call_tool("get_current_weather", {"location": "Kiritimati"})
    daily = forecast["structuredContent"]["daily"]
    assert [row["time"] for row in daily] == ["2026-09-15", "2026-09-16"]
    assert [row["day"] for row in daily] == ["Tue 15 Sep (today)", "Wed 16 Sep (tomorrow)"]
    assert forecast["structuredContent"]["grid"]["timezone"] == "Pacific/Kiritimati"
    assert "Tue 15 Sep (today): " in text_of(forecast) and "14 Sep" not in text_of(forecast)
    assert current["structuredContent"]["current"]["time"] == "2026-09-15T02:00+14:00"


async def test_forecast_days_are_the_dates_at_a_utc_minus_12_point():
    # 06:00 UTC on Monday 14 September is 18:00 on Sunday 13 September at UTC-12 (Baker Island).
    async with weather_at(at(2026, 9, 14, 6)) as client:
        result = await client.call_tool("get_forecast", {"latitude": 0.19, "longitude": -176.48, "days": 1})
        hourly = await client.call_tool(
            "get_forecast", {"latitude": 0.19, "longitude": -176.48, "days": 1, "hourly": True}
        )
    structured = result["structuredContent"]
    assert structured["grid"]["timezone"] == "Etc/GMT+12" and structured["grid"]["utc_offset_seconds"] == -43200
    assert structured["daily"][0]["time"] == "2026-09-13" and "\nSun 13 Sep (today): " in text_of(result)
    hours = hourly["structuredContent"]["hourly"]
    assert hours[0]["time"] == "2026-09-13T18:00-12:00"  # from the current hour, not from midnight
    assert len(hours) == 48 and hours[-1]["time"] == "2026-09-15T17:00-12:00"


async def test_hourly_times_stay_right_across_the_end_of_daylight_saving():
    """Miami, Saturday 31 October 2026, 08:00 EDT; clocks go back at 02:00 EDT on 1 November. The
    upstream's series keeps EDT's offset throughout; the answer says 01:00 twice, each with its offset."""
    async with weather_at(at(2026, 10, 31, 12)) as client:
        result = await client.call_tool("get_forecast", {"location": "Miami", "days": 2, "hourly": True})
    times = [row["time"] for row in result["structuredContent"]["hourly"]]
    assert len(times) == 48 and times[0] == "2026-10-31T08:00-04:00"
    moments = [datetime.fromisoformat(time) for time in times]
    assert all(later - earlier == timedelta(hours=1) for earlier, later in zip(moments, moments[1:], strict=False))
    assert "2026-11-01T00:00-04:00" in times
    change = times.index("2026-11-01T01:00-04:00")
    assert times[change + 1] == "2026-11-01T01:00-05:00" and times[change + 2] == "2026-11-01T02:00-05:00"
    assert times[-1] == "2026-11-02T06:00-05:00"
    zone = ZoneInfo("America/New_York")
    assert all(moment.utcoffset() == moment.astimezone(zone).utcoffset() for moment in moments)


async def test_hourly_times_stay_right_across_the_start_of_daylight_saving():
    """Miami, Saturday 13 March 2027, 08:00 EST; clocks go forward at 02:00 on 14 March: no 02:00 that day."""
    async with weather_at(at(2027, 3, 13, 13)) as client:
        result = await client.call_tool("get_forecast", {"location": "Miami", "days": 2, "hourly": True})
    times = [row["time"] for row in result["structuredContent"]["hourly"]]
    assert times[0] == "2027-03-13T08:00-05:00"
    change = times.index("2027-03-14T01:00-05:00")
    assert times[change + 1] == "2027-03-14T03:00-04:00"
    assert not any(time.startswith("2027-03-14T02:") for time in times)


async def test_a_seven_day_summary_is_small_and_full_detail_has_every_field():
    async with weather_at(at(2026, 9, 14, 12)) as client:
        summary = await client.call_tool("get_forecast", {"location": "Paris"})
        full = await client.call_tool("get_forecast", {"location": "Paris", "detail": "full"})
    # What a host may put in front of the model: the text and the structured content, as compact JSON.
    tokens = len(json.dumps(summary, separators=(",", ":"), ensure_ascii=False).encode()) / 4
    assert tokens < 600, tokens
    assert summary["structuredContent"]["detail"] == "summary"
    assert len(summary["structuredContent"]["daily"]) == 7
    assert set(summary["structuredContent"]["daily"][0]) == {
        "time",
        "conditions",
        "temperature_min",
        "temperature_max",
        "precipitation_probability_max",
    }
    assert summary["structuredContent"]["alternatives"][0]["region"] == "Texas"
    assert "population" not in summary["structuredContent"]["alternatives"][0]
    row = full["structuredContent"]["daily"][0]
    assert full["structuredContent"]["detail"] == "full"
    assert {"sunrise", "sunset", "uv_index_max", "wind_gusts_max", "weather_code"} <= set(row)
    assert row["sunrise"].startswith(row["time"])
    assert "population" in full["structuredContent"]["alternatives"][0]


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_stdio_forecast_days_are_local_in_both_eras(version):
    """The real process against the real stand-in, both on the real clock: Kiritimati's today."""
    zone = ZoneInfo("Pacific/Kiritimati")
    with StandIn() as standin:
        urls = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
        before = datetime.now(zone).date().isoformat()
        async with connect_stdio([*SERVER_MODULE, *urls], protocol_version=version) as client:
            with anyio.fail_after(QUICK):
                result = await client.call_tool("get_forecast", {"location": "Kiritimati", "days": 1, "detail": "full"})
        after = datetime.now(zone).date().isoformat()
    (day,) = result["structuredContent"]["daily"]
    assert day["time"] in (before, after) and day["day"].endswith("(today)")
