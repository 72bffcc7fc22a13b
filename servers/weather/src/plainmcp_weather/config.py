"""The server's settings: one frozen value, built from the command line (or directly, in tests)."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from plainmcp import env_option

from . import __version__

#: Every option's environment variable is this prefix and the option's name (``PLAINMCP_WEATHER_TIMEOUT``).
ENV_PREFIX = "PLAINMCP_WEATHER"

GEOCODING_URL = "https://geocoding-api.open-meteo.com"
FORECAST_URL = "https://api.open-meteo.com"
NWS_URL = "https://api.weather.gov"
AIR_QUALITY_URL = "https://air-quality-api.open-meteo.com"
MARINE_URL = "https://marine-api.open-meteo.com"
ARCHIVE_URL = "https://archive-api.open-meteo.com"
#: Open-Meteo's commercial plan serves the same API on these hosts, with ``apikey`` on every call.
COMMERCIAL_GEOCODING_URL = "https://customer-geocoding-api.open-meteo.com"
COMMERCIAL_FORECAST_URL = "https://customer-api.open-meteo.com"
#: Each Open-Meteo base URL setting, its free host and its commercial one.
OPEN_METEO_HOSTS = {
    "geocoding_url": (GEOCODING_URL, COMMERCIAL_GEOCODING_URL),
    "forecast_url": (FORECAST_URL, COMMERCIAL_FORECAST_URL),
    "air_quality_url": (AIR_QUALITY_URL, "https://customer-air-quality-api.open-meteo.com"),
    "marine_url": (MARINE_URL, "https://customer-marine-api.open-meteo.com"),
    "archive_url": (ARCHIVE_URL, "https://customer-archive-api.open-meteo.com"),
}
#: The largest upstream body accepted, after decoding: Open-Meteo's answers are tens of kilobytes, the
#: NWS's alerts for a state in a busy season a few hundred. A larger one is an error, never held whole.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
#: The NWS is polled for a subscribed area at most this often (seconds); a stand-in may be polled faster.
MIN_NWS_POLL = 60.0
#: The NWS asks for an application name and a contact; operators should put their own here.
USER_AGENT = f"plainmcp-weather/{__version__} (+https://pypi.org/project/plainmcp-weather/)"


#: The base URL settings added with the tools of issue 21 (checked like the first three).
URLS = ("air_quality_url", "marine_url", "archive_url")


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting, with its default. Times are in seconds.

    ``geocoding_url``, ``forecast_url`` and ``nws_url`` are base URLs: the API paths
    (``/v1/search``, ``/v1/forecast``, ``/points/...``, ``/alerts/active``) are appended, so one
    local stand-in can play all three. With ``api_key`` and the default Open-Meteo URLs, the
    commercial hosts are used instead.

    Raises:
        ValueError: a value out of range, a base URL that is not http(s), an empty User-Agent; the
            message names the command-line option.
    """

    geocoding_url: str = GEOCODING_URL  #: Open-Meteo geocoding (``/v1/search``)
    forecast_url: str = FORECAST_URL  #: Open-Meteo forecast (``/v1/forecast``)
    nws_url: str = NWS_URL  #: the National Weather Service (``/points/...``, ``/alerts/active``, ``/gridpoints/...``)
    air_quality_url: str = AIR_QUALITY_URL  #: Open-Meteo air quality (``/v1/air-quality``)
    marine_url: str = MARINE_URL  #: Open-Meteo marine (``/v1/marine``)
    archive_url: str = ARCHIVE_URL  #: Open-Meteo historical weather (``/v1/archive``)
    api_key: str | None = None  #: Open-Meteo commercial key, sent as ``apikey`` (never logged)
    user_agent: str = USER_AGENT  #: sent to every upstream; the NWS wants a name and a contact
    language: str = "en"  #: language of place names
    timeout: float = 10.0  #: one upstream attempt, all of it (connect, redirects, whole body)
    retries: int = 2  #: retries after a timeout, 429 or 5xx (never after another 4xx)
    backoff: float = 0.5  #: before the first retry; doubled each time, full jitter
    max_backoff: float = 8.0  #: cap of one backoff
    max_retry_after: float = 10.0  #: a longer ``Retry-After`` is not waited out: the call fails at once
    breaker_threshold: int = 5  #: consecutive failed attempts that open an upstream's circuit
    breaker_cooldown: float = 30.0  #: an open circuit refuses calls this long, then lets one probe through
    rate_limit: int = 0  #: requests per minute at most to each upstream, counted across replicas (0: no limit)
    cache_size: int = 1024  #: entries at most; 0 disables the cache
    geocoding_ttl: float = 86400.0  #: freshness of a place lookup (and of an NWS point)
    current_ttl: float = 600.0  #: freshness of current weather
    forecast_ttl: float = 3600.0  #: freshness of a forecast
    alerts_ttl: float = 300.0  #: freshness of alerts
    alerts_poll: float = 60.0  #: seconds between two polls of a subscribed area (at least 60 against the NWS)
    stale_for: float = 3600.0  #: past its TTL, an answer may still be served (marked stale) while the upstream is down
    max_response_bytes: int = MAX_RESPONSE_BYTES  #: largest upstream body read, after decoding

    def __post_init__(self) -> None:
        seconds = (
            "timeout",
            "backoff",
            "max_backoff",
            "max_retry_after",
            "breaker_cooldown",
            "geocoding_ttl",
            "current_ttl",
            "forecast_ttl",
            "alerts_ttl",
            "stale_for",
            "alerts_poll",
        )
        for name in seconds:
            value = getattr(self, name)
            if math.isnan(value) or value < 0:
                raise ValueError(f"{_flag(name)} must be a number >= 0")
        if self.timeout <= 0 or math.isinf(self.timeout):
            raise ValueError("--timeout must be a number of seconds > 0")
        if self.max_response_bytes < 1024:
            raise ValueError("--max-response-bytes must be at least 1024")
        for name in ("retries", "cache_size", "rate_limit"):
            if getattr(self, name) < 0:
                raise ValueError(f"{_flag(name)} must be >= 0")
        if self.breaker_threshold < 1:
            raise ValueError("--breaker-threshold must be >= 1")
        for name in ("geocoding_url", "forecast_url", "nws_url", *URLS):
            url = getattr(self, name)
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{_flag(name)} must be an http:// or https:// URL")
            object.__setattr__(self, name, url.rstrip("/"))
        if self.nws_url == NWS_URL and self.alerts_poll < MIN_NWS_POLL:
            raise ValueError(f"--alerts-poll must be at least {MIN_NWS_POLL:g} seconds against {NWS_URL}")
        if self.alerts_poll <= 0:
            raise ValueError("--alerts-poll must be a number of seconds > 0")
        if not self.user_agent.strip():
            raise ValueError("--user-agent must not be empty: the NWS refuses requests without a User-Agent")
        if self.api_key:
            for name, (free, commercial) in OPEN_METEO_HOSTS.items():
                if getattr(self, name) == free:
                    object.__setattr__(self, name, commercial)

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add the weather server's own options, :data:`OPTIONS`, to ``parser`` (one made by
        :func:`plainmcp.server_arguments`): each defaults to its setting's default, and to its
        ``PLAINMCP_WEATHER_...`` variable when that is set."""
        defaults = Config()
        for title, options in OPTIONS.items():
            group = parser.add_argument_group(title)
            for setting, kind, text in options:
                flag = _flag(setting)
                env = f"{ENV_PREFIX}_{flag.removeprefix('--').replace('-', '_').upper()}"
                # ``group`` is typed ArgumentParser in env_option; argparse names no public group class.
                env_option(group, flag, env, type=kind, default=getattr(defaults, setting), help=text)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """From a command line parsed with :meth:`add_arguments`'s options.

        Raises:
            ValueError: a value the settings refuse (see ``__post_init__``); the message names it.
        """
        return cls(
            geocoding_url=args.geocoding_url,
            forecast_url=args.forecast_url,
            nws_url=args.nws_url,
            air_quality_url=args.air_quality_url,
            marine_url=args.marine_url,
            archive_url=args.archive_url,
            api_key=args.open_meteo_api_key or None,
            user_agent=args.user_agent,
            language=args.language,
            timeout=float(args.timeout),
            retries=int(args.retries),
            backoff=float(args.backoff),
            max_backoff=float(args.max_backoff),
            max_retry_after=float(args.max_retry_after),
            breaker_threshold=int(args.breaker_threshold),
            breaker_cooldown=float(args.breaker_cooldown),
            rate_limit=int(args.rate_limit),
            cache_size=int(args.cache_size),
            geocoding_ttl=float(args.geocoding_ttl),
            current_ttl=float(args.current_ttl),
            forecast_ttl=float(args.forecast_ttl),
            alerts_ttl=float(args.alerts_ttl),
            alerts_poll=float(args.alerts_poll),
            stale_for=float(args.stale_for),
            max_response_bytes=int(args.max_response_bytes),
        )


#: The server's own options by group, each ``(setting, type, help)``. The flag is the setting's name
#: (``max_backoff`` is ``--max-backoff``; ``api_key`` is ``--open-meteo-api-key``).
OPTIONS: dict[str, tuple[tuple[str, type, str], ...]] = {
    "upstream APIs": (
        ("geocoding_url", str, "base URL of the Open-Meteo geocoding API (/v1/search is appended)"),
        (
            "forecast_url",
            str,
            "base URL of the Open-Meteo forecast API (/v1/forecast is appended); a self-hosted Open-Meteo works",
        ),
        ("nws_url", str, "base URL of the National Weather Service API"),
        ("air_quality_url", str, "base URL of the Open-Meteo air quality API (/v1/air-quality is appended)"),
        ("marine_url", str, "base URL of the Open-Meteo marine API (/v1/marine is appended)"),
        ("archive_url", str, "base URL of the Open-Meteo historical weather API (/v1/archive is appended)"),
        (
            "api_key",
            str,
            "Open-Meteo commercial API key (switches the default URLs to the customer- hosts); "
            "prefer the environment variable: a command line is visible to other users",
        ),
        ("user_agent", str, "User-Agent sent upstream; the NWS asks for an application name and a contact address"),
        ("language", str, "language of place names (lower-case code)"),
    ),
    "resilience": (
        ("timeout", float, "seconds per upstream attempt, the whole body included"),
        (
            "max_response_bytes",
            int,
            "largest upstream body read (after decompression); a larger one is an error, never held whole",
        ),
        ("retries", int, "retries after a timeout, 429, 500, 502, 503 or 504 (never after another 4xx)"),
        ("backoff", float, "seconds of backoff before the first retry (doubled for each next one, with full jitter)"),
        ("max_backoff", float, "cap of one backoff, seconds"),
        ("max_retry_after", float, "a longer Retry-After is not waited out: the call fails at once"),
        ("breaker_threshold", int, "consecutive failed attempts that open an upstream's circuit"),
        ("breaker_cooldown", float, "seconds an open circuit refuses calls before one probe is let through"),
        (
            "rate_limit",
            int,
            "requests per minute at most to each upstream, counted across every replica on one --redis (0: no limit)",
        ),
    ),
    "cache": (
        ("cache_size", int, "entries at most (0 disables the cache)"),
        ("geocoding_ttl", float, "seconds a place lookup stays fresh"),
        ("current_ttl", float, "seconds current weather stays fresh"),
        ("forecast_ttl", float, "seconds a forecast stays fresh"),
        ("alerts_ttl", float, "seconds alerts stay fresh"),
        (
            "alerts_poll",
            float,
            "seconds between two polls of an area someone is subscribed to (at least 60 against api.weather.gov)",
        ),
        (
            "stale_for",
            float,
            "seconds past its TTL an answer may still be served, marked stale, while the upstream is down",
        ),
    ),
}


def _flag(field: str) -> str:
    """The command-line option that sets ``field`` (``max_backoff`` is ``--max-backoff``)."""
    return "--open-meteo-api-key" if field == "api_key" else "--" + field.replace("_", "-")
