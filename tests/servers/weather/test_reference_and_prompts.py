"""The WMO code table and attribution resources, and the prompts (issue 21, feature e), through the real
server process in both eras (no network: they come from the package itself)."""

from __future__ import annotations

import json

import anyio
import pytest
from plainmcp import MCPError, connect_stdio
from plainmcp_weather.wmo import DESCRIPTIONS

from .support import QUICK, SERVER_MODULE

pytestmark = pytest.mark.anyio

VERSIONS = ["2025-11-25", "2026-07-28"]


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_wmo_table_and_the_attribution_are_resources(version):
    with anyio.fail_after(QUICK):
        async with connect_stdio(SERVER_MODULE, protocol_version=version) as client:
            listed = {resource["uri"]: resource for resource in await client.list_all_resources()}
            codes = json.loads((await client.read_resource("weather://wmo-codes"))["contents"][0]["text"])
            credits = (await client.read_resource("weather://attribution"))["contents"][0]
    assert listed["weather://wmo-codes"]["mimeType"] == "application/json"
    assert listed["weather://attribution"]["mimeType"] == "text/markdown"
    assert len(codes["codes"]) == len(DESCRIPTIONS)
    assert {"code": 95, "description": "Thunderstorm"} in codes["codes"]
    text = credits["text"]
    for credit in ("CC BY 4.0", "Copernicus Atmosphere Monitoring Service", "ERA5", "National Weather Service"):
        assert credit in text
    assert "get_air_quality" in text and "weather://alerts/{area}" in text


@pytest.mark.parametrize("version", VERSIONS)
async def test_the_prompts_lead_through_the_tools(version):
    with anyio.fail_after(QUICK):
        async with connect_stdio(SERVER_MODULE, protocol_version=version) as client:
            prompts = {prompt["name"]: prompt for prompt in await client.list_all_prompts()}
            plan = await client.get_prompt(
                "plan-outdoor-activity", {"location": "Portland, OR", "activity": "hiking", "when": "Saturday"}
            )
            compare = await client.get_prompt("compare-destinations", {"places": "Lisbon; Porto ;Faro"})
            with pytest.raises(MCPError) as missing:
                await client.get_prompt("plan-outdoor-activity", {"location": "Paris"})
    required = {
        argument["name"] for argument in prompts["plan-outdoor-activity"]["arguments"] if argument.get("required")
    }
    assert required == {"location", "activity"}
    text = plan["messages"][0]["content"]["text"]
    assert "go hiking near Portland, OR, some time in Saturday" in text and "get_forecast" in text
    assert "get_alerts" in text and "do not guess" in text
    assert "Lisbon; Porto; Faro" in compare["messages"][0]["content"]["text"]
    assert missing.value.code == -32602
