"""The context a handler receives: who is asking, and what it may do back to the client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio

from . import inputs, protocol
from .errors import ErrorCode, MCPError
from .inputs import InputRequest, InputRound
from .peer import extras_of
from .tasks import StartTask
from .versions import V2025_11_25, at_least, is_modern

if TYPE_CHECKING:
    from .peer import Peer
    from .server import Server
    from .session import InFlight


class Context:
    """Per-request view of the connection. Handlers get it as their first argument.

    Attributes:
        server: the :class:`~plainmcp.Server` serving the request.
        connection: the client end of the connection (a :class:`~plainmcp.peer.Peer`; the same
            object for every request of one legacy connection), None outside one.
        version: the protocol revision this request is served under.
        client_info: the client's ``Implementation`` object (name, version, ...), possibly empty.
        client_capabilities: the capabilities the client declared.
        request_id: the JSON-RPC id of the request, None outside one.
    """

    __slots__ = (
        "server",
        "connection",
        "call",
        "version",
        "client_info",
        "client_capabilities",
        "log_threshold",
        "inputs",
        "task_id",
        "_asked",
        "may_start_task",
    )

    def __init__(
        self,
        server: Server,
        connection: Peer | None,
        call: InFlight | None,
        *,
        version: str,
        client_info: dict[str, Any],
        client_capabilities: dict[str, Any],
        log_threshold: int | None,
        inputs: InputRound | None = None,
        task_id: str | None = None,
    ) -> None:
        self.server = server
        self.connection = connection
        self.call = call
        self.version = version
        self.client_info = client_info
        self.client_capabilities = client_capabilities
        self.log_threshold = log_threshold
        self.inputs = inputs
        #: The task this handler runs as (2026-07-28 tasks extension), else None.
        self.task_id = task_id
        self._asked: dict[str, int] = {}
        #: Set by the 2026-07-28 dispatcher when this call may become a task (see start_task).
        self.may_start_task = False

    @property
    def request_id(self) -> str | int | None:
        return self.call.request.id if self.call is not None else None

    @property
    def http_request_id(self) -> str | None:
        """The ``X-Request-ID`` of the HTTP request that carried this call (the client's, or one
        the server minted; None over stdio). Send it upstream to trace one call end to end."""
        extras = extras_of(self.call.extras) if self.call is not None else None
        return extras.trace_id if extras is not None else None

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
        await self.connection.notify(protocol.MESSAGE, params, related_to=self.request_id)

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

    def close_sse_stream(self) -> bool:
        """End this request's SSE response now, where the transport has one (legacy Streamable
        HTTP, 2025-11-25): the client reconnects with ``Last-Event-ID`` after the advised retry
        delay and receives the rest of the messages (SSE polling, SEP-1699). False elsewhere."""
        extras = extras_of(self.call.extras) if self.call is not None else None
        if extras is None or extras.close_stream is None:
            return False
        return bool(extras.close_stream())

    # ----------------------------------------------------------------- publishing (any context)

    async def notify_resource_updated(self, uri: str) -> None:
        await self.server.notify_resource_updated(uri)

    async def notify_resources_changed(self) -> None:
        await self.server.notify_resources_changed()

    async def notify_tools_changed(self) -> None:
        await self.server.notify_tools_changed()

    async def notify_prompts_changed(self) -> None:
        await self.server.notify_prompts_changed()

    # ----------------------------------------------------------------------- input from the client

    def client_supports(self, capability: str) -> bool:
        """Whether the client declared a capability; dotted paths reach nested ones (``sampling.tools``)."""
        node: Any = self.client_capabilities
        for part in capability.split("."):
            if not isinstance(node, dict) or part not in node:
                return False
            node = node[part]
        return node is not None and node is not False

    def client_extension(self, identifier: str) -> dict[str, Any] | None:
        """The settings the client declared for an extension (``capabilities.extensions``), or None
        when it did not declare it (then serve exactly what a client without it expects)."""
        extensions = self.client_capabilities.get("extensions")
        settings = extensions.get(identifier) if isinstance(extensions, dict) else None
        return settings if isinstance(settings, dict) else None

    @property
    def state(self) -> dict[str, Any]:
        """Handler data kept across the rounds of a modern multi-round request (JSON values only).

        Signed into ``requestState``: the client carries it and cannot change it, but can read it,
        so keep secrets out of it. In the legacy era there is one round, and this is a fresh dict.
        """
        if self.inputs is None:
            self.inputs = InputRound({}, {})
        return self.inputs.state

    async def ask(self, requests: dict[str, InputRequest], *, timeout: float | None = None) -> dict[str, Any]:
        """Get input from the client, in either era; returns the results by key.

        Build requests with :func:`plainmcp.inputs.elicitation`, ``sampling`` and ``roots``. Legacy:
        sent to the client as requests, concurrently. 2026-07-28: answered through an
        ``input_required`` round trip (the handler runs again, and this call then returns).

        Raises:
            MCPError: the client did not declare a needed capability (-32021 in 2026-07-28).
            RequestFailed: legacy only, the client refused a request or did not answer in time.
        """
        missing = sorted({r.capability for r in requests.values() if not self.client_supports(r.capability)})
        if missing:
            raise self._missing_capabilities(missing)
        if is_modern(self.version):
            if self.inputs is None or (self.call is None and self.task_id is None):
                raise MCPError(
                    ErrorCode.INTERNAL_ERROR,
                    "Input can be requested only by tools/call, prompts/get and resources/read",
                )
            return self.inputs.answers_for(requests)
        return await self._ask_legacy(requests, timeout)

    async def _ask_legacy(self, requests: dict[str, InputRequest], timeout: float | None) -> dict[str, Any]:
        if self.connection is None:
            raise MCPError(ErrorCode.INTERNAL_ERROR, "No connection to send the request on")
        peer = self.connection
        results: dict[str, Any] = {}
        failures: list[BaseException] = []

        async def fetch(key: str, request: InputRequest) -> None:
            params = dict(request.params)
            if request.method == protocol.ELICITATION_CREATE and not at_least(self.version, V2025_11_25):
                params.pop("mode", None)  # "mode" arrived with URL elicitation in 2025-11-25
            try:
                results[key] = await peer.request(
                    request.method,
                    params or None,
                    related_to=self.request_id,
                    **({"timeout": timeout} if timeout is not None else {}),
                )
            except MCPError as failure:
                failures.append(failure)

        async with anyio.create_task_group() as task_group:
            for key, request in requests.items():
                task_group.start_soon(fetch, key, request)
        if failures:
            raise failures[0]
        return results

    async def start_task(self) -> None:
        """Go on as a task from here (a tool registered with ``task_support``).

        When the client declared the ``io.modelcontextprotocol/tasks`` extension (2026-07-28), the
        request is answered now with a ``CreateTaskResult`` and the handler runs again from the top
        in the background, where this call returns at once; so what comes before it must be safe to
        run twice (like a multi-round request's rounds). Otherwise (legacy era, a client without
        the extension) it returns at once and the call goes on as an ordinary request.
        """
        if self.may_start_task and self.task_id is None:
            raise StartTask()

    def _missing_capabilities(self, capabilities: list[str]) -> MCPError:
        required: dict[str, Any] = {}
        for capability in capabilities:
            required.update(_nested(capability))
        names = " and ".join(repr(c) for c in capabilities)
        if is_modern(self.version):
            return MCPError(
                ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"This request needs the client's {names} capability",
                {"requiredCapabilities": required},
            )
        return MCPError(
            ErrorCode.INVALID_REQUEST,
            f"This request needs the client's {names} capability, which it did not declare",
            {"requiredCapabilities": required},
        )

    def _key(self, kind: str) -> str:
        self._asked[kind] = self._asked.get(kind, 0) + 1
        return f"{kind}-{self._asked[kind]}"

    async def sample(
        self, messages: list[dict[str, Any]], max_tokens: int, *, timeout: float | None = None, **options: Any
    ) -> dict[str, Any]:
        """Ask the client's model for a completion (``sampling/createMessage``); returns its result.

        ``options`` are further request fields, spelled as on the wire (``systemPrompt``, ...).
        """
        key = self._key("sampling")
        return (await self.ask({key: inputs.sampling(messages, max_tokens, **options)}, timeout=timeout))[key]

    async def elicit(
        self, message: str, requested_schema: dict[str, Any], *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Ask the user for structured input (``elicitation/create``, form mode); returns its result."""
        key = self._key("elicitation")
        return (await self.ask({key: inputs.elicitation(message, requested_schema)}, timeout=timeout))[key]

    async def list_roots(self, *, timeout: float | None = None) -> list[dict[str, Any]]:
        """The client's roots (``roots/list``)."""
        key = self._key("roots")
        result = (await self.ask({key: inputs.roots()}, timeout=timeout))[key]
        found = result.get("roots") if isinstance(result, dict) else None
        if not isinstance(found, list):
            raise MCPError(ErrorCode.INTERNAL_ERROR, "The client answered roots/list without a roots list")
        return found


def _nested(path: str) -> dict[str, Any]:
    node: dict[str, Any] = {}
    for part in reversed(path.split(".")):
        node = {part: node}
    return node
