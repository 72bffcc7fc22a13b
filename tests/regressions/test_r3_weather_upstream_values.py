"""Regression (issue 26.12, weather): upstream values of the wrong type (a string, an object, a boolean
where a number belongs) or NaN / Infinity (which Python's JSON parser accepts) gave -32603. Now such a
value is a gap in the data (null), never a failure of the call; an answer missing what was asked for
is still a clear tool error. A real server process against a real HTTP upstream on 127.0.0.1 that
sends the recorded shape of Open-Meteo's answer with its values poisoned."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp_weather import standin_data

from tests.servers.weather.support import SERVER_MODULE

pytestmark = pytest.mark.anyio

#: What replaces every number of the answer, per attack.
POISONS: dict[str, Any] = {
    "nan": float("nan"),
    "infinity": float("inf"),
    "huge": 10**400,
    "string": "12.5",
    "object": {"value": 1},
    "list": [1, 2],
    "boolean": True,
}


def poison(value: Any, replacement: Any, depth: int = 0) -> Any:
    """``value`` with every number below the top level replaced (the grid's coordinates stay valid)."""
    if isinstance(value, dict):
        return {
            k: v if depth == 0 and k in ("latitude", "longitude") else poison(v, replacement, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [poison(v, replacement, depth + 1) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return replacement
    return value


class Upstream(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        mode, _, path = url.path.lstrip("/").partition("/")
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if path != "v1/forecast":
            self.send_error(404)
            return
        sections = {s: [v for v in query.get(s, "").split(",") if v] for s in ("current", "hourly", "daily")}
        units = {k: query[k] for k in ("temperature_unit", "wind_speed_unit", "precipitation_unit")}
        answer = standin_data.forecast(
            float(query["latitude"]), float(query["longitude"]), sections, int(query.get("forecast_days", 7)), units
        )
        body = json.dumps(poison(answer, POISONS[mode]), allow_nan=True).encode()
        if mode == "huge":
            body = body.replace(str(10**400).encode(), b"1e999")  # a float no double holds
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def upstream() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("mode", list(POISONS))
async def test_r3_weather_poisoned_values_are_gaps_not_internal_errors(upstream: str, mode: str) -> None:
    base = f"{upstream}/{mode}"
    command = [*SERVER_MODULE, "--forecast-url", base, "--geocoding-url", base, "--nws-url", base, "--retries", "0"]
    async with connect_stdio(command) as client:
        with anyio.fail_after(20):
            current = await client.call_tool("get_current_weather", {"latitude": 45.5, "longitude": -122.6})
            forecast = await client.call_tool("get_forecast", {"latitude": 45.5, "longitude": -122.6, "days": 3})
            with anyio.fail_after(1):
                await client.ping()
    # A JSON-RPC error would have raised above; each answer is a result, and says nothing internal.
    for result in (current, forecast):
        text = " ".join(block.get("text", "") for block in result["content"])
        assert "Internal error" not in text and "Traceback" not in text
        if result.get("isError"):
            assert "could not be read" in text, text
    if not current.get("isError"):
        served = current["structuredContent"]
        assert served["current"]["temperature"] is None
        assert json.dumps(served, allow_nan=False)  # nothing non-finite reached the client
