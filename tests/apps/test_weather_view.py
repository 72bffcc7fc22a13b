"""The weather view (ui://plainmcp-weather/forecast.html) in headless Chromium, through the official host
bridge, against the real weather server over stdio and its stand-in upstream on 127.0.0.1 (no network), in
both eras: values, units, local dates, an alert, hostile place names as text, themes, keyboard, new results;
and a client without the extension sees today's server."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import APP_MIME, UI_EXTENSION, MCPError, connect_stdio
from plainmcp_weather import standin_data
from plainmcp_weather.standin import StandIn
from plainmcp_weather.views import FORECAST_VIEW, html

from tests.servers.weather.support import SERVER_MODULE

from .harness import ERAS

APPS = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}
VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
HOSTILE = '<img src=x onerror="parent.parent.__pwned=1">'


@pytest.fixture
def standin():
    with StandIn() as running:
        yield running


def weather(standin: StandIn) -> list[str]:
    urls = ["--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url]
    return [*SERVER_MODULE, *urls, "--backoff", "0.01", "--timeout", "5", "--log-level", "warning"]


def local_date(text: str) -> str:
    """What the view shows for a local date: "Tue 1 Dec"."""
    day = date.fromisoformat(text[:10])
    return f"{WEEKDAYS[day.weekday()]} {day.day} {MONTHS[day.month - 1]}"


def run_async(main: Any) -> Any:
    """``anyio.run(main)`` on a thread of its own: Playwright's sync API keeps an event loop on this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


def call(command: list[str], tool: str, arguments: dict[str, Any], era: str, **options: Any) -> dict[str, Any]:
    """The same call as a plain MCP client makes it (what the view must show)."""

    async def main() -> dict[str, Any]:
        async with connect_stdio(command, protocol_version=VERSIONS[era], **options) as client:
            return dict(await client.call_tool(tool, arguments))

    return dict(run_async(main))


def rendered(hosted: Any) -> Any:
    """``hosted`` once its view has rendered a result (the host sent it; the view counts its renders)."""
    hosted.view.locator("html[data-rendered]").wait_for(state="attached")
    return hosted


def rows(hosted: Any) -> list[list[str]]:
    table = hosted.view.locator("#table tbody tr")
    return [[cell.strip() for cell in row.locator("th, td").all_text_contents()] for row in table.all()]


@pytest.mark.parametrize("era", ERAS)
def test_weather_view_renders_the_forecast(app_host, standin, era: str) -> None:
    arguments = {"location": "Miami", "days": 5}
    expected = call(weather(standin), "get_forecast", arguments, era)["structuredContent"]
    hosted = rendered(app_host(weather(standin), "get_forecast", arguments, era))
    view = hosted.view
    assert view.locator("#place").text_content() == "Miami"
    assert "Florida, United States" in (view.locator("#where").text_content() or "")
    assert "America/New_York" in (view.locator("#where").text_content() or "")
    assert [row[0] for row in rows(hosted)] == [local_date(day["time"]) for day in expected["daily"]]
    assert [row[2:4] for row in rows(hosted)] == [
        [f"{day['temperature_min']:.1f}", f"{day['temperature_max']:.1f}"] for day in expected["daily"]
    ]
    assert view.locator("#table thead th").all_text_contents()[2:] == [
        "Low (°C)",
        "High (°C)",
        "Precipitation chance (%)",
    ]
    axis = view.locator("#chart .axis-temp text").all_text_contents()
    assert axis and all(label.endswith("°C") for label in axis)
    assert view.locator("#chart .temp-high").count() == 1 and view.locator("#chart .temp-low").count() == 1
    assert (
        view.locator("#chart .axis-x text").first.text_content() == local_date(expected["daily"][0]["time"]).split()[0]
    )
    assert view.locator("#source").text_content() == expected["attribution"]
    assert re.fullmatch(r"Retrieved \d{4}-\d\d-\d\d \d\d:\d\d UTC", view.locator("#retrieved").text_content() or "")
    # The NWS alert for the point, which the view asked for through the host (tools/call get_alerts).
    alert = view.locator("#alerts .alert").first
    alert.wait_for()
    assert "Hurricane Warning" in (alert.locator("strong").text_content() or "")
    assert view.locator("#chart .alert-band").count() >= 1
    assert [c["name"] for c in hosted.record()["calls"]] == ["get_alerts"]
    assert hosted.errors == []
    hosted.screenshot(f"weather-forecast-{era}", docs="weather-forecast" if era == "modern" else None)


