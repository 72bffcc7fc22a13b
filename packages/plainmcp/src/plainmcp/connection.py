"""One client connection to a server: the session, and the era router in front of two dispatchers.

The era is chosen per request, as the 2026-07-28 versioning page says: a request carrying the
modern ``_meta`` envelope (or naming a modern-only method) goes to the stateless
:class:`~plainmcp.modern.ModernDispatcher`; anything else to this connection's
:class:`~plainmcp.legacy.LegacyLifecycle`. The two do not know each other: both eras may be served
on one connection at once, and a modern request neither needs nor changes the legacy state.

Serving a :class:`~plainmcp.Server` is this free-standing class: ``await ServerConnection(server,
read_stream, write_stream).run()``. Transports create one per client (or per exchange).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .envelope import is_modern_request
from .legacy import LegacyLifecycle
from .modern import ModernDispatcher
from .session import Session

if TYPE_CHECKING:
    from anyio.abc import ObjectReceiveStream, ObjectSendStream

    from .jsonrpc import Decoded, Notification, Request, RequestId
    from .server import Server
    from .session import InFlight, Outbound


class ServerConnection:
    """Serves ``server`` to one client over a pair of streams; ``await run()``.

    It is the session's handler (routing each request to its era's dispatcher), the
    :class:`~plainmcp.peer.Peer` handlers reach as ``ctx.connection``, and a subscriber of the
    server's notifications (passed on as the legacy client asked).
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
        self._legacy: LegacyLifecycle | None = None
        self.modern = ModernDispatcher(server, self)

    @property
    def legacy(self) -> LegacyLifecycle:
        """The legacy era's state, made at its first use: a 2026-07-28 exchange never needs it."""
        if self._legacy is None:
            self._legacy = LegacyLifecycle(self.server, self, self.session.spawn)
        return self._legacy

    async def run(self) -> None:
        """Serve until the client's input ends (plus the session's grace period)."""
        self.server.bus.attach(self)
        try:
            await self.session.run()
        finally:
            self.server.bus.detach(self)
            if self._legacy is not None:
                self._legacy.tasks.end()  # a legacy task belongs to its connection

    @property
    def version(self) -> str | None:
        """The legacy revision ``initialize`` agreed on (None before, and for modern clients)."""
        return self._legacy.version if self._legacy is not None else None

    @property
    def subscribed_uris(self) -> set[str]:
        return self._legacy.subscriptions if self._legacy is not None else set()

    # ------------------------------------------------------------------------------ Handler API

    def accepts_batches(self) -> bool:
        return self._legacy is not None and self._legacy.accepts_batches()

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        if is_modern_request(request):
            return await self.modern.handle(request, call)
        return await self.legacy.handle(request, call)

    async def handle_notification(self, notification: Notification) -> None:
        await self.legacy.handle_notification(notification)  # the modern era defines none

    # --------------------------------------------------------------------------------- Peer API

    @property
    def closed(self) -> bool:
        return self.session.closed

    async def wait_closed(self) -> None:
        await self.session.input_ended.wait()

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related_to: RequestId | None = None
    ) -> None:
        await self.session.notify(method, params, related_to=related_to)

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = -1,
        related_to: RequestId | None = None,
    ) -> Any:
        return await self.session.request(method, params, timeout=timeout, related_to=related_to)

    # ----------------------------------------------------------------------------- Subscriber API

    async def deliver(self, method: str, params: dict[str, Any] | None) -> None:
        """Pass a published notification on, if this client finished initializing and asked for it."""
        if self.session.closed or not self.legacy.wants(method, params):
            return
        await self.session.notify(method, params)
