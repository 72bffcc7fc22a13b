"""The four tools through the in-memory client, the upstreams replayed by ``httpx.MockTransport``."""

from __future__ import annotations

from contextlib import asynccontextmanager

import httpx
import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_weather.config import COMMERCIAL_FORECAST_URL, Config
from plainmcp_weather.server import Deps, build_server

from .support import Clock, Recorder, config

pytestmark = pytest.mark.anyio

ATTRIBUTION = "Weather data by Open-Meteo.com"
#: The server's wall clock in these tests: 2026-09-09T00:26:40Z.
WALL = 1_789_000_000.0


@asynccontextmanager
async def weather(recorder: Recorder | None = None, clock: Clock | None = None, **overrides):
    recorder = recorder or Recorder()
    if recorder.now is None:
        recorder.now = WALL  # the recorded forecasts are as of the server's own clock
    clock = clock or Clock()
    server = build_server(config(**overrides), Deps(transport=recorder.transport(), clock=clock, wall=lambda: WALL))
    async with connect_in_memory(server) as client:
        client.recorder = recorder
        client.clock = clock
        yield client


def text_of(result) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


def failing(status: int, headers: dict[str, str] | None = None):
    return lambda request: httpx.Response(status, headers=headers, json={"detail": "upstream internals"})


async def test_tools_listing_has_output_schemas_and_read_only_hints():
    async with weather() as client:
        tools, _ = await client.list_tools()
    assert sorted(tool["name"] for tool in tools) == [
        "compare_weather",
        "get_air_quality",
        "get_alerts",
        "get_current_weather",
        "get_forecast",
        "get_historical_weather",
        "get_marine_forecast",
        "search_locations",
    ]
    for tool in tools:
        assert tool["outputSchema"]["type"] == "object"
        assert tool["annotations"]["readOnlyHint"] is True and tool["annotations"]["openWorldHint"] is True
        assert tool["description"]


async def test_build_server_does_no_io():
    recorder = Recorder()
    server = build_server(config(), Deps(transport=recorder.transport()))
    async with connect_in_memory(server) as client:
        await client.list_tools()
    assert recorder.requests == []


async def test_each_server_has_its_own_cache_and_breakers():
    """build_server keeps nothing at module level: a second server asks the upstream again, and a
    circuit opened in one is closed in the other."""
    recorder = Recorder()
    recorder.failures.append(("/v1/search", failing(503)))
    first, second = (
        build_server(config(retries=0, breaker_threshold=1), Deps(transport=recorder.transport())) for _ in range(2)
    )
    async with connect_in_memory(first) as one, connect_in_memory(second) as other:
        await one.call_tool("get_current_weather", {"latitude": 3, "longitude": 4})
        await one.call_tool("search_locations", {"name": "Tokyo"})  # opens the first server's circuit
        await other.call_tool("get_current_weather", {"latitude": 3, "longitude": 4})
        await other.call_tool("search_locations", {"name": "Tokyo"})
    assert recorder.count("/v1/forecast") == 2 and recorder.count("/v1/search") == 2


async def test_search_locations_honours_a_state_qualifier():
    async with weather() as client:
        result = await client.call_tool("search_locations", {"name": "Portland, ME"})
    structured = result["structuredContent"]
    assert [(p["name"], p["region"]) for p in structured["results"]] == [("Portland", "Maine")]
    assert structured["query"] == "Portland, ME" and structured["stale"] is False
    assert "Portland, Maine, United States" in text_of(result) and ATTRIBUTION in text_of(result)
    (request,) = client.recorder.requests
    assert request.url.params["name"] == "Portland"  # the qualifier is applied here, not sent


async def test_search_locations_with_a_country_filter_sends_the_code():
    async with weather() as client:
        result = await client.call_tool("search_locations", {"name": "paris", "country": "us"})
    assert [p["region"] for p in result["structuredContent"]["results"]] == ["Texas"]
    assert client.recorder.requests[0].url.params["countryCode"] == "US"


async def test_search_locations_no_match_is_an_empty_result_not_an_error():
    async with weather() as client:
        result = await client.call_tool("search_locations", {"name": "Paris, Germany"})
    assert not result.get("isError") and result["structuredContent"]["results"] == []