def test_weather_view_units_follow_the_result(app_host, standin) -> None:
    hosted = rendered(
        app_host(weather(standin), "get_forecast", {"location": "Tokyo", "days": 3, "units": "imperial"}, "modern")
    )
    view = hosted.view
    assert view.locator("#table thead th").all_text_contents()[2:4] == ["Low (°F)", "High (°F)"]
    assert all(label.endswith("°F") for label in view.locator("#chart .axis-temp text").all_text_contents())
    assert view.locator("#alerts .alert").count() == 0  # outside the US: no alert lookup
    assert view.locator("#modes").is_hidden()  # no hourly values asked for: nothing to switch to
    assert hosted.record()["calls"] == []


def test_weather_view_hours_by_keyboard(app_host, standin) -> None:
    arguments = {"location": "Paris, France", "days": 2, "hourly": True}
    expected = call(weather(standin), "get_forecast", arguments, "legacy")["structuredContent"]
    hosted = rendered(app_host(weather(standin), "get_forecast", arguments, "legacy"))
    view = hosted.view
    view.locator("#mode-hours").focus()
    hosted.page.keyboard.press("Enter")
    view.locator("#mode-hours[aria-pressed='true']").wait_for()
    hours = expected["hourly"]
    shown = rows(hosted)
    assert len(shown) == len(hours) == 48
    first = hours[0]["time"]  # "2026-12-01T19:00+01:00": the place's own clock
    assert shown[0][0] == f"{local_date(first)} {first[11:16]}"
    assert shown[0][2] == f"{hours[0]['temperature']:.1f}"
    # The chart's columns: Tab reaches the first, the arrow keys walk them, the readout says the values.
    view.locator("#chart .column").first.focus()
    hosted.page.keyboard.press("ArrowRight")
    readout = view.locator("#readout")
    second = hours[1]["time"]
    assert (readout.text_content() or "").startswith(f"{local_date(second)} {second[11:16]}: {hours[1]['conditions']}")
    assert view.locator("#chart .column[tabindex='0']").count() == 1
    hosted.screenshot("weather-hourly")


def test_weather_view_updates_with_a_new_result(app_host, standin) -> None:
    hosted = rendered(app_host(weather(standin), "get_forecast", {"location": "Miami", "days": 3}, "modern"))
    view = hosted.view
    view.locator("#alerts .alert").first.wait_for()
    result = hosted.call({"location": "Tokyo", "days": 4})
    assert result["structuredContent"]["location"]["name"] == "Tokyo"
    view.locator("#place", has_text="Tokyo").wait_for()
    assert "Japan" in (view.locator("#where").text_content() or "")
    assert len(rows(hosted)) == 4
    assert view.locator("#alerts .alert").count() == 0


def test_weather_view_shows_a_hostile_place_name_as_text(app_host, standin, monkeypatch) -> None:
    miami = next(place for place in standin_data.PLACES if place["name"] == "Miami")
    hostile = {**miami, "id": 1, "name": HOSTILE, "admin1": "<script>parent.parent.__pwned=2</script>"}
    monkeypatch.setattr(standin_data, "PLACES", [hostile, *standin_data.PLACES])
    hosted = rendered(app_host(weather(standin), "get_forecast", {"location": "<img", "days": 2}, "legacy"))
    view = hosted.view
    assert view.locator("#place").text_content() == HOSTILE
    assert "<script>parent.parent.__pwned=2</script>" in (view.locator("#where").text_content() or "")
    assert view.locator("img").count() == 0
    assert view.locator("script").count() == 1  # the view's own
    assert hosted.page.evaluate("window.__pwned") is None
    assert view.locator("body").evaluate("() => window.__pwned === undefined && parent.__pwned === undefined")
    hosted.screenshot("weather-hostile-place")


