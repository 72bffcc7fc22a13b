"""Wiring: the weather :class:`plainmcp.Server`, its tools answering through a :class:`WeatherService`."""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from plainmcp import Server

from . import __version__, coverage, prompts, reference, tools, views
from .alertwatch import TEMPLATE, AlertWatcher, read_alerts
from .config import Config
from .service import WeatherService

if TYPE_CHECKING:
    import httpx

NAME = "plainmcp-weather"
DESCRIPTION = "Worldwide weather from Open-Meteo and US alerts from the National Weather Service"
INSTRUCTIONS = (
    "Weather for any place on Earth (Open-Meteo) and active US alerts (National Weather Service). "
    'Pass a place name, qualified when ambiguous ("Paris, France", "Portland, OR"), or latitude and '
    "longitude. Every answer says which place it used: check it is the one meant, and look at "
    "'alternatives'. An answer marked stale is an older cached one, served while the upstream is down."
)


@dataclass(frozen=True, slots=True)
class Deps:
    """What the server talks to outside the process: the network and time.

    ``transport`` replaces the network under the server's own httpx client (tests pass an
    ``httpx.MockTransport``); everything above it stays real: the API key added in the transport,
    redirects kept on their upstream, the body cap, the per-attempt deadline. None is the network
    itself (a proxy from ``HTTP(S)_PROXY`` honoured), built on the first call, so that starting the
    server neither imports httpx nor opens anything. ``clock`` is monotonic (TTLs, breakers),
    ``wall`` the Unix time answers report, ``sleep`` waits out a backoff, ``rand`` jitters it.
    """

    transport: httpx.AsyncBaseTransport | None = None
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[Any]] = anyio.sleep
    rand: Callable[[], float] = random.random


def default_deps(config: Config) -> Deps:
    """The real network and clocks (the same whatever ``config`` says: the URLs, key and limits are
    applied above the transport, by the service)."""
    return Deps()


def build_server(config: Config, deps: Deps | None = None) -> Server:
    """The weather server. A pure factory: no network, no client is opened until a tool is called.

    The HTTP client opened then is closed when serving ends (a background task).
    """
    deps = deps or default_deps(config)
    service = WeatherService(
        config, transport=deps.transport, clock=deps.clock, wall=deps.wall, sleep=deps.sleep, rand=deps.rand
    )
    server = Server(
        NAME,
        __version__,
        title="Weather",
        description=DESCRIPTION,
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
    )
    tools.register(server, tools.WeatherTools(service))
    coverage.register(server, coverage.CoverageTools(service))
    _alerts_resource(server, service)
    reference.register(server)
    prompts.register(server)
    views.register(server)  # the forecast chart, for hosts that render MCP Apps
    server.background(AlertWatcher(service, every=config.alerts_poll, clock=deps.clock).run)
    server.background(service.sharing.serve)  # the replicas' state, from server.shared while served
    server.background(service.close_after_serving)
    return server


def _alerts_resource(server: Server, service: WeatherService) -> None:
    """``weather://alerts/{area}``: an area's active NWS alerts, subscribable (see :mod:`.alertwatch`)."""

    async def alerts(ctx: Any, uri: str, variables: dict[str, str]) -> str:
        return await read_alerts(service, uri, variables.get("area", ""))

    server.resource_template(
        TEMPLATE,
        "alerts",
        title="US weather alerts",
        description="Active NWS alerts for a US state or territory code (FL, PR). Subscribe to hear of "
        "each alert issued, updated or expired (polled at most once a minute while subscribed).",
        mime_type="application/json",
    )(alerts)
