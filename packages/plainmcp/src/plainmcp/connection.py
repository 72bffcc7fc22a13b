"""One client connection to a server: the lifecycle layer between the session and the features.

The era is chosen per request, as the 2026-07-28 versioning page says: a request carrying the
modern ``_meta`` envelope is served statelessly by ``modern.py``; anything else follows the legacy
lifecycle (``initialize`` first, then the features at the negotiated revision), whose state lives
here, scoped to this connection. Both eras may be served on one connection at once (the versioning
page allows it): a modern request neither needs nor changes the legacy state.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from . import protocol
from .context import Context
from .errors import ErrorCode, MCPError, method_not_found
from .handlers import FEATURE_METHODS, LEGACY_METHODS, METHOD_CAPABILITY
from .jsonrpc import Notification, Request
from .modern import ModernDispatcher, is_modern_request
from .session import InFlight, Session
from .subscriptions import any_covers
from .versions import allows_batches, negotiate_legacy

if TYPE_CHECKING:
    from anyio.abc import ObjectReceiveStream, ObjectSendStream

    from .jsonrpc import Decoded
    from .server import Server
    from .session import Outbound

logger = logging.getLogger(__name__)

_LEGACY_TABLE = {**FEATURE_METHODS, **LEGACY_METHODS}


class ServerConnection:
    """Serves one client. Create with :meth:`Server.connect`, then ``await run()``.

    Attributes (legacy era, set by ``initialize``):
        version: the negotiated revision, None before ``initialize``.
        client_info, client_capabilities: what the client said about itself.
        log_threshold: rank of the lowest level sent as ``notifications/message``.
        subscriptions: URIs this client subscribed to.
    """

    def __init__(
        self,
        server: Server,
        read_stream: ObjectReceiveStream[Decoded],
        write_stream: ObjectSendStream[Outbound],
        **session_options: Any,
    ) -> None:
        self.server = server
        self.session = Session(read_stream, write_stream, self, **session_options)
        self.version: str | None = None
        self.ready = False
        self.client_info: dict[str, Any] = {}
        self.client_capabilities: dict[str, Any] = {}
        self.log_threshold = 0
        self.subscriptions: set[str] = set()
        self._modern = ModernDispatcher(self)
        #: Set by transports whose responses are streams that can be closed early (legacy
        #: Streamable HTTP): an object with ``close_stream(request_id) -> bool``.
        self.stream_control: Any = None

    async def run(self) -> None:
        """Serve until the client's input ends (plus the session's grace period)."""
        self.server.bus.attach(self)
        try:
            await self.session.run()
        finally:
            self.server.bus.detach(self)

    @property
    def subscribed_uris(self) -> set[str]:
        return self.subscriptions

    # ------------------------------------------------------------------------------ Handler API

    def accepts_batches(self) -> bool:
        return self.version is not None and allows_batches(self.version)

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        if is_modern_request(request):
            return await self._modern.handle(request, call)
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
        handler = _LEGACY_TABLE.get(method)
        capability = METHOD_CAPABILITY.get(method)
        if handler is None or (capability is not None and capability not in self.server.capabilities()):
            raise method_not_found(method)
        return await handler(self.context(call), params)

    async def handle_notification(self, notification: Notification) -> None:
        if notification.method == protocol.INITIALIZED:
            self.ready = self.version is not None
        elif notification.method == protocol.ROOTS_LIST_CHANGED:
            if self.server.on_roots_changed is not None and self.version is not None:
                self.session.spawn(self.server.on_roots_changed, self)
        else:
            logger.debug("ignored notification %s", notification.method)

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
        logger.info(
            "initialized: client %s %s, protocol %s",
            client_info.get("name"), client_info.get("version"), self.version,
        )
        return result

    def context(self, call: InFlight | None = None) -> Context:
        """A handler context for this connection; ``call`` is the request being served, if any."""
        return Context(
            self.server,
            self,
            call,
            version=self.version or "",
            client_info=self.client_info,
            client_capabilities=self.client_capabilities,
            log_threshold=self.log_threshold,
        )

    # ----------------------------------------------------------------------------- Subscriber API

    async def deliver(self, method: str, params: dict[str, Any] | None) -> None:
        """Pass a published notification on, if this client finished initializing and asked for it."""
        if not self.ready or self.session.closed:
            return
        if method == protocol.RESOURCE_UPDATED and not any_covers(self.subscriptions, (params or {}).get("uri", "")):
            return
        await self.session.notify(method, params)