async def test_current_weather_says_which_place_and_lists_alternatives():
    async with weather() as client:
        result = await client.call_tool("get_current_weather", {"location": "Paris"})
    structured = result["structuredContent"]
    location = structured["location"]
    assert (location["name"], location["region"], location["country"], location["source"]) == (
        "Paris",
        "Île-de-France",
        "France",
        "geocoded",
    )
    assert [p["region"] for p in structured["alternatives"]] == ["Texas"]
    assert structured["current"]["conditions"] and structured["units"]["temperature"] == "°C"
    assert structured["attribution"].startswith(ATTRIBUTION)
    assert "Other places with this name: Paris, Texas" in text_of(result)


async def test_current_weather_qualifier_picks_the_other_place():
    async with weather() as client:
        result = await client.call_tool("get_current_weather", {"location": "Paris, TX"})
    assert result["structuredContent"]["location"]["region"] == "Texas"
    assert result["structuredContent"]["alternatives"] == []


async def test_current_weather_turns_wmo_codes_into_words():
    async with weather() as client:
        result = await client.call_tool("get_current_weather", {"latitude": 0.0, "longitude": 0.0})
    current = result["structuredContent"]["current"]
    assert current["weather_code"] == 0 and current["conditions"] == "Clear sky"
    assert result["structuredContent"]["location"]["source"] == "coordinates"


async def test_current_weather_imperial_units_reach_the_upstream():
    async with weather() as client:
        result = await client.call_tool(
            "get_current_weather", {"location": "Tokyo", "units": "imperial", "wind_speed_unit": "kn"}
        )
    params = client.recorder.requests[-1].url.params
    assert (params["temperature_unit"], params["wind_speed_unit"], params["precipitation_unit"]) == (
        "fahrenheit",
        "kn",
        "inch",
    )
    assert result["structuredContent"]["units"] == {"temperature": "°F", "wind_speed": "kn", "precipitation": "inch"}


async def test_forecast_returns_the_days_asked_and_hourly_when_asked():
    async with weather() as client:
        result = await client.call_tool("get_forecast", {"location": "Sydney", "days": 3, "hourly": True})
    structured = result["structuredContent"]
    assert len(structured["daily"]) == 3 and structured["days"] == 3
    assert len(structured["hourly"]) == 48
    assert all(day["conditions"] for day in structured["daily"])
    assert client.recorder.requests[-1].url.params["forecast_days"] == "3"
    assert client.recorder.requests[-1].url.params["timezone"] == "auto"


async def test_forecast_without_hourly_leaves_it_out():
    async with weather() as client:
        result = await client.call_tool("get_forecast", {"latitude": 35.6895, "longitude": 139.69171})
    assert "hourly" not in result["structuredContent"] and len(result["structuredContent"]["daily"]) == 7
    assert "hourly" not in client.recorder.requests[-1].url.params


async def test_cache_shares_normalized_names_and_repeats():
    async with weather() as client:
        await client.call_tool("get_current_weather", {"location": " Paris "})
        second = await client.call_tool("get_current_weather", {"location": "paris"})
    # The second call's place and weather both came from the cache: the upstreams were asked once.
    assert client.recorder.count("/v1/search") == 1
    assert client.recorder.count("/v1/forecast") == 1
    assert second["structuredContent"]["stale"] is False


async def test_cache_keeps_units_apart():
    async with weather() as client:
        await client.call_tool("get_current_weather", {"location": "Paris", "units": "metric"})
        await client.call_tool("get_current_weather", {"location": "Paris", "units": "imperial"})
    assert client.recorder.count("/v1/forecast") == 2 and client.recorder.count("/v1/search") == 1


async def test_cache_entry_expires_and_is_fetched_again():
    async with weather(current_ttl=60) as client:
        await client.call_tool("get_current_weather", {"latitude": 10, "longitude": 10})
        client.clock.now += 61
        await client.call_tool("get_current_weather", {"latitude": 10, "longitude": 10})
    assert client.recorder.count("/v1/forecast") == 2


async def test_stale_answer_is_served_when_the_upstream_is_down():
    async with weather(current_ttl=60, stale_for=600) as client:
        fresh = await client.call_tool("get_current_weather", {"location": "Tokyo"})
        client.clock.now += 120
        client.recorder.failures.append(("/v1/", failing(503)))
        stale = await client.call_tool("get_current_weather", {"location": "Tokyo"})
    assert not stale.get("isError")
    assert stale["structuredContent"]["stale"] is True
    assert stale["structuredContent"]["current"] == fresh["structuredContent"]["current"]
    assert stale["structuredContent"]["retrieved_at"] == "2026-09-10T00:26:40Z"
    assert "Stale: the service is unavailable now" in text_of(stale)


