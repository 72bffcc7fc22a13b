"""``plainmcp-weather``: serve the weather tools (stdio by default; see ``--help``)."""

from __future__ import annotations

import argparse

from plainmcp.command_line import env_option, serve, server_arguments

from . import __version__
from .config import FORECAST_URL, GEOCODING_URL, NWS_URL, USER_AGENT, WeatherConfig
from .server import build_server

PREFIX = "PLAINMCP_WEATHER"


def arguments() -> argparse.ArgumentParser:
    parser = server_arguments(
        "plainmcp-weather",
        env_prefix=PREFIX,
        description="Worldwide weather (Open-Meteo) and US alerts (National Weather Service) over MCP.",
        version=__version__,
    )
    defaults = WeatherConfig()
    upstream = parser.add_argument_group("upstream APIs")

    def option(group: argparse._ArgumentGroup, flag: str, **kwargs: object) -> None:
        env = f"{PREFIX}_{flag.removeprefix('--').replace('-', '_').upper()}"
        env_option(group, flag, env, **kwargs)  # type: ignore[arg-type]

    option(upstream, "--geocoding-url", default=GEOCODING_URL,
           help="base URL of the Open-Meteo geocoding API (/v1/search is appended)")
    option(upstream, "--forecast-url", default=FORECAST_URL,
           help="base URL of the Open-Meteo forecast API (/v1/forecast is appended); a self-hosted Open-Meteo works")
    option(upstream, "--nws-url", default=NWS_URL, help="base URL of the National Weather Service API")
    option(upstream, "--open-meteo-api-key", default="",
           help="Open-Meteo commercial API key (switches the default URLs to the customer- hosts); "
           "prefer the environment variable: a command line is visible to other users")
    option(upstream, "--user-agent", default=USER_AGENT,
           help="User-Agent sent upstream; the NWS asks for an application name and a contact address")
    option(upstream, "--language", default=defaults.language, help="language of place names (lower-case code)")

    resilience = parser.add_argument_group("resilience")
    option(resilience, "--timeout", type=float, default=defaults.timeout,
           help="seconds per upstream attempt, the whole body included")
    option(resilience, "--max-response-bytes", type=int, default=defaults.max_response_bytes,
           help="largest upstream body read (after decompression); a larger one is an error, never held whole")
    option(resilience, "--retries", type=int, default=defaults.retries,
           help="retries after a timeout, 429, 500, 502, 503 or 504 (never after another 4xx)")
    option(resilience, "--backoff", type=float, default=defaults.backoff,
           help="seconds of backoff before the first retry (doubled for each next one, with full jitter)")
    option(resilience, "--max-backoff", type=float, default=defaults.max_backoff, help="cap of one backoff, seconds")
    option(resilience, "--max-retry-after", type=float, default=defaults.max_retry_after,
           help="a longer Retry-After is not waited out: the call fails at once")
    option(resilience, "--breaker-threshold", type=int, default=defaults.breaker_threshold,
           help="consecutive failed attempts that open an upstream's circuit")
    option(resilience, "--breaker-cooldown", type=float, default=defaults.breaker_cooldown,
           help="seconds an open circuit refuses calls before one probe is let through")

    cache = parser.add_argument_group("cache")
    option(cache, "--cache-size", type=int, default=defaults.cache_size, help="entries at most (0 disables the cache)")
    option(cache, "--geocoding-ttl", type=float, default=defaults.geocoding_ttl, help="seconds a place lookup stays fresh")
    option(cache, "--current-ttl", type=float, default=defaults.current_ttl, help="seconds current weather stays fresh")
    option(cache, "--forecast-ttl", type=float, default=defaults.forecast_ttl, help="seconds a forecast stays fresh")
    option(cache, "--alerts-ttl", type=float, default=defaults.alerts_ttl, help="seconds alerts stay fresh")
    option(cache, "--stale-for", type=float, default=defaults.stale_for,
           help="seconds past its TTL an answer may still be served, marked stale, while the upstream is down")
    return parser


def main() -> None:
    parser = arguments()
    args = parser.parse_args()
    try:
        config = WeatherConfig.from_args(args)
    except ValueError as problem:
        parser.error(str(problem))
    serve(build_server(config), args)


if __name__ == "__main__":
    main()
