"""The weather service behind the tools: upstream calls through the cache, stale answers when down.

Every answer is an :class:`Answer`: the value plus when it was fetched and whether it is stale.
A stale answer is served only when the upstream is *unavailable* (timeouts, 5xx, 429, an open
circuit): a refusal (4xx) is the caller's problem and is reported, never papered over.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import anyio

from .cache import TTLCache, cache_key
from .config import Config
from .flight import SingleFlight
from .nws import ACCEPT, NWS
from .openmeteo import QUALIFIED_COUNT, OpenMeteo
from .openmeteo_more import OpenMeteoMore
from .places import PlaceQuery, filter_candidates, label
from .redaction import RedactSecrets, environment_transport, secret_transport
from .resilience import CircuitBreaker, RetryPolicy
from .sharing import Sharing
from .units import Units
from .upstream import CircuitOpen, OnWait, Rejected, Unavailable, Upstream, UpstreamError, Wait

if TYPE_CHECKING:
    import httpx
    from plainmcp import Server

logger = logging.getLogger(__name__)

#: Other same-name places listed next to the one chosen.
MAX_ALTERNATIVES = 5
#: The upstreams: ``(name, label in messages, extra headers, whether requests carry the API key)``; each
#: has its own circuit breaker, and its base URL is the setting ``<name>_url``.
UPSTREAMS: tuple[tuple[str, str, dict[str, str], bool], ...] = (
    ("geocoding", "Open-Meteo geocoding", {}, True),
    ("forecast", "Open-Meteo forecast", {}, True),
    ("nws", "National Weather Service", {"Accept": ACCEPT}, False),
    ("air_quality", "Open-Meteo air quality", {}, True),
    ("marine", "Open-Meteo marine", {}, True),
    ("archive", "Open-Meteo historical weather", {}, True),
)


class NoSuchPlace(LookupError):
    """No place matches a name (and its qualifiers); ``message`` is for the model."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Answer:
    """A value, when it was fetched (Unix time), and whether it came from the cache / is past its TTL."""

    value: Any
    retrieved_at: float
    cached: bool = False
    stale: bool = False


@dataclass(frozen=True, slots=True)
class Resolved:
    """The place a name resolved to, the other places it could have meant, and the lookup's answer."""

    place: dict[str, Any]
    alternatives: list[dict[str, Any]]
    answer: Answer


