"""--rate-limit: requests per minute to each upstream, counted by the server (across replicas with
--redis: tests/replicas/test_weather_replicas.py); one process needs nothing more."""

from __future__ import annotations

import pytest
from plainmcp.testing import connect_in_memory
from plainmcp_weather.config import Config
from plainmcp_weather.server import Deps, build_server

from .support import Recorder, config

pytestmark = pytest.mark.anyio


async def test_one_process_keeps_each_upstream_under_its_limit_and_says_so():
    recorder = Recorder()
    server = build_server(config(rate_limit=2), Deps(transport=recorder.transport()))
    async with connect_in_memory(server) as client:
        answers = [
            await client.call_tool("get_current_weather", {"latitude": float(i), "longitude": 3.0}) for i in range(3)
        ]
        other = await client.call_tool("search_locations", {"name": "Tokyo"})  # another upstream, its own limit
        cached = await client.call_tool("get_current_weather", {"latitude": 0.0, "longitude": 3.0})
    assert recorder.count("/v1/forecast") == 2 and recorder.count("/v1/search") == 1
    assert [bool(answer.get("isError")) for answer in answers] == [False, False, True]
    assert answers[2]["content"][0]["text"].startswith(
        "This server's request limit for the Open-Meteo forecast service is reached; try again in about"
    )
    assert not other.get("isError") and not cached.get("isError")  # a cached answer needs no request


async def test_no_limit_by_default_and_a_negative_one_is_refused():
    assert Config().rate_limit == 0
    with pytest.raises(ValueError, match="--rate-limit must be >= 0"):
        Config(rate_limit=-1)
