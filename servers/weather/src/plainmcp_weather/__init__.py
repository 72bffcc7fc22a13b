"""plainmcp-weather: worldwide weather from Open-Meteo and US alerts from the NWS, over MCP."""

__version__ = "0.1.0"
