"""The server's settings: one frozen value, built from the command line (or directly, in tests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import __version__

GEOCODING_URL = "https://geocoding-api.open-meteo.com"
FORECAST_URL = "https://api.open-meteo.com"
NWS_URL = "https://api.weather.gov"
#: Open-Meteo's commercial plan serves the same API on these hosts, with ``apikey`` on every call.
COMMERCIAL_GEOCODING_URL = "https://customer-geocoding-api.open-meteo.com"
COMMERCIAL_FORECAST_URL = "https://customer-api.open-meteo.com"
#: The largest upstream body accepted, after decoding: Open-Meteo's answers are tens of kilobytes, the
#: NWS's alerts for a state in a busy season a few hundred. A larger one is an error, never held whole.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
#: The NWS asks for an application name and a contact; operators should put their own here.
USER_AGENT = f"plainmcp-weather/{__version__} (+https://pypi.org/project/plainmcp-weather/)"


@dataclass(frozen=True, slots=True)
class WeatherConfig:
    """Every setting, with its default. Times are in seconds.

    ``geocoding_url``, ``forecast_url`` and ``nws_url`` are base URLs: the API paths
    (``/v1/search``, ``/v1/forecast``, ``/points/...``, ``/alerts/active``) are appended, so one
    local stand-in can play all three. With ``api_key`` and the default Open-Meteo URLs, the
    commercial hosts are used instead.
    """

    geocoding_url: str = GEOCODING_URL
    forecast_url: str = FORECAST_URL
    nws_url: str = NWS_URL
    api_key: str | None = None
    user_agent: str = USER_AGENT
    language: str = "en"
    timeout: float = 10.0
    retries: int = 2
    backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 10.0
    breaker_threshold: int = 5
    breaker_cooldown: float = 30.0
    cache_size: int = 1024
    geocoding_ttl: float = 86400.0
    current_ttl: float = 600.0
    forecast_ttl: float = 3600.0
    alerts_ttl: float = 300.0
    stale_for: float = 3600.0
    max_response_bytes: int = MAX_RESPONSE_BYTES

    def __post_init__(self) -> None:
        numbers = {
            "timeout": self.timeout, "backoff": self.backoff, "max_backoff": self.max_backoff,
            "max_retry_after": self.max_retry_after, "breaker_cooldown": self.breaker_cooldown,
            "geocoding_ttl": self.geocoding_ttl, "current_ttl": self.current_ttl,
            "forecast_ttl": self.forecast_ttl, "alerts_ttl": self.alerts_ttl, "stale_for": self.stale_for,
        }
        for name, value in numbers.items():
            if value < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.timeout <= 0:
            raise ValueError("timeout must be > 0")
        if self.max_response_bytes < 1024:
            raise ValueError("max_response_bytes must be at least 1024")
        if self.retries < 0 or self.cache_size < 0:
            raise ValueError("retries and cache_size must be >= 0")
        if self.breaker_threshold < 1:
            raise ValueError("breaker_threshold must be >= 1")
        for name in ("geocoding_url", "forecast_url", "nws_url"):
            url = getattr(self, name)
            if not url.startswith(("http://", "https://")):
                raise ValueError(f"{name} must be an http:// or https:// URL")
            object.__setattr__(self, name, url.rstrip("/"))
        if not self.user_agent.strip():
            raise ValueError("user_agent must not be empty: the NWS refuses requests without one")
        if self.api_key:
            if self.geocoding_url == GEOCODING_URL:
                object.__setattr__(self, "geocoding_url", COMMERCIAL_GEOCODING_URL)
            if self.forecast_url == FORECAST_URL:
                object.__setattr__(self, "forecast_url", COMMERCIAL_FORECAST_URL)

    @classmethod
    def from_args(cls, args: Any) -> WeatherConfig:
        """From the parsed command line of :mod:`plainmcp_weather.__main__`."""
        return cls(
            geocoding_url=args.geocoding_url,
            forecast_url=args.forecast_url,
            nws_url=args.nws_url,
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
            cache_size=int(args.cache_size),
            geocoding_ttl=float(args.geocoding_ttl),
            current_ttl=float(args.current_ttl),
            forecast_ttl=float(args.forecast_ttl),
            alerts_ttl=float(args.alerts_ttl),
            stale_for=float(args.stale_for),
            # The command line may not offer it (yet): the default then.
            max_response_bytes=int(getattr(args, "max_response_bytes", MAX_RESPONSE_BYTES)),
        )
