"""The context a handler receives: who is asking, and what it may do back to the client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import protocol
from .errors import ErrorCode, MCPError

if TYPE_CHECKING:
    from .connection import ServerConnection
    from .server import Server
    from .session import InFlight


class Context:
    """Per-request view of the connection. Handlers get it as their first argument.

    Attributes:
        server: the :class:`~plainmcp.Server` serving the request.
        version: the protocol revision this request is served under.
        client_info: the client's ``Implementation`` object (name, version, ...), possibly empty.
        client_capabilities: the capabilities the client declared.
        request_id: the JSON-RPC id of the request, None outside one.
    """

    __slots__ = ("server", "connection", "call", "version", "client_info", "client_capabilities", "log_threshold")

    def __init__(
        self,
        server: Server,
        connection: ServerConnection | None,
        call: InFlight | None,
        *,
        version: str,
        client_info: dict[str, Any],
        client_capabilities: dict[str, Any],
        log_threshold: int | None,
    ) -> None:
        self.server = server
        self.connection = connection
        self.call = call
        self.version = version
        self.client_info = client_info
        self.client_capabilities = client_capabilities
        self.log_threshold = log_threshold

    @property
    def request_id(self) -> str | int | None:
        return self.call.request.id if self.call is not None else None

    @property
    def meta(self) -> dict[str, Any]:
        """The request's ``_meta`` object (empty when absent)."""
        params = self.call.request.params if self.call is not None else None
        meta = (params or {}).get("_meta")
        return meta if isinstance(meta, dict) else {}

    # ----------------------------------------------------------------------------- notifications

    async def log(self, level: str, data: Any, logger: str | None = None) -> None:
        """Send ``notifications/message`` if the client wants messages of this level."""
        rank = protocol.LOG_LEVEL_RANK[level]  # KeyError for a level the protocol does not have
        if self.log_threshold is None or rank < self.log_threshold or self.connection is None:
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self.connection.session.notify(protocol.MESSAGE, params, related_to=self.request_id)

    async def debug(self, data: Any, logger: str | None = None) -> None:
        await self.log("debug", data, logger)

    async def info(self, data: Any, logger: str | None = None) -> None:
        await self.log("info", data, logger)

    async def warning(self, data: Any, logger: str | None = None) -> None:
        await self.log("warning", data, logger)

    async def error(self, data: Any, logger: str | None = None) -> None:
        await self.log("error", data, logger)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress if the request carried a progress token; values must increase."""
        if self.call is not None:
            await self.call.report_progress(progress, total, message)

    # ----------------------------------------------------------------- publishing (any context)

    async def notify_resource_updated(self, uri: str) -> None:
        await self.server.notify_resource_updated(uri)

    async def notify_resources_changed(self) -> None:
        await self.server.notify_resources_changed()

    async def notify_tools_changed(self) -> None:
        await self.server.notify_tools_changed()

    async def notify_prompts_changed(self) -> None:
        await self.server.notify_prompts_changed()

    # --------------------------------------------------------------------- requests to the client

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared a capability; dotted paths reach nested ones (``sampling.tools``)."""
        node: Any = self.client_capabilities
        for part in capability.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return node is not None and node is not False

    async def _client_request(self, capability: str, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
        if not self.client_supports(capability):
            raise MCPError(
                ErrorCode.INVALID_REQUEST,
                f"This request needs the client's {capability!r} capability, which it did not declare",
                {"requiredCapabilities": _nested(capability)},
            )
        if self.connection is None:
            raise MCPError(ErrorCode.INTERNAL_ERROR, "No connection to send the request on")
        kwargs: dict[str, Any] = {"related_to": self.request_id}
        if timeout is not None:
            kwargs["timeout"] = timeout
        return await self.connection.session.request(method, params, **kwargs)

    async def sample(
        self, messages: list[dict[str, Any]], max_tokens: int, *, timeout: float | None = None, **options: Any
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (``sampling/createMessage``).

        ``options`` are further request fields, spelled as on the wire (``systemPrompt``, ...).
        Raises MCPError when the client lacks the capability, refuses, or times out.
        """
        params = {"messages": messages, "maxTokens": max_tokens, **options}
        return await self._client_request("sampling", protocol.SAMPLING_CREATE_MESSAGE, params, timeout)

    async def elicit(
        self, message: str, requested_schema: dict[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask the user for structured input (``elicitation/create``, form mode)."""
        params = {"message": message, "requestedSchema": requested_schema}
        return await self._client_request("elicitation", protocol.ELICITATION_CREATE, params, timeout)

    async def list_roots(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``)."""
        result = await self._client_request("roots", protocol.ROOTS_LIST, None, timeout)
        roots = result.get("roots") if isinstance(result, dict) else None
        if not isinstance(roots, list):
            raise MCPError(ErrorCode.INTERNAL_ERROR, "The client answered roots/list without a roots list")
        return roots


def _nested(path: str) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for part in reversed(path.split(".")):
        node = {part: node}
    return node