def new_client(config: Config, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    """The HTTP client: no connection pool bigger than we need, proxies from the environment
    honoured, and the API key (if any) added in the transport, below httpx's request log.

    It follows no redirect: :class:`Upstream` follows those that stay on its upstream. httpx is
    imported here, on the first tool call, so starting the server does not pay for it."""
    import httpx

    limits = httpx.Limits(max_connections=20, max_keepalive_connections=10)
    if config.api_key:
        transport = secret_transport(transport or environment_transport(limits), {"apikey": config.api_key})
    return httpx.AsyncClient(follow_redirects=False, timeout=config.timeout, limits=limits, transport=transport)


class WeatherService:
    """Geocoding, weather and alerts, each cached under its own TTL. See the module docstring."""

    def __init__(
        self,
        config: Config,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[Any]] = anyio.sleep,
        rand: Callable[[], float] = random.random,
    ) -> None:
        """``transport``: the network under the HTTP client (None: the real one, built on first use);
        ``clock`` (monotonic), ``wall`` (Unix time), ``sleep`` and ``rand`` (backoff jitter):
        injectable for tests, as :class:`plainmcp_weather.server.Deps` describes."""
        self.config = config
        self._wall = wall
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        # While a client with a key is open, httpx's and httpcore's log lines are scrubbed of it.
        self._redact = RedactSecrets([config.api_key] if config.api_key else [])
        self.flights = SingleFlight()
        #: What replicas share (answers, flights, breakers, rate limits): see :mod:`.sharing`.
        self.sharing = Sharing(clock)
        self.cache = TTLCache(config.cache_size, stale_for=config.stale_for, clock=clock, wall=wall)
        self.breakers = {
            name: CircuitBreaker(name, config.breaker_threshold, config.breaker_cooldown, clock)
            for name, *_ in UPSTREAMS
        }
        policy = RetryPolicy(config.retries, config.backoff, config.max_backoff, config.max_retry_after)
        client = _LazyClient(self)
        parse_limiter = anyio.CapacityLimiter(1)  # large bodies are parsed one at a time, server-wide
        self.upstreams = {
            name: Upstream(
                label,
                client,
                base_url=getattr(config, f"{name}_url"),
                policy=policy,
                breaker=self.breakers[name],
                timeout=config.timeout,
                max_bytes=config.max_response_bytes,
                headers={"User-Agent": config.user_agent, **headers},
                secrets=secrets,
                parse_limiter=parse_limiter,
                sleep=sleep,
                rand=rand,
                name=name,
                sharing=self.sharing,
                rate_limit=config.rate_limit,
            )
            for name, label, headers, secrets in UPSTREAMS
        }
        self.open_meteo = OpenMeteo(
            self.upstreams["geocoding"],
            self.upstreams["forecast"],
            geocoding_url=config.geocoding_url,
            forecast_url=config.forecast_url,
            language=config.language,
        )
        self.nws = NWS(self.upstreams["nws"], base_url=config.nws_url)
        self.more = OpenMeteoMore(
            self.upstreams["air_quality"],
            self.upstreams["marine"],
            self.upstreams["archive"],
            urls={"air_quality": config.air_quality_url, "marine": config.marine_url, "archive": config.archive_url},
        )

    def now(self) -> float:
        """The current Unix time (the injected wall clock): what "today" and "from now" mean."""
        return self._wall()

    # ------------------------------------------------------------------------------ the client

    def client(self) -> httpx.AsyncClient:
        """The HTTP client, created on first use (building the server does no I/O)."""
        if self._client is None:
            self._client = new_client(self.config, self._transport)
            self._redact.attach()
        return self._client

    async def aclose(self) -> None:
        """Close the HTTP client, if one was opened (a later call opens a new one)."""
        if self._client is not None:
            try:
                await self._client.aclose()
            finally:
                self._redact.detach()
                self._client = None

    async def close_after_serving(self, server: Server) -> None:
        """A :meth:`plainmcp.Server.background` task: nothing to do while ``server`` is served, then
        close the HTTP client (if one was opened) when serving ends."""
        try:
            await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                await self.aclose()

    # --------------------------------------------------------------------------------- caching

    async def _cached(
        self,
        key: tuple[Hashable, ...],
        ttl: float,
        fetch: Callable[[OnWait], Awaitable[Any]],
        watcher: OnWait | None = None,
    ) -> Answer:
        """The fresh cached answer for ``key``, or ``fetch(on_wait)`` (shared by every concurrent caller
        for the same key: the upstream sees one request), or a stale one when the upstream is unavailable.

        ``watcher`` hears each wait for a retry while this caller waits for the fetch, whether it
        started the fetch or joined one under way (see :class:`.flight.SingleFlight`)."""
        hit = self.cache.get(key)
        if hit is not None:
            return Answer(hit.value, hit.stored_at, cached=True)
        name = shared_name(key)
        fetched_here = False

        async def tell_every_caller(wait: Wait) -> None:
            await self.flights.announce(key, wait)
            await self.sharing.tell_replicas(name, asdict(wait))  # and those waiting on other replicas

        async def told_by_a_replica(wait: dict[str, Any]) -> None:
            try:
                await self.flights.announce(key, Wait(**wait))
            except TypeError:
                logger.debug("a wait from another replica was not understood")

        async def fetch_for_the_replicas() -> Any:
            # Run by one replica at a time: the one before may have stored the answer just now.
            theirs = await self.sharing.get(name)
            if theirs is not None and theirs.fresh(self._wall()):
                return {"v": theirs.value, "at": theirs.stored_at}
            nonlocal fetched_here
            value = await fetch(tell_every_caller)
            fetched_here = True
            if self.config.cache_size:  # 0 disables the cache, the shared one too
                await self.sharing.put(name, value, ttl, self.config.stale_for)
            return {"v": value, "at": self._wall()}

        async def fetch_and_keep() -> tuple[Any, float, bool]:
            theirs = await self.sharing.get(name)
            if theirs is None or not theirs.fresh(self._wall()):
                got = await self.sharing.flight(
                    name,
                    fetch_for_the_replicas,
                    hold=self._flight_hold(),
                    listener=told_by_a_replica,
                    encode_error=encode,
                    decode_error=decode,
                )
                value, stored_at = got["v"], float(got["at"])
            else:
                value, stored_at = theirs.value, theirs.stored_at
            left = ttl if fetched_here else ttl - max(0.0, self._wall() - stored_at)
            self.cache.put(key, value, left, stored_at=stored_at)
            return value, stored_at, not fetched_here

        try:
            value, retrieved_at, cached = await self.flights.run(key, fetch_and_keep, watcher)
        except Unavailable:
            old = self.cache.get_stale(key)
            if old is not None:
                logger.warning("serving a stale answer for %s (upstream unavailable)", key[0])
                return Answer(old.value, old.stored_at, cached=True, stale=old.stale)
            theirs = await self.sharing.get(name)
            if theirs is None:
                raise
            logger.warning("serving another replica's stale answer for %s (upstream unavailable)", key[0])
            return Answer(theirs.value, theirs.stored_at, cached=True, stale=not theirs.fresh(self._wall()))
        return Answer(value, retrieved_at, cached=cached)

    def _flight_hold(self) -> float:
        """The longest a fetch may take, its retries' waits included: past it, the replicas waiting on
        a fetch under way elsewhere take it that its replica died, and fetch themselves."""
        config = self.config
        waits = config.retries * max(config.max_backoff, config.max_retry_after)
        return config.timeout * (config.retries + 1) + waits + 5.0

    # ------------------------------------------------------------------------------- answers

    async def search(
        self, query: PlaceQuery, count: int, country: str | None = None, watcher: OnWait | None = None
    ) -> Answer:
        """Places matching ``query`` (qualifiers applied), at most ``count``, exact names first.
        ``watcher``, here and in the other answers: told of each wait for a retry (see :meth:`_cached`)."""
        fetch_count = QUALIFIED_COUNT if query.qualifiers else max(count, 10)
        key = cache_key("geocoding", name=query.name, count=fetch_count, country=country, language=self.config.language)
        answer = await self._cached(
            key,
            self.config.geocoding_ttl,
            lambda on_wait: self.open_meteo.search(query.name, fetch_count, country, on_wait),
            watcher,
        )
        found = filter_candidates(answer.value, query)
        exact = query.name.casefold()
        found.sort(key=lambda place: place["name"].casefold() != exact)  # stable: upstream order within
        return Answer(found[:count], answer.retrieved_at, answer.cached, answer.stale)

    async def resolve(self, query: PlaceQuery, watcher: OnWait | None = None) -> Resolved:
        """The best place for a name: the most populous exact match of its qualifiers.

        Raises:
            NoSuchPlace: nothing matches.
            UpstreamError: the lookup failed (and nothing cached could stand in).
        """
        answer = await self.search(query, MAX_ALTERNATIVES + 1, watcher=watcher)
        places = answer.value
        if not places:
            if query.qualifiers:
                raise NoSuchPlace(
                    f"No place named {query.name!r} matches {', '.join(query.qualifiers)!r}. Check the "
                    "qualifier (a country, or a region such as a US state code), or search_locations "
                    f"for {query.name!r} to see the candidates."
                )
            raise NoSuchPlace(
                f"No place named {query.name!r} was found. Check the spelling, try the name in English "
                "or a nearby larger town, or give latitude and longitude."
            )
        best, others = places[0], places[1:]
        same_name = [place for place in others if place["name"].casefold() == best["name"].casefold()]
        logger.debug("%r resolved to %s", query.text, label(best))
        return Resolved(best, same_name, answer)

    async def weather(
        self,
        latitude: float,
        longitude: float,
        units: Units,
        *,
        current: bool = False,
        days: int = 0,
        hourly: bool = False,
        watcher: OnWait | None = None,
    ) -> Answer:
        ttl = self.config.current_ttl if current else self.config.forecast_ttl
        key = cache_key(
            "weather",
            latitude=latitude,
            longitude=longitude,
            units=(units.temperature, units.wind_speed, units.precipitation),
            current=current,
            days=days,
            hourly=hourly,
        )
        return await self._cached(
            key,
            ttl,
            lambda on_wait: self.open_meteo.weather(
                latitude, longitude, units, current=current, days=days, hourly=hourly, on_wait=on_wait
            ),
            watcher,
        )

    async def air_quality(self, latitude: float, longitude: float, watcher: OnWait | None = None) -> Answer:
        """Air quality now (fresh as long as current weather)."""
        key = cache_key("air-quality", latitude=latitude, longitude=longitude)
        return await self._cached(
            key, self.config.current_ttl, lambda on_wait: self.more.air_quality(latitude, longitude, on_wait), watcher
        )

    async def marine(self, latitude: float, longitude: float, days: int, watcher: OnWait | None = None) -> Answer:
        """The sea state now and ``days`` of daily maxima (fresh as long as a forecast)."""
        key = cache_key("marine", latitude=latitude, longitude=longitude, days=days)
        return await self._cached(
            key, self.config.forecast_ttl, lambda on_wait: self.more.marine(latitude, longitude, days, on_wait), watcher
        )

    async def archive(
        self, latitude: float, longitude: float, start: str, end: str, units: Units, watcher: OnWait | None = None
    ) -> Answer:
        """Past daily weather (the past changes little: fresh as long as a place lookup)."""
        key = cache_key(
            "archive",
            latitude=latitude,
            longitude=longitude,
            start=start,
            end=end,
            units=(units.temperature, units.wind_speed, units.precipitation),
        )
        return await self._cached(
            key,
            self.config.geocoding_ttl,
            lambda on_wait: self.more.archive(latitude, longitude, start, end, units, on_wait),
            watcher,
        )

    async def nws_forecast(self, grid: list[Any], *, hourly: bool, units: str, watcher: OnWait | None = None) -> Answer:
        """The NWS forecast (named periods, or hours) for a grid cell from :meth:`point`."""
        key = cache_key("nws-forecast", grid=tuple(grid), hourly=hourly, units=units)
        return await self._cached(
            key,
            self.config.forecast_ttl,
            lambda on_wait: self.nws.forecast(grid, hourly=hourly, units=units, on_wait=on_wait),
            watcher,
        )

    def remember_alerts(self, area: str, value: dict[str, Any]) -> None:
        """Keep an area's alerts fetched outside :meth:`alerts` (by the subscription poller) as its answer."""
        key = cache_key("nws-alerts", area=area, latitude=None, longitude=None)
        self.cache.put(key, value, self.config.alerts_ttl)

    async def point(self, latitude: float, longitude: float, watcher: OnWait | None = None) -> Answer:
        """Which US state a point is in (OutsideCoverage when none); cached like geocoding."""
        key = cache_key("nws-point", latitude=latitude, longitude=longitude)
        return await self._cached(
            key, self.config.geocoding_ttl, lambda on_wait: self.nws.point(latitude, longitude, on_wait), watcher
        )

    async def alerts(
        self,
        *,
        area: str | None = None,
        latitude: float | None = None,
        longitude: float | None = None,
        watcher: OnWait | None = None,
    ) -> Answer:
        key = cache_key("nws-alerts", area=area, latitude=latitude, longitude=longitude)
        return await self._cached(
            key,
            self.config.alerts_ttl,
            lambda on_wait: self.nws.alerts(area=area, latitude=latitude, longitude=longitude, on_wait=on_wait),
            watcher,
        )


