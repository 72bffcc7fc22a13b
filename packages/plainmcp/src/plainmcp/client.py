"""The client side: the same session engine, speaking to a server.

Used by the tests, the ``plainmcp`` command and anyone scripting a server::

    async with connect_stdio(["my-server", "--db", "x.db"]) as client:  # plainmcp.connect_stdio
        tools = await client.list_all_tools()
        result = await client.call_tool("query", {"sql": "select 1"})
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from . import protocol
from .errors import ErrorCode, MCPError, method_not_found
from .jsonrpc import Decoded, Notification, Request, RequestId
from .session import InFlight, Outbound, Session
from .versions import LATEST_LEGACY, MODERN_VERSIONS, is_modern

logger = logging.getLogger(__name__)

MAX_INPUT_ROUNDS = 10

RequestCallback = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
NotificationCallback = Callable[[Notification], Awaitable[None] | None]


class Subscription:
    """A ``subscriptions/listen`` stream (2026-07-28): iterate it for the notifications it carries.

    Attributes:
        id: the listen request's id (the ``subscriptionId``).
        agreed: the notification types the server agreed to send.
        ended: True once the server closed the stream gracefully.
    """

    def __init__(self, subscription_id: RequestId, buffer: int = 256) -> None:
        self.id = subscription_id
        self.agreed: dict[str, Any] = {}
        self.ended = False
        self.acknowledged = anyio.Event()
        self._send, self._receive = anyio.create_memory_object_stream[Notification](buffer)

    def _deliver(self, notification: Notification) -> None:
        try:
            self._send.send_nowait(notification)
        except anyio.WouldBlock:
            logger.warning("subscription %r is not being read; dropped %s", self.id, notification.method)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    def _end(self) -> None:
        self.ended = True
        self._send.close()

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> Notification:
        try:
            return await self._receive.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def next(self, timeout: float | None = None) -> Notification:
        """The next notification; raises TimeoutError after ``timeout`` seconds, StopAsyncIteration
        when the stream has ended."""
        with anyio.fail_after(timeout):
            return await self.__anext__()


class Client:
    """An MCP client over a pair of streams. Use :func:`connect_stdio` or
    :func:`plainmcp.testing.connect_in_memory` rather than constructing one directly.

    Args:
        protocol_version: a legacy revision (``initialize`` handshake), ``"2026-07-28"`` (stateless:
            every request carries its envelope), or ``"auto"``: probe with ``server/discover`` and
            fall back to ``initialize`` as the 2026-07-28 stdio page says.
        log_level: 2026-07-28 only: ask for ``notifications/message`` at this level on every request.
        sampling: answers ``sampling/createMessage``; declaring it declares the capability.
        elicitation: answers ``elicitation/create``; declares the capability.
        elicitation_defaults: when the callback accepts a form, the fields it left out that the
            requested schema gives a ``default`` are filled in with it (SEP-1034: the defaults are
            what the form showed). False sends the content exactly as the callback returned it.
        roots: the roots to offer (``[{"uri": "file:///...", "name": ...}]``); declares ``roots``.
        on_notification: called for every notification from the server (logs, list changes, ...).
        request_timeout: default seconds per request.
        probe_timeout: seconds the ``"auto"`` probe waits for ``server/discover`` before it falls
            back to ``initialize`` (a legacy server may never answer a method it does not know).
        retries: how often an idempotent request is retried after a timeout.
        extensions: extensions to take up, as ``capabilities.extensions`` says them
            (``{"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}``).
    """

    def __init__(
        self,
        read_stream: ObjectReceiveStream[Decoded],
        write_stream: ObjectSendStream[Outbound],
        *,
        client_info: dict[str, Any] | None = None,
        protocol_version: str = LATEST_LEGACY,
        log_level: str | None = None,
        sampling: RequestCallback | None = None,
        elicitation: RequestCallback | None = None,
        elicitation_defaults: bool = True,
        roots: list[dict[str, Any]] | None = None,
        on_notification: NotificationCallback | None = None,
        request_timeout: float | None = 30.0,
        probe_timeout: float = 5.0,
        retries: int = 2,
        backoff: float = 0.1,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> None:
        self.session = Session(read_stream, write_stream, self, request_timeout=request_timeout)
        self.client_info = client_info or {"name": "plainmcp-client", "version": _version()}
        self.requested_version = protocol_version
        self.log_level = log_level
        self._sampling = sampling
        self._elicitation = elicitation
        self.elicitation_defaults = elicitation_defaults
        self.roots = roots
        #: Extensions this client takes up (``capabilities.extensions``): identifier -> settings.
        self.extensions: dict[str, dict[str, Any]] = dict(extensions or {})
        self._on_notification = on_notification
        self.retries = retries
        self.backoff = backoff
        self.probe_timeout = probe_timeout
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] = {}
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.supported_versions: list[str] = []
        self._idempotent_tools: set[str] = set()
        self._subscriptions: dict[RequestId, Subscription] = {}
        #: The server process, when :func:`connect_stdio` started one.
        self.process: Any = None
        #: How this client reaches the server: ``"stdio"``, ``"streamable-http"``, ``"sse"``,
        #: ``"memory"``, or None when the caller built the streams itself.
        self.transport: str | None = None

    @property
    def modern(self) -> bool:
        """Whether this client speaks the stateless era (known once connected)."""
        return self.protocol_version is not None and is_modern(self.protocol_version)

    @property
    def capabilities(self) -> dict[str, Any]:
        capabilities: dict[str, Any] = {}
        if self.roots is not None:
            # roots.listChanged went away with notifications/roots/list_changed in 2026-07-28.
            capabilities["roots"] = {} if self.modern else {"listChanged": True}
        if self._sampling is not None:
            capabilities["sampling"] = {}
        if self._elicitation is not None:
            capabilities["elicitation"] = {}
        if self.extensions:
            capabilities["extensions"] = {name: dict(settings) for name, settings in self.extensions.items()}
        return capabilities

    # --------------------------------------------------------------------------------- lifecycle

    async def connect(self) -> None:
        """Start talking: ``initialize`` (legacy), ``server/discover`` (2026-07-28), or the probe."""
        if self.requested_version == "auto":
            await self._probe()
        elif is_modern(self.requested_version):
            self.protocol_version = self.requested_version
            await self.discover()
        else:
            await self.initialize()

    async def _probe(self) -> None:
        # A legacy server may never answer a method it does not know before ``initialize``:
        # the probe waits ``probe_timeout``, not the full request timeout, before falling back.
        self.protocol_version = MODERN_VERSIONS[-1]
        try:
            await self.discover(timeout=self.probe_timeout, retry=False)
            return
        except MCPError as error:
            supported = error.data.get("supported") if isinstance(error.data, dict) else None
            modern = [v for v in supported or () if v in MODERN_VERSIONS]
            if error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION and modern:
                self.protocol_version = modern[0]
                await self.discover()
                return
            logger.info("server/discover failed (%s); falling back to initialize", error.message)
        self.protocol_version = None
        self.requested_version = LATEST_LEGACY
        await self.initialize()

    async def discover(self, *, timeout: float | None = -1, retry: bool = True) -> dict[str, Any]:
        """``server/discover`` (2026-07-28): the server's versions, capabilities and info."""
        result = await self.request(protocol.SERVER_DISCOVER, timeout=timeout, idempotent=None if retry else False)
        self.server_capabilities = result.get("capabilities", {})
        self.server_info = (result.get("_meta") or {}).get(protocol.META_SERVER_INFO, {})
        self.instructions = result.get("instructions")
        self.supported_versions = result.get("supportedVersions", [])
        return result

    async def initialize(self) -> dict[str, Any]:
        """The legacy handshake: ``initialize``, then ``notifications/initialized``."""
        result = await self.session.request(
            protocol.INITIALIZE,
            {
                "protocolVersion": self.requested_version,
                "capabilities": self.capabilities,
                "clientInfo": self.client_info,
            },
        )
        self.protocol_version = result.get("protocolVersion")
        self.server_info = result.get("serverInfo", {})
        self.server_capabilities = result.get("capabilities", {})
        self.instructions = result.get("instructions")
        await self.session.notify(protocol.INITIALIZED)
        return result

    async def set_roots(self, roots: list[dict[str, Any]]) -> None:
        """Change the offered roots and tell the server."""
        self.roots = roots
        await self.session.notify(protocol.ROOTS_LIST_CHANGED)

    # ---------------------------------------------------------------------------------- requests

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = -1,
        idempotent: bool | None = None,
        on_progress: Callable[[float, float | None, str | None], Any] | None = None,
        answer_inputs: bool = True,
    ) -> Any:
        """Send a request. Idempotent requests that time out are retried with exponential backoff
        and full jitter, up to ``retries`` times. In 2026-07-28 the envelope is added, and
        ``input_required`` results are answered through the callbacks and retried, up to
        ``MAX_INPUT_ROUNDS`` times (``answer_inputs=False`` returns them as they are, for callers
        that drive the rounds themselves). Raises :class:`MCPError`."""
        given = params
        if self.modern:
            params = self.with_envelope(method, given)
        try:
            result = await self._request_with_retries(method, params, timeout, idempotent, on_progress)
        except MCPError as error:
            if not (self.modern and self._renegotiate(error)):
                raise
            # Once, with the version the server named: a second refusal is the caller's error.
            params = self.with_envelope(method, given)
            result = await self._request_with_retries(method, params, timeout, idempotent, on_progress)
        rounds = 0
        while answer_inputs and self.modern and method in protocol.MULTI_ROUND_METHODS and _is_input_required(result):
            rounds += 1
            if rounds > MAX_INPUT_ROUNDS:
                raise MCPError(ErrorCode.INTERNAL_ERROR, f"{method} still wanted input after {MAX_INPUT_ROUNDS} rounds")
            params = await self._answer_inputs(params or {}, result)
            result = await self._request_with_retries(method, params, timeout, idempotent, on_progress)
        return result

    def _renegotiate(self, error: MCPError) -> bool:
        """After ``-32022``: switch to the newest revision both sides support (the server lists
        its own in ``data.supported``); False when there is none to switch to."""
        if error.code != ErrorCode.UNSUPPORTED_PROTOCOL_VERSION or not isinstance(error.data, dict):
            return False
        supported = error.data.get("supported")
        mutual = [v for v in MODERN_VERSIONS if isinstance(supported, list) and v in supported]
        if not mutual:
            return False
        logger.info("server refused %s; retrying with %s", self.protocol_version, mutual[-1])
        self.protocol_version = mutual[-1]
        return True

    def with_envelope(self, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """``params`` with this client's 2026-07-28 ``_meta`` envelope added (keys the caller
        already put in ``_meta`` win)."""
        params = dict(params or {})
        meta: dict[str, Any] = {
            protocol.META_PROTOCOL_VERSION: self.protocol_version,
            protocol.META_CLIENT_CAPABILITIES: self.capabilities,
            protocol.META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None and method != protocol.SERVER_DISCOVER:
            meta[protocol.META_LOG_LEVEL] = self.log_level
        params["_meta"] = {**meta, **(params.get("_meta") or {})}
        return params

    async def _answer_inputs(self, params: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
        """The retry's params: the original ones plus our answers and the server's state."""
        requests = result.get("inputRequests") or {}
        answers: dict[str, Any] = {}
        for key, request in requests.items():
            answers[key] = await self._answer(request.get("method"), request.get("params") or {})
        retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        retry["inputResponses"] = answers
        if "requestState" in result:
            retry["requestState"] = result["requestState"]
        return retry

    async def _answer(self, method: Any, params: dict[str, Any]) -> dict[str, Any]:
        """Answer a server's request for input (either era) from the callbacks we were given."""
        if method == protocol.ROOTS_LIST and self.roots is not None:
            return {"roots": self.roots}
        if method == protocol.SAMPLING_CREATE_MESSAGE and self._sampling is not None:
            return await self._sampling(params)
        if method == protocol.ELICITATION_CREATE and self._elicitation is not None:
            answer = await self._elicitation(params)
            return with_schema_defaults(answer, params) if self.elicitation_defaults else answer
        raise method_not_found(str(method))

    async def _request_with_retries(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        idempotent: bool | None,
        on_progress: Callable[[float, float | None, str | None], Any] | None,
    ) -> Any:
        retryable = (method in protocol.IDEMPOTENT_METHODS) if idempotent is None else idempotent
        attempt = 0
        reinitialized = False
        while True:
            try:
                return await self.session.request(method, params, timeout=timeout, on_progress=on_progress)
            except MCPError as error:
                if _session_expired(error) and not reinitialized and method != protocol.INITIALIZE:
                    # The HTTP server forgot our session (404): start a new one and try again.
                    reinitialized = True
                    logger.info("session expired; initializing again")
                    await self.initialize()
                    continue
                if not retryable or error.code != ErrorCode.REQUEST_TIMEOUT or self.session.closed:
                    raise
                if attempt >= self.retries:
                    raise
                delay = random.uniform(0, self.backoff * 2**attempt)
                attempt += 1
                logger.info("%s timed out; retry %d in %.2f s", method, attempt, delay)
                await anyio.sleep(delay)

    async def ping(self) -> None:
        await self.request(protocol.PING)

    async def _list(self, method: str, key: str, cursor: str | None) -> tuple[list[dict[str, Any]], str | None]:
        result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
        return result.get(key, []), result.get("nextCursor")

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        while True:
            page, cursor = await self._list(method, key, cursor)
            items.extend(page)
            if cursor is None:
                return items

    async def list_tools(self, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        """One page of tools and the next cursor."""
        tools, next_cursor = await self._list(protocol.TOOLS_LIST, "tools", cursor)
        self._remember_idempotent(tools)
        return tools, next_cursor

    async def list_all_tools(self) -> list[dict[str, Any]]:
        tools = await self._list_all(protocol.TOOLS_LIST, "tools")
        self._remember_idempotent(tools)
        return tools

    def _remember_idempotent(self, tools: list[dict[str, Any]]) -> None:
        for tool in tools:
            hints = tool.get("annotations") or {}
            if hints.get("idempotentHint") or hints.get("readOnlyHint"):
                self._idempotent_tools.add(tool["name"])
            else:
                self._idempotent_tools.discard(tool["name"])

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        timeout: float | None = -1,
        on_progress: Callable[[float, float | None, str | None], Any] | None = None,
    ) -> dict[str, Any]:
        """Call a tool. Retried on timeout only if a listing said the tool is idempotent."""
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request(
            protocol.TOOLS_CALL,
            params,
            timeout=timeout,
            on_progress=on_progress,
            idempotent=name in self._idempotent_tools,
        )

    async def list_resources(self, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        return await self._list(protocol.RESOURCES_LIST, "resources", cursor)

    async def list_all_resources(self) -> list[dict[str, Any]]:
        return await self._list_all(protocol.RESOURCES_LIST, "resources")

    async def list_resource_templates(self, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        return await self._list(protocol.RESOURCES_TEMPLATES_LIST, "resourceTemplates", cursor)

    async def list_all_resource_templates(self) -> list[dict[str, Any]]:
        return await self._list_all(protocol.RESOURCES_TEMPLATES_LIST, "resourceTemplates")

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self.request(protocol.RESOURCES_READ, {"uri": uri})

    async def subscribe(self, uri: str) -> None:
        await self.request(protocol.RESOURCES_SUBSCRIBE, {"uri": uri})

    async def unsubscribe(self, uri: str) -> None:
        await self.request(protocol.RESOURCES_UNSUBSCRIBE, {"uri": uri})

    async def list_prompts(self, cursor: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        return await self._list(protocol.PROMPTS_LIST, "prompts", cursor)

    async def list_all_prompts(self) -> list[dict[str, Any]]:
        return await self._list_all(protocol.PROMPTS_LIST, "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = arguments
        return await self.request(protocol.PROMPTS_GET, params)

    async def complete(
        self, ref: dict[str, Any], argument: str, value: str, context: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """``completion/complete``; ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or
        ``{"type": "ref/resource", "uri": ...}``. Returns the ``completion`` object."""
        params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context is not None:
            params["context"] = {"arguments": context}
        result = await self.request(protocol.COMPLETION_COMPLETE, params)
        return result["completion"]

    async def set_logging_level(self, level: str) -> None:
        await self.request(protocol.LOGGING_SET_LEVEL, {"level": level})

    @asynccontextmanager
    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        uris: Sequence[str] = (),
        timeout: float | None = 10.0,
    ) -> AsyncIterator[Subscription]:
        """Open a ``subscriptions/listen`` stream (2026-07-28) for the block's duration.

        Yields once the server acknowledged; leaving the block cancels the stream.
        """
        wanted: dict[str, Any] = {}
        for flag, on in (
            ("toolsListChanged", tools),
            ("promptsListChanged", prompts),
            ("resourcesListChanged", resources),
        ):
            if on:
                wanted[flag] = True
        if uris:
            wanted["resourceSubscriptions"] = list(uris)
        request_id = self.session.next_id()
        subscription = Subscription(request_id)
        self._subscriptions[request_id] = subscription
        params = self.with_envelope(protocol.SUBSCRIPTIONS_LISTEN, {"notifications": wanted})

        async def hold() -> None:
            try:
                await self.session.request(protocol.SUBSCRIPTIONS_LISTEN, params, timeout=None, request_id=request_id)
            finally:
                subscription._end()
                subscription.acknowledged.set()

        try:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(hold)
                with anyio.fail_after(timeout):
                    await subscription.acknowledged.wait()
                yield subscription
                task_group.cancel_scope.cancel()
        finally:
            self._subscriptions.pop(request_id, None)

    # ------------------------------------------------------------------------------ Handler API

    def accepts_batches(self) -> bool:
        return False

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        if request.method == protocol.PING:
            return {}
        return await self._answer(request.method, request.params or {})

    async def handle_notification(self, notification: Notification) -> None:
        meta = (notification.params or {}).get("_meta")
        subscription_id = meta.get(protocol.META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        subscription = self._subscriptions.get(subscription_id) if subscription_id is not None else None
        if subscription is not None:
            if notification.method == protocol.SUBSCRIPTIONS_ACKNOWLEDGED:
                subscription.agreed = (notification.params or {}).get("notifications") or {}
                subscription.acknowledged.set()
            else:
                subscription._deliver(notification)
        if notification.method == protocol.MESSAGE:
            params = notification.params or {}
            logger.info("server log [%s] %s", params.get("level"), params.get("data"))
        if self._on_notification is not None:
            outcome = self._on_notification(notification)
            if outcome is not None:
                await outcome


@contextmanager
def unwrap_single_errors() -> Iterator[None]:
    """Let one error out of a task group as itself, so callers can ``except MCPError``."""
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1 and not isinstance(group.exceptions[0], BaseExceptionGroup):
            raise group.exceptions[0] from None
        raise


def with_schema_defaults(answer: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """An accepted form's ``content`` with each field it lacks that ``requestedSchema`` gives a
    ``default`` for set to that default (SEP-1034); any other answer as it is."""
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(answer, dict) or answer.get("action") != "accept" or not isinstance(properties, dict):
        return answer
    content = answer.get("content")
    if content is not None and not isinstance(content, dict):
        return answer
    filled = dict(content or {})
    for name, field in properties.items():
        if isinstance(field, dict) and "default" in field and name not in filled:
            filled[name] = field["default"]
    return {**answer, "content": filled}


def _session_expired(error: MCPError) -> bool:
    return isinstance(error.data, dict) and error.data.get("sessionExpired") is True


def _is_input_required(result: Any) -> bool:
    return isinstance(result, dict) and result.get("resultType") == "input_required"


def _version() -> str:
    from . import __version__

    return __version__


@asynccontextmanager
async def open_client(
    read_stream: ObjectReceiveStream[Decoded],
    write_stream: ObjectSendStream[Outbound],
    *,
    initialize: bool = True,
    **options: Any,
) -> AsyncIterator[Client]:
    """Run a :class:`Client` over a stream pair for the duration of the block, connected
    (``initialize`` or ``server/discover``, by ``protocol_version``) unless ``initialize=False``."""
    client = Client(read_stream, write_stream, **options)
    with unwrap_single_errors():
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(client.session.run)
            try:
                if initialize:
                    await client.connect()
                yield client
            finally:
                task_group.cancel_scope.cancel()


__all__ = ["Client", "MCPError", "open_client"]
