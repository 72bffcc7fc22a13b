"""plainmcp-weather: worldwide weather from Open-Meteo and US alerts from the NWS, over MCP.

Eight read-only tools (places, current weather, forecasts, US alerts, air quality, marine forecasts,
historical weather, a comparison of places) over Open-Meteo's APIs and the National Weather Service's,
subscribable US alerts, the WMO code table and attribution as resources, and two prompts; behind
timeouts, retries, a circuit breaker per upstream, single flight and a cache that serves stale
answers while an upstream is down. Embed it with ``build_server(Config(...))``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

#: The one place the version is written: pyproject.toml reads it ([tool.hatch.version]). A literal,
#: because reading the installed metadata would cost ~14 ms of every start-up.
__version__ = "0.1.0"

if TYPE_CHECKING:
    from .config import Config
    from .server import build_server

__all__ = ["Config", "__version__", "build_server"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: the command (``__main__``) must run before the server's modules import.
    value: Any
    if name == "Config":
        from .config import Config as value
    elif name == "build_server":
        from .server import build_server as value
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value