def test_weather_view_dark_theme(app_host, standin) -> None:
    hosted = rendered(
        app_host(weather(standin), "get_forecast", {"location": "Miami", "days": 7}, "modern", theme="dark")
    )
    view = hosted.view
    view.locator("#alerts .alert").first.wait_for()
    assert view.locator("html").get_attribute("data-theme") == "dark"
    # The host's own variable (light-dark(#ffffff, #171717)) in the dark scheme.
    assert view.locator("body").evaluate("(body) => getComputedStyle(body).backgroundColor") == "rgb(23, 23, 23)"
    hosted.screenshot("weather-forecast-dark", docs="weather-forecast-dark")
    hosted.set_theme("light")
    view.locator("html[data-theme='light']").wait_for()
    assert view.locator("body").evaluate("(body) => getComputedStyle(body).backgroundColor") == "rgb(255, 255, 255)"


def test_weather_view_compares_places(app_host, standin) -> None:
    arguments = {"locations": ["Miami", "Tokyo", "London"]}
    expected = call(weather(standin), "compare_weather", arguments, "modern")["structuredContent"]
    hosted = rendered(app_host(weather(standin), "compare_weather", arguments, "modern"))
    view = hosted.view
    assert view.locator("#place").text_content() == "3 places compared"
    shown = rows(hosted)
    assert [row[0] for row in shown] == [
        f"{place['location']['name']} {local_date(place['today']['time'])}" for place in expected["places"]
    ]
    assert [row[2:5] for row in shown] == [
        [f"{p['today'][key]:.1f}" for key in ("temperature_min", "temperature_max")]
        + [f"{p['current']['temperature']:.1f}"]
        for p in expected["places"]
    ]
    # Places are not a series: a low-to-high bar and a dot for now each, no line from one place to the next.
    assert view.locator("#chart .range").count() == view.locator("#chart .dot-now").count() == 3
    assert view.locator("#chart polyline").count() == 0
    assert view.locator("#modes").is_hidden()
    hosted.screenshot("weather-compare", docs="weather-compare")


@pytest.mark.parametrize("era", ERAS)
def test_weather_without_the_extension_is_unchanged(standin, era: str) -> None:
    async def main() -> None:
        command = weather(standin)
        async with connect_stdio(command, protocol_version=VERSIONS[era]) as plain:
            plain_tools = {tool["name"]: tool for tool in await plain.list_all_tools()}
            plain_resources = await plain.list_all_resources()
            plain_result = await plain.call_tool("get_forecast", {"location": "Miami", "days": 2})
            with pytest.raises(MCPError):
                await plain.read_resource(FORECAST_VIEW)
        async with connect_stdio(command, protocol_version=VERSIONS[era], extensions=APPS) as apps:
            apps_tools = {tool["name"]: tool for tool in await apps.list_all_tools()}
            apps_resources = await apps.list_all_resources()
            apps_result = await apps.call_tool("get_forecast", {"location": "Miami", "days": 2})
            contents = (await apps.read_resource(FORECAST_VIEW))["contents"]
        assert not any(resource["uri"].startswith("ui://") for resource in plain_resources)
        assert [r for r in apps_resources if r["uri"].startswith("ui://")][0]["mimeType"] == APP_MIME
        assert "_meta" not in plain_tools["get_forecast"] and "_meta" not in plain_tools["compare_weather"]
        for name in ("get_forecast", "compare_weather"):
            assert apps_tools[name]["_meta"]["ui"]["resourceUri"] == FORECAST_VIEW
            assert {key: value for key, value in apps_tools[name].items() if key != "_meta"} == plain_tools[name]
        assert contents[0]["mimeType"] == APP_MIME and contents[0]["text"] == html()
        for result in (plain_result, apps_result):
            result["structuredContent"].pop("retrieved_at")
        assert plain_result["content"] == apps_result["content"]
        assert plain_result["structuredContent"] == apps_result["structuredContent"]

    run_async(main)


