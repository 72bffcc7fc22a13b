"""Wiring: the weather :class:`plainmcp.Server` over a :class:`~plainmcp_weather.service.WeatherService`."""

from __future__ import annotations

from typing import Any

from plainmcp import Server

from . import __version__, tools
from .config import WeatherConfig
from .service import Deps, WeatherService

NAME = "plainmcp-weather"

INSTRUCTIONS = (
    "Weather for any place on Earth (Open-Meteo) and active US alerts (National Weather Service). "
    "Pass a place name, qualified when ambiguous (\"Paris, France\", \"Portland, OR\"), or latitude and "
    "longitude. Every answer says which place it used: check it is the one meant, and look at "
    "'alternatives'. An answer marked stale is an older cached one, served while the upstream is down."
)


def build_server(config: WeatherConfig | None = None, deps: Deps | None = None) -> Server:
    """The weather server. A pure factory: no network, no client is opened until a tool is called.

    ``deps`` replaces the outside world in tests: the httpx client (one over ``httpx.MockTransport``),
    the clocks, ``sleep`` and the jitter source.
    """
    config = config or WeatherConfig()
    service = WeatherService(config, deps)
    server = Server(
        NAME,
        __version__,
        title="Weather",
        description="Worldwide weather from Open-Meteo and US alerts from the National Weather Service",
        instructions=INSTRUCTIONS,
    )
    server.weather = service  # type: ignore[attr-defined]  # for tests and embedding: counters, breakers, cache
    tools.register(server, service)

    @server.background
    async def close_client(server: Any) -> None:
        """Close the HTTP client (if one was opened) when serving ends."""
        import anyio

        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await service.aclose()

    return server
