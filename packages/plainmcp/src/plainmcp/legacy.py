"""The legacy era's lifecycle (2024-11-05 .. 2025-11-25) on one connection.

``initialize`` comes first and fixes the revision; the features are then served at that revision,
and what the client said about itself (its capabilities, its log level, its resource
subscriptions) is state of this connection, kept here. The methods only this era has
(``resources/subscribe``, ``resources/unsubscribe``, ``logging/setLevel``) live here too, since all
they do is change that state. This module knows nothing of the 2026-07-28 dispatcher.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from . import protocol
from .context import Context
from .errors import ErrorCode, MCPError, invalid_params, method_not_found
from .handlers import FEATURE_METHODS, METHOD_CAPABILITY, subscription_uri
from .legacy_tasks import CAPABILITY as TASKS_CAPABILITY
from .legacy_tasks import LEGACY_TASK_METHODS, LegacyTasks
from .subscriptions import any_covers
from .versions import V2025_11_25, allows_batches, at_least, negotiate_legacy

if TYPE_CHECKING:
    from .jsonrpc import Notification, Request
    from .peer import Peer
    from .server import Server
    from .session import InFlight

logger = logging.getLogger(__name__)


class LegacyLifecycle:
    """Serves the legacy requests and notifications of one connection.

    Attributes (set by ``initialize``):
        version: the negotiated revision, None before ``initialize``.
        ready: True once the client sent ``notifications/initialized``.
        client_info, client_capabilities: what the client said about itself.
        log_threshold: rank of the lowest level sent as ``notifications/message``.
        subscriptions: URIs this client subscribed to.
    """

    def __init__(self, server: Server, peer: Peer, spawn: Callable[..., None]) -> None:
        self.server = server
        self.peer = peer
        self._spawn = spawn
        self.version: str | None = None
        self.ready = False
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.log_threshold = 0
        self.subscriptions: set[str] = set()
        self.tasks = LegacyTasks(server, peer, spawn)

    def accepts_batches(self) -> bool:
        return self.version is not None and allows_batches(self.version)

    async def handle(self, request: Request, call: InFlight) -> Any:
        """The result of one legacy request. Raises MCPError."""
        params = request.params or {}
        method = request.method
        if method == protocol.INITIALIZE:
            return self._initialize(params)
        if method == protocol.PING:
            return {}
        if self.version is None:
            raise MCPError(
                ErrorCode.INVALID_REQUEST, "Invalid Request: the session is not initialized; send initialize first"
            )
        capability = METHOD_CAPABILITY.get(method)
        if capability is not None and not self.server.offers(capability):
            raise method_not_found(method)
        own = _LEGACY_ONLY.get(method)
        if own is not None:
            return await own(self, self.context(call), params)
        if method in LEGACY_TASK_METHODS and self._has_tasks():
            return await self.tasks.handle(method, params)
        handler = FEATURE_METHODS.get(method)
        if handler is None:
            extension = self.server.methods.get(method)
            if extension is None:
                raise method_not_found(method)
            return await extension.handler(self.context(call), params)
        if method == protocol.TOOLS_CALL and self._has_tasks():
            return await self.tasks.call_tool(self.context(call), params, handler, self._task_context)
        return await handler(self.context(call), params)

    def _has_tasks(self) -> bool:
        """Tasks v1 exist from 2025-11-25 on, on a server with a tool that supports them."""
        return (
            self.version is not None
            and at_least(self.version, V2025_11_25)
            and any(tool.task_support != "forbidden" for tool in self.server.tools.values())
        )

    def _task_context(self, task_id: str) -> Context:
        context = self.context()
        context.task_id = task_id
        return context

    async def handle_notification(self, notification: Notification) -> None:
        if notification.method == protocol.INITIALIZED:
            self.ready = self.version is not None
        elif notification.method == protocol.ROOTS_LIST_CHANGED:
            if self.server.on_roots_changed is not None and self.version is not None:
                self._spawn(self.server.on_roots_changed, self.peer)
        else:
            logger.debug("ignored notification %s", notification.method)

    def wants(self, method: str, params: dict[str, Any] | None) -> bool:
        """Whether a published notification goes to this client: once it finished initializing,
        and for a resource update only when it subscribed to that URI."""
        if not self.ready:
            return False
        return method != protocol.RESOURCE_UPDATED or any_covers(self.subscriptions, (params or {}).get("uri", ""))

    def context(self, call: InFlight | None = None) -> Context:
        """A handler context for this connection; ``call`` is the request being served, if any."""
        return Context(
            self.server,
            self.peer,
            call,
            version=self.version or "",
            client_info=self.client_info,
            client_capabilities=self.client_capabilities,
            log_threshold=self.log_threshold,
        )

    # -------------------------------------------------------------------------------- lifecycle

    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        if self.version is not None:
            raise MCPError(ErrorCode.INVALID_REQUEST, "Invalid Request: the session is already initialized")
        capabilities, client_info = params.get("capabilities"), params.get("clientInfo")
        if not isinstance(params.get("protocolVersion"), str):
            raise MCPError(ErrorCode.INVALID_PARAMS, '"protocolVersion" must be a string')
        if not isinstance(capabilities, dict) or not isinstance(client_info, dict):
            raise MCPError(ErrorCode.INVALID_PARAMS, '"capabilities" and "clientInfo" must be objects')
        self.version = negotiate_legacy(params["protocolVersion"])
        self.client_capabilities = capabilities
        self.client_info = client_info
        result: dict[str, Any] = {
            "protocolVersion": self.version,
            "capabilities": self.server.capabilities(),
            "serverInfo": self.server.server_info(),
        }
        if self.server.instructions is not None:
            result["instructions"] = self.server.instructions
        if self._has_tasks():
            result["capabilities"]["tasks"] = TASKS_CAPABILITY
        logger.info(
            "initialized: client %s %s, protocol %s",
            client_info.get("name"),
            client_info.get("version"),
            self.version,
        )
        return result

    # ------------------------------------------------------------- the methods only this era has

    async def _subscribe(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        uri = subscription_uri(ctx, params)
        self.subscriptions.add(uri)
        self.server.bus.changed()
        await self.server.subscribed(frozenset({uri}))  # e.g. until a file watcher covers it
        return {}

    async def _unsubscribe(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        self.subscriptions.discard(subscription_uri(ctx, params))
        self.server.bus.changed()
        return {}

    async def _set_level(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        level = params.get("level")
        if not isinstance(level, str) or level not in protocol.LOG_LEVEL_RANK:
            raise invalid_params(f"Invalid log level: {level!r:.60}; use one of {', '.join(protocol.LOG_LEVELS)}")
        self.log_threshold = protocol.LOG_LEVEL_RANK[level]
        return {}


_LegacyMethod = Callable[[LegacyLifecycle, Context, dict[str, Any]], Awaitable[dict[str, Any]]]

#: Methods of the legacy revisions only (removed in 2026-07-28), by name.
_LEGACY_ONLY: dict[str, _LegacyMethod] = {
    protocol.RESOURCES_SUBSCRIBE: LegacyLifecycle._subscribe,
    protocol.RESOURCES_UNSUBSCRIBE: LegacyLifecycle._unsubscribe,
    protocol.LOGGING_SET_LEVEL: LegacyLifecycle._set_level,
}
