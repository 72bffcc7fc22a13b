"""The real server process over Streamable HTTP (both eras, our client and the official SDK's) and
the official SDK over stdio (both eras), all against the stand-in on 127.0.0.1."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client as SDKClient
from plainmcp.http_client import connect_http
from plainmcp_weather.standin import StandIn

from tests.e2e.http_server import server_process
from tests.interop import sdk_client, sdk_modern

from .support import QUICK, SERVER_MODULE

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def standin():
    with StandIn() as running:
        yield running


@pytest.fixture(scope="module")
def http_server(standin):
    urls = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
    with server_process(*urls, "--backoff", "0.01", module="plainmcp_weather", transport="http") as server:
        yield server


def upstream_args(standin: StandIn) -> list[str]:
    return [
        "--geocoding-url",
        standin.url,
        "--forecast-url",
        standin.url,
        "--nws-url",
        standin.url,
        "--backoff",
        "0.01",
        "--log-level",
        "warning",
    ]


@pytest.fixture(autouse=True)
def fresh_counts(standin):
    standin.reset()


@pytest.mark.parametrize(
    ("version", "place", "country"), [("2025-11-25", "Tokyo", "Japan"), (MODERN, "Sydney", "Australia")]
)
async def test_http_our_client_in_both_eras(http_server, standin, version, place, country):
    standin.fault("/v1/forecast", "status", times=1, status=503)
    with anyio.fail_after(QUICK):
        async with connect_http(http_server.url, protocol_version=version) as client:
            tools, _ = await client.list_tools()
            result = await client.call_tool("get_forecast", {"location": place, "days": 1, "units": "imperial"})
    assert len(tools) == 8
    assert result["structuredContent"]["location"]["country"] == country
    assert result["structuredContent"]["units"]["temperature"] == "°F"
    assert standin.count("/v1/forecast") == 2  # the 503, then the retry


@pytest.mark.parametrize("mode", ["legacy", MODERN])
async def test_http_sdk_client_in_both_eras(http_server, mode):
    with anyio.fail_after(QUICK):
        async with SDKClient(http_server.url, mode=mode) as client:
            tools = (await client.list_tools()).tools
            result = await client.call_tool("get_current_weather", {"location": "Portland, ME"})
            failed = await client.call_tool("get_alerts", {"state": "Bavaria"})
            # A tool added for issue 21, through a client that checks structured content against the output schema.
            compared = await client.call_tool("compare_weather", {"locations": ["Paris, France", "Tokyo"]})
    assert {tool.name for tool in tools} == {
        "search_locations",
        "get_current_weather",
        "get_forecast",
        "get_alerts",
        "get_air_quality",
        "get_marine_forecast",
        "get_historical_weather",
        "compare_weather",
    }
    assert not compared.is_error
    assert [place["location"]["country"] for place in compared.structured_content["places"]] == ["France", "Japan"]
    assert all(tool.output_schema for tool in tools)
    assert result.structured_content["location"]["region"] == "Maine"
    assert failed.is_error and "not a US state" in failed.content[0].text


async def test_sdk_stdio_legacy(standin):
    async with sdk_client.connect([*SERVER_MODULE, *upstream_args(standin)]) as conn:
        assert conn.init.server_info.name == "plainmcp-weather"
        with anyio.fail_after(QUICK):
            result = await conn.session.call_tool("get_alerts", {"state": "FL"})
    assert not result.is_error
    assert result.structured_content["alerts"][0]["event"] == "Hurricane Warning"


async def test_sdk_stdio_modern(standin):
    async with sdk_modern.connect([*SERVER_MODULE, *upstream_args(standin)], mode=MODERN) as conn:
        with anyio.fail_after(QUICK):
            result = await conn.client.call_tool("search_locations", {"name": "Paris", "count": 2})
    assert [p["country_code"] for p in result.structured_content["results"]] == ["FR", "US"]
    assert any(
        m.get("params", {}).get("_meta", {}).get(sdk_modern.PROTOCOL_VERSION) == MODERN
        for m in conn.wire.outbound_with("tools/call")
    )
