"""The tools of several connected MCP servers under names a model can use, kept current.

A tool keeps its own name unless two servers offer the same one: then each copy is exposed as
``<server>__<tool>`` (both copies: neither server is preferred silently). Exposed names map one to one to
(server, tool): a namespaced name that another tool already has as its own is numbered (``shop__query_2``),
never shared, and the listing (annotations included) is always that of the tool the name runs. Names the chat APIs would refuse
(characters other than letters, digits, ``_`` and ``-``; longer than 64) are made acceptable, and at most
128 tools are offered. ``notifications/tools/list_changed``
marks a server stale; :meth:`Toolbox.refresh_if_stale` lists its tools again before the next model turn,
and :attr:`Toolbox.version` changes so the caller rebuilds its system prompt and interceptor catalog.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from typing import Any

import anyio
from plainmcp import Client, MCPError, connect_stdio

from .hostile import too_deep
from .servers_config import ServerSpec

logger = logging.getLogger(__name__)

TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
SEPARATOR = "__"
#: The most tools offered to the model (OpenAI-compatible servers refuse more than 128).
MAX_TOOLS = 128
#: The longest function name the chat APIs take.
MAX_NAME = 64
#: What chat APIs accept as a function name (OpenAI's rule; Ollama's is looser).
_SAFE = re.compile(r"[^A-Za-z0-9_-]")
_API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ServerUnavailable(Exception):
    """A server could not be started, reached or listed; the message names it."""

    def __init__(self, name: str, error: BaseException) -> None:
        super().__init__(f"server {name!r}: {error}")
        self.name = name


class Toolbox:
    """Connected servers by name and the tools they offer, as exposed to the model."""

    def __init__(self) -> None:
        self.servers: dict[str, Client] = {}
        self._listings: dict[str, list[dict[str, Any]]] = {}
        self._stale: set[str] = set()
        #: The tool listings the model sees (names possibly namespaced), in server order.
        self.tools: list[dict[str, Any]] = []
        self._routes: dict[str, tuple[str, str]] = {}
        self._by_name: dict[str, dict[str, Any]] = {}
        #: Each server's confirmation policy (see :data:`~plainmcp_bridge.servers_config.CONFIRM_POLICIES`).
        self.confirm_policies: dict[str, str] = {}
        #: Bumped every time :attr:`tools` is rebuilt.
        self.version = 0
        #: Answers a server's ``elicitation/create`` (server name, params) -> result; without one,
        #: every elicitation is declined.
        self.elicitation_handler: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None

    def elicitation_for(self, server: str) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        """The ``elicitation=`` callback to give the server's :class:`Client` (either era)."""

        async def answer(params: dict[str, Any]) -> dict[str, Any]:
            if self.elicitation_handler is None:
                return {"action": "decline"}
            return await self.elicitation_handler(server, params)

        return answer

    def on_notification(self, server: str) -> Callable[[Any], None]:
        """The callback to give the server's :class:`Client` (``on_notification=``)."""

        def noticed(notification: Any) -> None:
            if getattr(notification, "method", None) == TOOLS_LIST_CHANGED:
                logger.info("%s: the tool list changed", server)
                self._stale.add(server)

        return noticed

    async def add(self, name: str, client: Client) -> None:
        """Take a connected server's tools in (listing them now)."""
        self.servers[name] = client
        await self.refresh(name)

    async def refresh(self, server: str | None = None) -> None:
        """List the tools of ``server`` (or of every server) again and rebuild :attr:`tools`."""
        for name in [server] if server is not None else list(self.servers):
            self._stale.discard(name)
            tools = await self.servers[name].list_all_tools()
            self._listings[name] = [
                _bounded_listing(name, tool)
                for tool in tools
                if isinstance(tool, dict) and isinstance(tool.get("name"), str)
            ]
        self._rebuild()

    @property
    def stale(self) -> bool:
        return bool(self._stale)

    async def refresh_if_stale(self) -> bool:
        """Refresh the servers that announced a change; True when anything was refreshed."""
        stale = sorted(self._stale & set(self.servers))
        for name in stale:
            await self.refresh(name)
        return bool(stale)

    def _rebuild(self) -> None:
        owners: dict[str, list[str]] = {}
        for server, tools in self._listings.items():
            for tool in tools:
                owners.setdefault(tool["name"], []).append(server)
        chosen: list[tuple[str, str, dict[str, Any]]] = []  # (server, wanted name, listing)
        seen: set[tuple[str, str]] = set()
        for server, tools in self._listings.items():
            for tool in tools:
                own = tool["name"]
                if (server, own) in seen:  # a server listing one name twice: the first wins
                    continue
                seen.add((server, own))
                if len(chosen) == MAX_TOOLS:
                    logger.warning("more than %d tools: %s's %s and the rest are left out", MAX_TOOLS, server, own)
                    break
                wanted = f"{_SAFE.sub('_', server)}{SEPARATOR}{own}" if len(owners[own]) > 1 else own
                chosen.append((server, wanted, tool))
        # One to one: a tool's own name, unique among all servers and acceptable to the APIs, is kept
        # first; every other name (namespaced or made acceptable) is numbered around the names taken,
        # so a server that offers a tool named "shop__query" can never capture shop's "query".
        routes: dict[str, tuple[str, str]] = {}
        for server, wanted, tool in chosen:
            if wanted == tool["name"] and _API_NAME.fullmatch(wanted):
                routes[wanted] = (server, tool["name"])
        exposed: list[dict[str, Any]] = []
        listings: dict[str, dict[str, Any]] = {}
        for server, wanted, tool in chosen:
            name = wanted
            if routes.get(wanted) != (server, tool["name"]):
                name = _api_name(wanted, routes)
                routes[name] = (server, tool["name"])
            listing = {**tool, "name": name}
            exposed.append(listing)
            listings[name] = listing
        self.tools, self._routes, self._by_name = exposed, routes, listings
        self.version += 1

    def route(self, exposed: str) -> tuple[str, str]:
        """The server and the tool's own name behind an exposed name. Raises KeyError."""
        return self._routes[exposed]

    def listing(self, exposed: str) -> dict[str, Any]:
        """The listing of the tool an exposed name runs (its annotations are the ones that count),
        as the model sees it. Raises KeyError."""
        return self._by_name[exposed]

    async def call(
        self, exposed: str, arguments: dict[str, Any], *, on_progress: Any = None, timeout: float | None = -1
    ) -> dict[str, Any]:
        """Call a tool by its exposed name on the server that has it. Raises KeyError, MCPError."""
        server, name = self.route(exposed)
        return await self.servers[server].call_tool(name, arguments, on_progress=on_progress, timeout=timeout)