async def test_stale_answer_is_not_served_past_its_window():
    async with weather(current_ttl=60, stale_for=100) as client:
        await client.call_tool("get_current_weather", {"latitude": 1, "longitude": 1})
        client.clock.now += 200
        client.recorder.failures.append(("/v1/", failing(503)))
        result = await client.call_tool("get_current_weather", {"latitude": 1, "longitude": 1})
    assert result["isError"] is True


async def test_upstream_failure_is_an_error_sentence_without_internals():
    async with weather(retries=1) as client:
        client.recorder.failures.append(("/v1/forecast", failing(500)))
        result = await client.call_tool("get_forecast", {"latitude": 1, "longitude": 1})
    assert result["isError"] is True
    assert text_of(result) == (
        "The Open-Meteo forecast service is having trouble (tried 2 times). Try again in a minute."
    )
    assert client.recorder.count("/v1/forecast") == 2


async def test_upstream_refusal_is_reported_not_retried():
    async with weather() as client:
        client.recorder.failures.append(("/v1/forecast", failing(400)))
        result = await client.call_tool("get_forecast", {"latitude": 1, "longitude": 1})
    assert result["isError"] is True and "refused the request" in text_of(result)
    assert "internals" not in text_of(result)
    assert client.recorder.count("/v1/forecast") == 1


async def test_open_circuit_is_an_error_that_says_when_to_retry():
    async with weather(retries=0, breaker_threshold=2) as client:
        client.recorder.failures.append(("/v1/forecast", failing(503)))
        for _ in range(2):
            await client.call_tool("get_forecast", {"latitude": 1, "longitude": 1})
        result = await client.call_tool("get_forecast", {"latitude": 2, "longitude": 2})
        found = await client.call_tool("search_locations", {"name": "Tokyo"})
    assert result["isError"] is True and "paused for about 30 more seconds" in text_of(result)
    assert client.recorder.count("/v1/forecast") == 2  # the open circuit sent nothing
    # One breaker per upstream: geocoding is still asked while the forecast's circuit is open.
    assert not found.get("isError") and client.recorder.count("/v1/search") == 1


async def test_open_circuit_lets_one_probe_through_after_its_cooldown():
    async with weather(retries=0, breaker_threshold=1, breaker_cooldown=30) as client:
        client.recorder.failures.append(("/v1/forecast", failing(503)))
        await client.call_tool("get_forecast", {"latitude": 1, "longitude": 1})
        client.recorder.failures.clear()
        paused = await client.call_tool("get_forecast", {"latitude": 1, "longitude": 1})
        client.clock.now += 31
        probed = await client.call_tool("get_forecast", {"latitude": 1, "longitude": 1})
    assert paused["isError"] is True and "paused" in text_of(paused)
    assert not probed.get("isError") and client.recorder.count("/v1/forecast") == 2


