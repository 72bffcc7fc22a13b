"""The small interfaces between the server's layers: the client end a context talks to, and what a
transport attaches to one incoming call.

- :class:`Peer` is what a :class:`~plainmcp.Context` and the dispatchers need of the connection
  they serve: send a notification or a request to the client, and know when it has gone.
  :class:`~plainmcp.connection.ServerConnection` is one; a test may pass its own.
- :class:`CallExtras` is the one per-call object a transport fills and the session carries without
  looking inside (``InFlight.extras``): the id the transport traces the call by (``X-Request-ID``
  over HTTP), a way to end the call's response stream early, and the 2026-07-28 envelope when the
  transport has parsed it already. Over stdio there is none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .envelope import Envelope
    from .jsonrpc import RequestId


class Peer(Protocol):
    """The client end of one connection, as the server's handlers reach it."""

    @property
    def closed(self) -> bool:
        """True once the client's input has ended."""

    async def wait_closed(self) -> None:
        """Return once the client's input has ended."""

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related_to: RequestId | None = None
    ) -> None:
        """Send a notification, tied to the incoming request ``related_to`` when there is one."""

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = -1,
        related_to: RequestId | None = None,
    ) -> Any:
        """Send a request and return its result (see :meth:`plainmcp.session.Session.request`)."""


class CallExtras:
    """What a transport attaches to one incoming request (opaque to the session).

    Attributes:
        trace_id: the id the transport traces this call by: the ``X-Request-ID`` of the HTTP request.
        close_stream: ends this call's response stream now, where it has one (legacy Streamable HTTP).
        envelope: the request's 2026-07-28 envelope, already parsed (and checked for shape) by the
            transport.
        principal: who sent the request, as the transport's authentication says (None without
            one): the owner of the tasks it creates.
        client_address: the peer's network address (the HTTP client's host), where the transport
            has one: without a principal, whose quota of tasks the request's tasks take.
    """

    # A plain class, not a dataclass: making a dataclass costs every process's start-up ~0.3 ms.
    __slots__ = ("trace_id", "close_stream", "envelope", "principal", "client_address")

    def __init__(
        self,
        trace_id: str | None = None,
        close_stream: Callable[[], bool] | None = None,
        envelope: Envelope | None = None,
        principal: str | None = None,
        client_address: str | None = None,
    ) -> None:
        self.trace_id = trace_id
        self.close_stream = close_stream
        self.envelope = envelope
        self.principal = principal
        self.client_address = client_address


def extras_of(extras: object) -> CallExtras | None:
    """``extras`` if a transport attached :class:`CallExtras`, else None."""
    return extras if isinstance(extras, CallExtras) else None
