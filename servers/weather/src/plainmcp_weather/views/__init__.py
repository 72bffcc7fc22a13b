"""The weather server's MCP Apps view: one self-contained HTML document (an SVG chart written here, no
third-party code, no network) that renders ``get_forecast`` and ``compare_weather`` results.

``weather.html`` has one inline ``<style>`` and one inline ``<script>`` that starts with plainmcp's view-side
helper (``//@app-view``, :func:`plainmcp.app_view_document`); its Content-Security-Policy allows exactly those
two blocks, by their SHA-256, and nothing else.

Hosts that took up the extension show it; the others get the tools' text and structured results as before.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from plainmcp import Server, add_app_view, app_tool_meta, app_view_document

#: The view of ``get_forecast`` (daily, hourly and NWS periods) and of ``compare_weather``.
FORECAST_VIEW = "ui://plainmcp-weather/forecast.html"


@functools.cache
def html() -> str:
    """The view as served: the helper inlined, the policy filled in."""
    # pathlib, not importlib.resources: the latter adds tempfile, shutil and zipfile to the start-up.
    return app_view_document(Path(__file__).with_name("weather.html").read_text(encoding="utf-8"))


def tool_meta() -> dict[str, Any]:
    """The ``_meta`` of a tool the view renders."""
    return app_tool_meta(FORECAST_VIEW)


def register(server: Server) -> None:
    """Serve the view to hosts that take up MCP Apps: no network at all (empty CSP domains)."""
    add_app_view(
        server,
        FORECAST_VIEW,
        html(),
        name="forecast-view",
        title="Forecast chart",
        description="Temperature and precipitation over the days or hours, alerts, source and freshness",
        csp={"connectDomains": [], "resourceDomains": []},
        prefers_border=True,
    )