def test_weather_view_document_is_self_contained() -> None:
    document = html()
    # No network and nothing fetched: the only URL is the SVG namespace; no markup built from data.
    assert re.findall(r"https?://[^\s\"'`]+", document) == ["http://www.w3.org/2000/svg"]
    for forbidden in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "fetch(",
        "XMLHttpRequest",
        "WebSocket",
        "eval(",
        "new Function",
        " src=",
        " href=",
    ):
        assert forbidden not in document, forbidden
    # One script (plainmcp's view-side helper, then the view's code) and one style, each allowed by its
    # hash and nothing else inline (it was 'unsafe-inline' before the helper moved into the core).
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', document)[1]
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    (script,) = re.findall(r"<script>(.*?)</script>", document, re.DOTALL)
    (style,) = re.findall(r"<style>(.*?)</style>", document, re.DOTALL)
    assert directives["script-src"] == sha256_source(script) and directives["style-src"] == sha256_source(style)
    assert directives["default-src"] == directives["connect-src"] == directives["frame-src"] == "'none'"
    assert "unsafe" not in policy and document.count("<script") == 1 and " style=" not in document


def sha256_source(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def test_readme_app_command_shows_the_forecast_view(chromium_browser, standin) -> None:
    """The line docs/apps.md and the weather README give, as a user runs it (the upstreams from the environment)."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    env |= {f"PLAINMCP_WEATHER_{name}_URL": standin.url for name in ("GEOCODING", "FORECAST", "NWS")}
    command = ["plainmcp", "app", "plainmcp-weather", "get_forecast", "--arg", "location=Miami"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
        page = chromium_browser.new_page()
        try:
            page.goto(url)
            page.locator("html[data-state='result']").wait_for(state="attached", timeout=30_000)
            view = page.frame_locator("#sandbox").frame_locator("iframe")
            view.locator("html[data-rendered]").wait_for(state="attached")
            assert view.locator("#place").text_content() == "Miami"
            assert len(view.locator("#table tbody tr").all()) == 7
        finally:
            page.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_weather_view_shows_a_stale_answer_as_stale(app_host, standin) -> None:
    command = [*weather(standin), "--forecast-ttl", "0.2", "--stale-for", "600"]
    hosted = rendered(app_host(command, "get_forecast", {"location": "Tokyo", "days": 3}, "legacy"))
    view = hosted.view
    retrieved = view.locator("#retrieved").text_content()
    assert view.locator(".stale").count() == 0
    time.sleep(0.3)  # past the forecast's TTL
    standin.fault("/v1/forecast", "status", times=-1, status=503)
    result = hosted.call({"location": "Tokyo", "days": 3})
    assert result["structuredContent"]["stale"] is True
    view.locator("#freshness .stale").wait_for()
    assert "older answer" in (view.locator("#freshness .stale").text_content() or "")
    assert view.locator("#retrieved").text_content() == retrieved  # when the answer shown was fetched


def test_weather_view_charts_the_nws_periods(app_host, standin) -> None:
    arguments = {"location": "Miami", "source": "nws", "days": 2}
    expected = call(weather(standin), "get_forecast", arguments, "modern")["structuredContent"]
    hosted = rendered(app_host(weather(standin), "get_forecast", arguments, "modern"))
    view = hosted.view
    assert [row[0] for row in rows(hosted)] == [period["name"] for period in expected["periods"]]
    assert [row[2] for row in rows(hosted)] == [f"{period['temperature']:.1f}" for period in expected["periods"]]
    assert "US National Weather Service" in (view.locator("#source").text_content() or "")
    assert view.locator("#chart .temp-high").count() == 1  # one line: a temperature per period