class ClosingTransport(httpx.MockTransport):
    """The recorded answers, and whether the client above closed its transport."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__(recorder)
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


async def test_http_client_is_opened_on_the_first_call_and_closed_when_serving_ends():
    recorder = Recorder()
    transport = ClosingTransport(recorder)
    server = build_server(config(), Deps(transport=transport))
    async with connect_in_memory(server) as client:
        result = await client.call_tool("get_current_weather", {"location": "Tokyo"})
        assert not result.get("isError") and transport.closed == 0
    assert transport.closed == 1


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"location": "Paris", "latitude": 1, "longitude": 2}, "not both"),
        ({}, "Give a location name"),
        # The schemas leave these to the handler (they stay short for the model's context): its sentences.
        ({"latitude": 1}, "Give both latitude and longitude"),
        ({"latitude": 91, "longitude": 0}, "latitude must be a number from -90 to 90"),
        ({"latitude": 0, "longitude": -181}, "longitude must be a number from -180 to 180"),
        ({"location": "x" * 201}, "A place name is at most 200 characters"),
        ({"location": "Paris", "days": 17}, "Invalid arguments"),
        ({"location": "Paris", "days": 0}, "Invalid arguments"),
        ({"location": "Paris", "units": "kelvin"}, "Invalid arguments"),
        ({"location": " (somewhere) "}, "empty"),
        ({"location": "Atlantis"}, "No place named 'Atlantis' was found"),
        ({"location": "Paris, Germany"}, "No place named 'Paris' matches 'Germany'"),
    ],
)
async def test_forecast_bad_input_is_an_error_the_model_can_act_on(arguments, message):
    async with weather() as client:
        result = await client.call_tool("get_forecast", arguments)
    assert result["isError"] is True
    assert message in text_of(result)


async def test_alerts_for_a_state_name_use_its_code_and_the_nws_headers():
    async with weather(user_agent="test-app (ops@example.com)") as client:
        result = await client.call_tool("get_alerts", {"state": "Florida"})
    structured = result["structuredContent"]
    assert structured["state"] == "FL" and structured["count"] == 1
    assert structured["alerts"][0]["event"] == "Hurricane Warning"
    assert structured["alerts"][0]["severity"] == "Extreme"
    (request,) = client.recorder.requests
    assert request.url.params["area"] == "FL"
    assert request.headers["User-Agent"] == "test-app (ops@example.com)"
    assert request.headers["Accept"] == "application/geo+json"
    assert "National Weather Service" in structured["attribution"]


async def test_alerts_for_a_point_round_coordinates_to_four_decimals():
    async with weather() as client:
        result = await client.call_tool("get_alerts", {"latitude": 25.774271234, "longitude": -80.19366})
    assert result["structuredContent"]["state"] == "FL" and result["structuredContent"]["count"] == 1
    points, alerts = client.recorder.requests
    assert points.url.path == "/points/25.7743,-80.1937"
    assert alerts.url.params["point"] == "25.7743,-80.1937"


async def test_alerts_for_a_long_state_argument_are_refused_without_echoing_it_whole():
    async with weather() as client:
        result = await client.call_tool("get_alerts", {"state": "Florida" * 1000})
    assert result["isError"] is True and "is not a US state or territory" in text_of(result)
    assert len(text_of(result)) < 400 and client.recorder.requests == []


async def test_alerts_with_none_active_say_so():
    async with weather() as client:
        result = await client.call_tool("get_alerts", {"state": "OR"})
    assert result["structuredContent"]["alerts"] == [] and "No active weather alerts for OR" in text_of(result)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"latitude": 51.5, "longitude": -0.12}, "outside the area of the US National Weather Service"),
        ({"state": "Bavaria"}, "not a US state or territory"),
        ({}, "Give either a US state"),
        ({"state": "CA", "latitude": 1, "longitude": 1}, "Give either a US state"),
    ],
)
async def test_alerts_outside_the_us_or_unclear_are_errors(arguments, message):
    async with weather() as client:
        result = await client.call_tool("get_alerts", arguments)
    assert result["isError"] is True and message in text_of(result)


async def test_api_key_is_sent_to_open_meteo_and_switches_default_hosts():
    async with weather(api_key="k-123") as client:
        await client.call_tool("get_current_weather", {"location": "Tokyo"})
    assert all(request.url.params["apikey"] == "k-123" for request in client.recorder.requests)
    assert Config(api_key="k").forecast_url == COMMERCIAL_FORECAST_URL
    assert Config().forecast_url == "https://api.open-meteo.com"


async def test_config_refuses_bad_settings():
    with pytest.raises(ValueError, match="http"):
        Config(forecast_url="ftp://x")
    with pytest.raises(ValueError, match="User-Agent|user_agent"):
        Config(user_agent=" ")
    with pytest.raises(ValueError):
        Config(breaker_threshold=0)


@pytest.mark.parametrize(
    ("settings", "option"),
    [
        ({"timeout": float("nan")}, "--timeout"),  # NaN passed every comparison: no deadline at all
        ({"timeout": float("inf")}, "--timeout"),  # no deadline: a dripped body would be read for ever
        ({"stale_for": float("nan")}, "--stale-for"),
        ({"backoff": -1.0}, "--backoff"),
        ({"max_response_bytes": 10}, "--max-response-bytes"),
        ({"retries": -1}, "--retries"),
        ({"nws_url": "file:///etc"}, "--nws-url"),
    ],
)
async def test_config_refusal_names_the_option(settings, option):
    with pytest.raises(ValueError, match=f"^{option} "):
        Config(**settings)


async def test_clients_before_structured_content_still_get_the_summary():
    recorder = Recorder()
    server = build_server(config(), Deps(transport=recorder.transport()))
    async with connect_in_memory(server, protocol_version="2025-03-26") as client:
        result = await client.call_tool("get_current_weather", {"location": "Tokyo"})
    assert "structuredContent" not in result  # 2025-03-26 has no structured content
    assert text_of(result).startswith("Tokyo, Japan (35.6895, 139.6917): ")
    assert ATTRIBUTION in text_of(result)
