"""plainmcp-weather: worldwide weather from Open-Meteo and US alerts from the NWS, over MCP.

Four read-only tools (``search_locations``, ``get_current_weather``, ``get_forecast``, ``get_alerts``)
over Open-Meteo's geocoding and forecast APIs and the National Weather Service's alerts, behind
timeouts, retries, a circuit breaker per upstream, single flight and a cache that serves stale
answers while an upstream is down. Embed it with ``build_server(Config(...))``.
"""

import importlib.metadata

__version__: str = importlib.metadata.version("plainmcp-weather")

# After __version__: config.py (the default User-Agent) and server.py (serverInfo) read it.
from .config import Config
from .server import build_server

__all__ = ["Config", "__version__", "build_server"]
