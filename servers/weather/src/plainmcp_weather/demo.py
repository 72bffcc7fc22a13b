"""A short demonstration: start the weather server over stdio and ask it a few questions.

``python -m plainmcp_weather.demo`` uses the real Open-Meteo and NWS when they answer within a
couple of seconds, and otherwise (or with ``--offline``) the local stand-in, saying which. Output
goes to stdout; it is meant for people and for the repository's demo script.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import anyio
import httpx
from plainmcp import connect_stdio

from .config import FORECAST_URL
from .standin import StandIn

QUESTIONS: list[tuple[str, dict[str, Any]]] = [
    ("search_locations", {"name": "Portland, OR", "count": 2}),
    ("get_current_weather", {"location": "Paris, France"}),
    ("get_forecast", {"location": "Tokyo", "days": 3, "units": "metric"}),
    ("get_alerts", {"state": "FL"}),
]


def online(timeout: float = 2.0) -> bool:
    """Whether Open-Meteo answers from here (one small request)."""
    try:
        response = httpx.get(
            f"{FORECAST_URL}/v1/forecast", params={"latitude": 0, "longitude": 0, "current": "is_day"}, timeout=timeout
        )
    except httpx.HTTPError:
        return False
    return response.status_code == 200


async def ask(command: list[str], out: Any) -> None:
    with anyio.fail_after(60):
        async with connect_stdio(command) as client:
            for name, arguments in QUESTIONS:
                result = await client.call_tool(name, arguments)
                texts = [block["text"] for block in result["content"] if block.get("type") == "text"]
                marker = " (error)" if result.get("isError") else ""
                print(f"\n> {name} {arguments}{marker}", file=out)
                print("\n".join(texts), file=out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m plainmcp_weather.demo", description=__doc__)
    parser.add_argument("--offline", action="store_true", help="use the local stand-in even if the network is up")
    args = parser.parse_args(argv)
    command = [sys.executable, "-m", "plainmcp_weather", "--log-level", "warning"]
    if not args.offline and online():
        print("plainmcp-weather demo: asking the real Open-Meteo and NWS APIs.")
        anyio.run(ask, command, sys.stdout)
        return
    with StandIn() as standin:
        print(
            f"plainmcp-weather demo: no network use -- answers come from the local stand-in at {standin.url} "
            "(recorded-shape places, synthetic weather)."
        )
        urls = ["--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url]
        anyio.run(ask, [*command, *urls], sys.stdout)


if __name__ == "__main__":
    main()