def shared_name(key: tuple[Hashable, ...]) -> str:
    """The name of a cache key in the replicas' shared layer (the same on every replica)."""
    return json.dumps(key, separators=(",", ":"), ensure_ascii=False)


def encode(error: Exception) -> dict[str, Any] | None:
    """An upstream failure as the replicas waiting on this fetch raise it again (others: not shared)."""
    if isinstance(error, Rejected):
        return {"kind": "rejected", "message": error.message, "status": error.status}
    if isinstance(error, UpstreamError):
        kind = (
            "open" if isinstance(error, CircuitOpen) else "unavailable" if isinstance(error, Unavailable) else "error"
        )
        return {"kind": kind, "message": error.message}
    return None


def decode(shared: dict[str, Any]) -> Exception:
    """The failure :func:`encode` shared, raised on another replica."""
    message = str(shared.get("message", "The upstream service failed."))
    kind = shared.get("kind")
    if kind == "rejected":
        return Rejected(message, int(shared.get("status", 400)))
    if kind == "open":
        return CircuitOpen(message)
    return Unavailable(message) if kind == "unavailable" else UpstreamError(message)


class _LazyClient:
    """Stands in for the httpx client until the first request, so building the server opens nothing."""

    def __init__(self, service: WeatherService) -> None:
        self._service = service

    def build_request(self, method: str, url: str, **kwargs: Any) -> httpx.Request:
        return self._service.client().build_request(method, url, **kwargs)

    async def send(self, request: httpx.Request, **kwargs: Any) -> httpx.Response:
        return await self._service.client().send(request, **kwargs)