def _bounded_listing(server: str, tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` as listed, unless it nests past :data:`~plainmcp_bridge.hostile.MAX_DEPTH` levels: then only
    its name and description, taking any object (the system prompt, the model API's JSON and the
    interceptor all walk a listing recursively). Without its annotations it counts as one that may change
    things: the user is asked."""
    if not too_deep(tool):
        return tool
    logger.warning(
        "%s: the schema of %s is nested too deeply; the tool is offered taking any object", server, tool["name"]
    )
    description = tool.get("description")
    return {
        "name": tool["name"],
        "description": description if isinstance(description, str) else "",
        "inputSchema": {"type": "object"},
    }


def _api_name(name: str, taken: Mapping[str, Any]) -> str:
    """``name`` as the chat APIs accept it (letters, digits, ``_`` and ``-``, at most 64), unique among ``taken``."""
    safe = _SAFE.sub("_", name)[:MAX_NAME] or "tool"
    candidate, number = safe, 1
    while candidate in taken:
        number += 1
        suffix = f"_{number}"
        candidate = safe[: MAX_NAME - len(suffix)] + suffix
    return candidate


@asynccontextmanager
async def open_toolbox(
    specs: Sequence[ServerSpec], *, protocol_version: str = "auto", request_timeout: float = 60.0, stderr: Any = "auto"
) -> AsyncIterator[Toolbox]:
    """Connect to every server in ``specs`` (either era with ``"auto"``: server/discover, falling back to
    initialize), list their tools, and close them all at the end. A server that cannot be started, reached
    or listed raises :class:`ServerUnavailable` naming it; an error of the block comes out as itself, not
    in an exception group."""
    toolbox = Toolbox()
    with _unwrapped():
        async with AsyncExitStack() as stack:
            await _connect_all(stack, toolbox, specs, protocol_version, request_timeout, stderr)
            yield toolbox


@contextmanager
def _unwrapped() -> Iterator[None]:
    try:
        yield
    except BaseExceptionGroup as group:
        # Task groups nest: a single error may sit several groups deep.
        inner: BaseException = group
        while isinstance(inner, BaseExceptionGroup) and len(inner.exceptions) == 1:
            inner = inner.exceptions[0]
        if isinstance(inner, BaseExceptionGroup):
            raise
        raise inner from None


async def _connect_all(
    stack: AsyncExitStack,
    toolbox: Toolbox,
    specs: Sequence[ServerSpec],
    protocol_version: str,
    request_timeout: float,
    stderr: Any,
) -> None:
    for spec in specs:
        options: dict[str, Any] = {
            "protocol_version": protocol_version,
            "on_notification": toolbox.on_notification(spec.name),
            "elicitation": toolbox.elicitation_for(spec.name),
            "request_timeout": request_timeout,
            "client_info": {"name": "plainmcp-bridge", "version": _version()},
        }
        toolbox.confirm_policies[spec.name] = spec.confirm
        try:
            if spec.url is not None:
                from plainmcp.http_client import connect_http

                if spec.oauth is not None and not any(h.lower() == "authorization" for h in spec.headers):
                    options["auth"] = _person_oauth(stack, spec.oauth)
                client = await stack.enter_async_context(
                    connect_http(spec.url, transport=spec.transport, headers=spec.headers or None, **options)
                )
            else:
                env = {**os.environ, **spec.env} if spec.env else None
                client = await stack.enter_async_context(
                    connect_stdio(list(spec.command), env=env, cwd=spec.cwd, stderr=stderr, **options)
                )
            await toolbox.add(spec.name, client)
        except (MCPError, OSError) as error:
            raise ServerUnavailable(spec.name, error) from error
        if client.modern and (client.server_capabilities.get("tools") or {}).get("listChanged"):
            # 2026-07-28 sends list changes only on a listen stream the client opens. The stream's
            # task group is left (cancelled) before its client closes: the exit stack runs backwards.
            listener = await stack.enter_async_context(anyio.create_task_group())
            stack.callback(listener.cancel_scope.cancel)
            # Started (acknowledged) before we go on, so no change made from now on is missed.
            await listener.start(_listen_for_tool_changes, spec.name, client)


def _person_oauth(stack: AsyncExitStack, settings: dict[str, Any]) -> Any:
    """OAuth as ``plainmcp auth login`` does it: the user's token file, the browser and a 127.0.0.1
    redirect (its port released when the bridge ends)."""
    from plainmcp.oauth import OAuth
    from plainmcp.oauth.file_store import FileTokenStore
    from plainmcp.oauth.loopback import LoopbackAuthorizer

    authorizer = LoopbackAuthorizer(open_browser=settings.get("open_browser", True))
    stack.callback(authorizer.close)
    return OAuth(
        store=FileTokenStore(),
        authorizer=authorizer,
        client_id=settings.get("client_id"),
        client_secret=settings.get("client_secret"),
        scopes=settings.get("scopes") or None,
    )


async def _listen_for_tool_changes(name: str, client: Client, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
    """Hold a ``subscriptions/listen`` stream for tool list changes; the client's ``on_notification``
    (the toolbox's) sees each one, so the stream is only drained here. Started once acknowledged."""
    try:
        async with client.listen(tools=True) as subscription:
            task_status.started()
            async for _ in subscription:
                pass
    except (MCPError, TimeoutError) as error:
        logger.warning("%s: cannot listen for tool list changes: %s", name, error)
        task_status.started()


def _version() -> str:
    from . import __version__

    return __version__
