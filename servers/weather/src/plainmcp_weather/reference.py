"""Reference resources: the WMO weather-code table and the attribution each data source asks for.

Static, read from this package's own constants (no network): a model can look up what a
``weather_code`` means, and a client can show the credits the licences require in one place.
"""

from __future__ import annotations

import json
from typing import Any

from plainmcp import Server

from .nws import ATTRIBUTION as NWS_ALERTS
from .nws import FORECAST_ATTRIBUTION as NWS_FORECAST
from .openmeteo import ATTRIBUTION as OPEN_METEO
from .openmeteo_more import AIR_QUALITY_ATTRIBUTION, ARCHIVE_ATTRIBUTION, MARINE_ATTRIBUTION
from .wmo import DESCRIPTIONS

WMO_URI = "weather://wmo-codes"
ATTRIBUTION_URI = "weather://attribution"

#: Each source, the tools that use it, and the credit its licence asks for.
SOURCES = (
    (
        "Open-Meteo forecast and geocoding",
        "search_locations, get_current_weather, get_forecast, compare_weather",
        OPEN_METEO,
    ),
    ("Open-Meteo air quality", "get_air_quality", AIR_QUALITY_ATTRIBUTION),
    ("Open-Meteo marine", "get_marine_forecast", MARINE_ATTRIBUTION),
    ("Open-Meteo historical weather", "get_historical_weather", ARCHIVE_ATTRIBUTION),
    ("National Weather Service forecasts", 'get_forecast with source "nws"', NWS_FORECAST),
    ("National Weather Service alerts", "get_alerts, weather://alerts/{area}", NWS_ALERTS),
)


def wmo_table() -> str:
    """The WMO 4677 codes Open-Meteo uses, as JSON: ``{"codes": [{"code", "description"}]}``."""
    codes = [{"code": code, "description": words} for code, words in sorted(DESCRIPTIONS.items())]
    return json.dumps({"codes": codes, "source": "WMO code table 4677, as Open-Meteo uses it"}, ensure_ascii=False)


def attribution_text() -> str:
    """The credits, as Markdown: one line per source, naming the tools that use it."""
    lines = ["# Data sources and their attribution", ""]
    lines += [f"- **{source}** ({tools}): {credit}" for source, tools, credit in SOURCES]
    return "\n".join(lines) + "\n"


def register(server: Server) -> None:
    """Add the two resources to ``server``."""

    async def wmo_codes(ctx: Any, uri: str) -> str:
        return wmo_table()

    async def attribution(ctx: Any, uri: str) -> str:
        return attribution_text()

    server.resource(
        WMO_URI,
        "wmo-codes",
        title="WMO weather codes",
        description="What each weather_code in the answers means (WMO 4677, as Open-Meteo uses it).",
        mime_type="application/json",
    )(wmo_codes)
    server.resource(
        ATTRIBUTION_URI,
        "attribution",
        title="Attribution",
        description="The credit each data source's licence asks for, and the tools that use it.",
        mime_type="text/markdown",
    )(attribution)
