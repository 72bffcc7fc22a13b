"""The Open-Meteo API key reaches Open-Meteo and no log line, at any level: the real server process
at ``--log-level debug``, and in this process with every logger at DEBUG (httpx's request log and
httpcore's header log included), with the stand-in echoing the key back in a redirect."""

from __future__ import annotations

import logging

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_weather.redaction import THIRD_PARTY_LOGGERS, RedactSecrets, redact_url
from plainmcp_weather.server import Deps, build_server
from plainmcp_weather.standin import StandIn

from .support import QUICK, SERVER_MODULE, config

pytestmark = pytest.mark.anyio

KEY = "om-secret-7f3a9c1e"


@pytest.fixture
def standin():
    with StandIn() as running:
        # Its redirect answers Location: <the same path and query>, so it echoes the key back.
        running.fault("/v1/search", "redirect", times=1)
        yield running


def keys_sent(standin: StandIn) -> list[bool]:
    return [f"apikey={KEY}" in entry["query"] for entry in standin.requests("/v1/")]


@pytest.mark.parametrize("dependencies", [False, True])
async def test_server_process_at_debug_never_logs_the_key(standin, caplog, dependencies):
    caplog.set_level(logging.INFO, logger="plainmcp.stdio")  # where connect_stdio passes the server's stderr
    command = [
        *SERVER_MODULE,
        "--geocoding-url",
        standin.url,
        "--forecast-url",
        standin.url,
        "--nws-url",
        standin.url,
        "--log-level",
        "debug",
        *(["--log-dependencies"] if dependencies else []),
    ]
    async with connect_stdio(command, env={"PLAINMCP_WEATHER_OPEN_METEO_API_KEY": KEY}) as client:
        with anyio.fail_after(QUICK):
            found = await client.call_tool("search_locations", {"name": "Tokyo"})
            weather = await client.call_tool("get_current_weather", {"latitude": 35.6895, "longitude": 139.6917})
            # stderr comes through its own pipe, in order: once the line opening the second forecast
            # request is in, every line about the requests before it is too.
            await client.call_tool("get_current_weather", {"latitude": 1, "longitude": 2})
            while caplog.text.count("Open-Meteo forecast: GET") < 2:
                await anyio.sleep(0.05)
    assert not found.get("isError") and not weather.get("isError")
    assert keys_sent(standin) == [True, True, True, True]  # search, its redirect, 2 forecasts: the key went out
    assert "Open-Meteo geocoding: GET http://127.0.0.1" in caplog.text  # debug lines were captured
    # With --log-dependencies, httpx's request log and httpcore's header log are there too.
    assert ("HTTP Request: GET http://127.0.0.1" in caplog.text) is dependencies
    assert KEY not in caplog.text


async def test_every_logger_at_debug_in_process_never_sees_the_key(standin, caplog):
    caplog.set_level(logging.DEBUG)
    settings = {"geocoding_url": standin.url, "forecast_url": standin.url, "nws_url": standin.url}
    server = build_server(config(api_key=KEY, **settings), Deps())
    async with connect_in_memory(server) as client:
        with anyio.fail_after(QUICK):
            result = await client.call_tool("search_locations", {"name": "Sydney"})
    assert not result.get("isError")
    assert keys_sent(standin) == [True, True]
    assert "HTTP Request: GET http://127.0.0.1" in caplog.text  # httpx logged each request's URL...
    assert "[redacted]" in caplog.text  # ...and httpcore the echoed Location, scrubbed
    assert KEY not in caplog.text
    for name in THIRD_PARTY_LOGGERS:  # the filter left with the client
        assert not any(isinstance(f, RedactSecrets) for f in logging.getLogger(name).filters)


async def test_api_key_goes_through_an_environment_proxy(monkeypatch):
    # The key is added in our transport; the proxy httpx would pick from the environment must still apply.
    with StandIn() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        server = build_server(config(api_key=KEY, forecast_url="http://forecast.invalid"), Deps())
        async with connect_in_memory(server) as client:
            with anyio.fail_after(QUICK):
                result = await client.call_tool("get_current_weather", {"latitude": 1, "longitude": 2})
        assert not result.get("isError")
        assert keys_sent(proxy) == [True]


def test_redact_url_hides_every_secret_parameter_and_keeps_the_rest():
    url = f"https://customer-api.open-meteo.com/v1/forecast?latitude=1.5&apikey={KEY}&current=a,b&APIKEY=x"
    assert redact_url(url) == (
        "https://customer-api.open-meteo.com/v1/forecast?latitude=1.5&apikey=[redacted]&current=a,b&APIKEY=[redacted]"
    )
    assert redact_url("http://127.0.0.1:1/v1/search") == "http://127.0.0.1:1/v1/search"
