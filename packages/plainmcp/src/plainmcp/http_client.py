"""The client side of the HTTP transports, over httpx: Streamable HTTP (both eras) and HTTP+SSE.

Each gives a :class:`~plainmcp.Client` the same pair of object streams as stdio. Streamable HTTP
posts every message; answers come back as JSON or SSE, and a legacy stream that drops before its
answer is resumed with ``GET`` + ``Last-Event-ID``. The legacy session's own ``GET`` stream is kept
open (and reopened with backoff). In 2026-07-28 the mirrored headers are added from the body, no
session is kept, and cancelling a request closes its response stream (the revision's signal).

SEP-2243 custom headers: the transport learns each tool's ``x-mcp-header`` annotations from the
``tools/list`` results it carries, and mirrors those arguments of a 2026-07-28 ``tools/call`` as
``Mcp-Param-{Name}`` headers. A tool must have been listed for its headers to be sent; a call of a
tool whose annotations break the rules is refused here (``-32602``), never sent.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

import anyio
from anyio.abc import ObjectSendStream, TaskGroup

from . import protocol, sse
from .client import Client, open_client, unwrap_single_errors
from .errors import ErrorCode
from .jsonrpc import (
    Decoded,
    ErrorResponse,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    decode,
    encode,
    error_response,
)
from .oauth.errors import AuthorizationError
from .param_headers import HeaderBinding, encode_header_value, header_bindings, request_headers
from .session import Outbound
from .versions import MODERN_VERSIONS

if TYPE_CHECKING:
    from .oauth import OAuth

logger = logging.getLogger(__name__)

#: How long an idle HTTP connection is kept for reuse (httpx's default is 5 s, the same as many servers').
IDLE_CONNECTION_SECONDS = 2.0

NAME_SOURCE = {
    protocol.TOOLS_CALL: "name",
    protocol.PROMPTS_GET: "name",
    protocol.RESOURCES_READ: "uri",
    **dict.fromkeys(protocol.TASK_METHODS, "taskId"),
}
SESSION_EXPIRED = "sessionExpired"
#: How many tools' header annotations a transport remembers (a hostile server could list millions).
MAX_KNOWN_TOOLS = 10_000


class _PostingStream(ObjectSendStream[Outbound]):
    """A write stream whose ``send`` posts each message, returning once the server has taken it
    (so messages reach the server in the order they were sent); answers arrive in the background."""

    def __init__(self, transport: Any) -> None:
        self._transport = transport

    async def send(self, item: Outbound) -> None:
        await self._transport.deliver(item.message)

    async def aclose(self) -> None:
        pass


class StreamableHTTPTransport:
    """Streamable HTTP from the client's side. Use :func:`connect_http`."""

    def __init__(
        self,
        url: str,
        http: Any,
        task_group: TaskGroup,
        *,
        headers: dict[str, str] | None = None,
        reconnect_attempts: int = 5,
    ) -> None:
        self.url = url
        self.http = http
        self.task_group = task_group
        self.headers = dict(headers or {})
        self.reconnect_attempts = reconnect_attempts
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.read_send, self.read_receive = anyio.create_memory_object_stream[Decoded](256)
        self.write_stream = _PostingStream(self)
        self._posts: dict[RequestId, anyio.CancelScope] = {}
        self._streamed_session: str | None = None  # the session whose GET stream is open
        self._expired = False  # the server forgot our session; the next request must say so
        self._closing = False
        self._listing: set[RequestId] = set()  # tools/list requests whose answers teach tool headers
        #: tool name -> its x-mcp-header bindings, or None when its annotations are invalid.
        self._tool_headers: dict[str, tuple[HeaderBinding, ...] | None] = {}

    # ------------------------------------------------------------------------------- sending

    async def deliver(self, message: Message | list[Message]) -> None:
        if isinstance(message, list):
            for item in message:
                await self.deliver(item)
            return
        version = _meta_version(message)
        if version is not None:
            self.protocol_version = version  # a modern client says its version on every request
        if isinstance(message, Notification) and message.method == protocol.CANCELLED and self._is_modern(message):
            # 2026-07-28 over HTTP: closing the response stream is the cancellation.
            # A missing or foreign requestId finds no scope.
            scope = self._posts.get((message.params or {}).get("requestId"))  # type: ignore[arg-type]  # see above
            if scope is not None:
                scope.cancel()
            return
        if self._expired and isinstance(message, Request) and message.method != protocol.INITIALIZE:
            await self._push(
                error_response(message.id, ErrorCode.INVALID_REQUEST, "Session expired", {SESSION_EXPIRED: True})
            )
            return
        if isinstance(message, Request) and message.method == protocol.TOOLS_LIST:
            self._listing.add(message.id)
        if isinstance(message, Request) and self._refuse_call(message):
            await self._push(
                error_response(
                    message.id,
                    ErrorCode.INVALID_PARAMS,
                    "The tool declares invalid x-mcp-header annotations; not called",
                )
            )
            return
        taken = anyio.Event()
        self.task_group.start_soon(self._post, message, taken)
        await taken.wait()

    def _refuse_call(self, message: Request) -> bool:
        """SEP-2243: a client MUST NOT call a tool whose header annotations are invalid."""
        if message.method != protocol.TOOLS_CALL:
            return False
        name = (message.params or {}).get("name")
        return isinstance(name, str) and name in self._tool_headers and self._tool_headers[name] is None

    def _learn_tools(self, item: Decoded) -> None:
        """Remember the header annotations of the tools in a ``tools/list`` result we asked for."""
        if not isinstance(item, (Response, ErrorResponse)) or item.id not in self._listing:
            return
        self._listing.discard(item.id)
        tools = item.result.get("tools") if isinstance(item, Response) and isinstance(item.result, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            name = tool.get("name") if isinstance(tool, dict) else None
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            if not isinstance(name, str) or not isinstance(schema, dict):
                continue
            if name not in self._tool_headers and len(self._tool_headers) >= MAX_KNOWN_TOOLS:
                continue
            try:
                self._tool_headers[name] = header_bindings(schema)
            except ValueError as error:
                logger.warning("tool %r: %s; it will not be called", name, error)
                self._tool_headers[name] = None

    def _is_modern(self, message: Message) -> bool:
        return self.protocol_version in MODERN_VERSIONS or _meta_version(message) in MODERN_VERSIONS

    def _headers_for(self, message: Message) -> dict[str, str]:
        headers = {
            **self.headers,
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
        }
        version = _meta_version(message) or self.protocol_version
        if version is not None:
            headers["mcp-protocol-version"] = version
        if version in MODERN_VERSIONS and isinstance(message, (Request, Notification)):
            headers["mcp-method"] = message.method
            source = NAME_SOURCE.get(message.method)
            value = (message.params or {}).get(source) if source else None
            if isinstance(value, str):
                headers["mcp-name"] = encode_header_value(value)
            if message.method == protocol.TOOLS_CALL and isinstance(value, str):
                arguments = (message.params or {}).get("arguments")
                bindings = self._tool_headers.get(value)
                if bindings and isinstance(arguments, dict):
                    headers.update(request_headers(bindings, arguments))
        elif self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        return headers

    async def _post(self, message: Message, taken: anyio.Event) -> None:
        request_id = message.id if isinstance(message, Request) else None
        scope = anyio.CancelScope()
        if request_id is not None:
            self._posts[request_id] = scope
        try:
            with scope:
                async with self.http.stream(
                    "POST", self.url, content=encode(message), headers=self._headers_for(message)
                ) as response:
                    taken.set()  # the server has answered the POST: the next message may go
                    await self._take_response(message, response)
        except AuthorizationError:
            raise  # no authorization for this server: the connection ends with it (see connect_http)
        except Exception as failure:  # httpx errors: the connection failed
            logger.warning("POST %s failed: %r", getattr(message, "method", "response"), failure)
            if request_id is not None:
                await self._push(
                    error_response(request_id, ErrorCode.REQUEST_TIMEOUT, f"HTTP request failed: {failure}")
                )
        finally:
            taken.set()
            if request_id is not None:
                self._posts.pop(request_id, None)

    async def _take_response(self, message: Message, response: Any) -> None:
        request_id = message.id if isinstance(message, Request) else None
        if response.status_code == 202:
            return
        if response.status_code == 404 and self.session_id is not None and not self._is_modern(message):
            logger.info("session %s ended on the server", self.session_id[:8])
            self.session_id = None
            self._expired = True
            if request_id is not None:
                self._expired = False  # this request carries the news; the client initializes again
                await self._push(
                    error_response(request_id, ErrorCode.INVALID_REQUEST, "Session expired", {SESSION_EXPIRED: True})
                )
            return
        session_id = response.headers.get("mcp-session-id")
        if session_id and isinstance(message, Request) and message.method == protocol.INITIALIZE:
            self.session_id = session_id
            self._expired = False
        content_type = response.headers.get("content-type", "")
        if content_type.startswith("text/event-stream"):
            await self._read_stream(response, request_id)
            return
        body = await response.aread()
        item = decode(body) if content_type.startswith("application/json") and body else None
        if isinstance(item, ErrorResponse) and item.id is None and request_id is not None:
            item = ErrorResponse(request_id, item.error)  # an HTTP-level refusal of this very request
        if isinstance(item, (Response, ErrorResponse)) or (isinstance(item, list)):
            self._note_version(item)
            await self._push(item)
        elif request_id is not None:
            data = {"httpStatus": response.status_code}
            await self._push(error_response(request_id, ErrorCode.INTERNAL_ERROR, f"HTTP {response.status_code}", data))

    def _note_version(self, item: Any) -> None:
        if isinstance(item, Response) and isinstance(item.result, dict) and "protocolVersion" in item.result:
            self.protocol_version = item.result["protocolVersion"]
            if self.session_id is not None and self._streamed_session != self.session_id:
                self._streamed_session = self.session_id
                self.task_group.start_soon(self._standalone_stream, self.session_id)

    async def _push(self, item: Decoded) -> None:
        self._learn_tools(item)
        try:
            await self.read_send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass

    # ------------------------------------------------------------------------------- receiving

    async def _read_stream(self, response: Any, request_id: RequestId | None) -> None:
        """Deliver a response stream's messages; resume it if it drops before the answer (legacy
        revisions, with or without a session: SEP-1699). A stream that ends before the answer with
        nothing to resume from fails the request at once rather than at its timeout."""
        decoder = sse.Decoder()
        answered = await self._drain(response, decoder, request_id)
        resumable = self.protocol_version not in MODERN_VERSIONS  # 2026-07-28 has no resumption
        attempt = 0
        while not answered and request_id is not None and decoder.last_event_id and resumable:
            attempt += 1
            if attempt > self.reconnect_attempts:
                await self._push(error_response(request_id, ErrorCode.REQUEST_TIMEOUT, "Stream lost"))
                return
            await anyio.sleep(_delay(decoder, attempt))
            headers = {**self.headers, "accept": "text/event-stream", "last-event-id": decoder.last_event_id}
            if self.session_id:
                headers["mcp-session-id"] = self.session_id
            if self.protocol_version:
                headers["mcp-protocol-version"] = self.protocol_version
            try:
                async with self.http.stream("GET", self.url, headers=headers) as resumed:
                    if resumed.status_code != 200:
                        await self._push(
                            error_response(
                                request_id, ErrorCode.REQUEST_TIMEOUT, f"Resuming failed: HTTP {resumed.status_code}"
                            )
                        )
                        return
                    answered = await self._drain(resumed, decoder, request_id)
            except AuthorizationError:
                raise
            except Exception as failure:
                logger.info("resuming a stream failed: %s", failure)
        if not answered and request_id is not None:
            await self._push(
                error_response(request_id, ErrorCode.REQUEST_TIMEOUT, "The response stream ended before the answer")
            )

    async def _drain(self, response: Any, decoder: sse.Decoder, request_id: RequestId | None) -> bool:
        """Read events until the answer to ``request_id`` (True) or the end of the stream (False)."""
        try:
            async for chunk in response.aiter_bytes():
                for event in decoder.feed(chunk):
                    if event.event != "message":
                        continue
                    item = decode(event.data)
                    self._note_version(item)
                    await self._push(item)
                    if request_id is not None and isinstance(item, (Response, ErrorResponse)) and item.id == request_id:
                        return True
        except Exception as failure:  # the connection dropped mid-stream
            logger.info("stream dropped: %s", failure)
        return False

    async def _standalone_stream(self, session_id: str) -> None:
        """The legacy session's GET stream: server notifications and requests. Reopened with
        backoff (and ``Last-Event-ID``) while that session lives; 405 means the server has none."""
        decoder = sse.Decoder()
        attempt = 0
        while not self._closing and self.session_id == session_id:
            headers = {**self.headers, "accept": "text/event-stream", "mcp-session-id": session_id}
            if self.protocol_version:
                headers["mcp-protocol-version"] = self.protocol_version
            if decoder.last_event_id:
                headers["last-event-id"] = decoder.last_event_id
            try:
                async with self.http.stream("GET", self.url, headers=headers, timeout=None) as response:
                    if response.status_code in (404, 405):
                        return
                    if response.status_code == 200:
                        attempt = 0
                        await self._drain(response, decoder, None)
            except AuthorizationError:
                raise
            except Exception as failure:
                logger.info("GET stream failed: %s", failure)
            attempt += 1
            if attempt > self.reconnect_attempts:
                return
            await anyio.sleep(_delay(decoder, attempt))

    async def close(self) -> None:
        """End the session on the server (DELETE), when there is one."""
        self._closing = True
        if self.session_id is not None:
            headers = {**self.headers, "mcp-session-id": self.session_id}
            if self.protocol_version:
                headers["mcp-protocol-version"] = self.protocol_version
            try:
                with anyio.fail_after(5):
                    await self.http.delete(self.url, headers=headers)
            except Exception as failure:
                logger.info("DELETE of the session failed: %s", failure)


class SSETransport:
    """The 2024-11-05 HTTP+SSE transport from the client's side. Use :func:`connect_http`."""

    def __init__(self, url: str, http: Any, task_group: TaskGroup, *, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.http = http
        self.task_group = task_group
        self.headers = dict(headers or {})
        self.endpoint: str | None = None
        self._endpoint_known = anyio.Event()
        self.read_send, self.read_receive = anyio.create_memory_object_stream[Decoded](256)
        self.write_stream = _PostingStream(self)

    async def open(self, timeout: float = 10.0) -> None:
        self.task_group.start_soon(self._listen)
        with anyio.fail_after(timeout):
            await self._endpoint_known.wait()

    async def _listen(self) -> None:
        decoder = sse.Decoder()
        try:
            async with self.http.stream(
                "GET", self.url, headers={**self.headers, "accept": "text/event-stream"}, timeout=None
            ) as response:
                if response.status_code != 200:
                    raise ConnectionError(f"GET {self.url}: HTTP {response.status_code}")
                async for chunk in response.aiter_bytes():
                    for event in decoder.feed(chunk):
                        if event.event == "endpoint":
                            self.endpoint = urljoin(self.url, event.data.strip())
                            self._endpoint_known.set()
                        elif event.event == "message":
                            await self.read_send.send(decode(event.data))
        finally:
            self.read_send.close()  # the stream is the session: its end is the end

    async def deliver(self, message: Message | list[Message]) -> None:
        await self._post(message)  # answered at once (202): waiting keeps the messages in order

    async def _post(self, message: Message | list[Message]) -> None:
        assert self.endpoint is not None
        content = b"[" + b",".join(encode(m) for m in message) + b"]" if isinstance(message, list) else encode(message)
        try:
            response = await self.http.post(
                self.endpoint, content=content, headers={**self.headers, "content-type": "application/json"}
            )
            if response.status_code not in (200, 202):
                logger.warning("POST %s: HTTP %d", self.endpoint, response.status_code)
        except AuthorizationError:
            raise
        except Exception as failure:
            logger.warning("POST %s failed: %s", self.endpoint, failure)

    async def close(self) -> None:
        pass


def _meta_version(message: Any) -> str | None:
    params = getattr(message, "params", None) or {}
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(protocol.META_PROTOCOL_VERSION) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def _delay(decoder: sse.Decoder, attempt: int) -> float:
    """The server's advised retry delay, else exponential backoff with full jitter (capped)."""
    advised = getattr(decoder, "retry_ms", None)
    if advised:
        return advised / 1000
    return random.uniform(0, min(10.0, 0.25 * 2**attempt))


def _use_sse(url: str, transport: str) -> bool:
    if transport == "auto":
        return urlsplit(url).path.rstrip("/").endswith("/sse")
    return transport == "sse"


@asynccontextmanager
async def connect_http(
    url: str,
    *,
    transport: str = "auto",
    headers: dict[str, str] | None = None,
    timeout: float = 30.0,
    verify: Any = True,
    initialize: bool = True,
    auth: OAuth | None = None,
    **options: Any,
) -> AsyncIterator[Client]:
    """Connect to an MCP server over HTTP and yield a connected :class:`Client`.

    Args:
        transport: ``"streamable"``, ``"sse"`` or ``"auto"``: a URL ending in ``/sse`` is HTTP+SSE;
            otherwise Streamable HTTP, falling back to HTTP+SSE at the same URL when the server
            answers the first POST with 400, 404 or 405 that is not a JSON-RPC error (as the
            specification's backwards-compatibility section says).
        headers: extra headers on every request (``Authorization``, for instance).
        verify: TLS verification, as httpx takes it (a CA bundle path for a private CA).
        auth: an :class:`~plainmcp.oauth.OAuth`: every request carries its bearer token, and a
            ``401`` (or ``403 insufficient_scope``) runs the authorization flow and sends the
            request again. When the server cannot be authorized, the connection ends with
            :class:`~plainmcp.oauth.AuthorizationError` raised from this context manager.
        options: passed to :class:`Client` (``protocol_version``, callbacks, ...).
    """
    with unwrap_single_errors():
        async with _connected(url, transport, headers, timeout, verify, initialize, auth, options) as client:
            yield client


@asynccontextmanager
async def _connected(
    url: str,
    transport: str,
    headers: dict[str, str] | None,
    timeout: float,
    verify: Any,
    initialize: bool,
    auth: OAuth | None,
    options: dict[str, Any],
) -> AsyncIterator[Client]:
    import httpx

    flow = auth.httpx_auth(url) if auth is not None else None
    # Idle connections expire before common servers close them (Node and uvicorn after 5 s): reusing one the
    # server is closing at that moment fails the request (seen after an authorization exchange of ~5 s).
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=IDLE_CONNECTION_SECONDS)
    timeouts = httpx.Timeout(timeout, read=None)
    async with httpx.AsyncClient(timeout=timeouts, verify=verify, auth=flow, limits=limits) as http:
        if not _use_sse(url, transport):
            async with _streamable(url, http, headers, initialize, options, transport == "auto") as client:
                if client is not None:
                    yield client
                    return
            logger.info("%s does not speak Streamable HTTP; trying HTTP+SSE", url)
        async with anyio.create_task_group() as task_group:
            sse_transport = SSETransport(url, http, task_group, headers=headers)
            await sse_transport.open()
            async with open_client(
                sse_transport.read_receive, sse_transport.write_stream, initialize=initialize, **options
            ) as client:
                client.transport = "sse"
                yield client
            task_group.cancel_scope.cancel()


@asynccontextmanager
async def _streamable(
    url: str, http: Any, headers: dict[str, str] | None, initialize: bool, options: dict[str, Any], may_fall_back: bool
) -> AsyncIterator[Client | None]:
    """A connected client over Streamable HTTP; None when the server does not speak it and
    ``may_fall_back`` (the first POST got 400, 404 or 405 without a JSON-RPC error)."""
    from .errors import MCPError

    async with anyio.create_task_group() as task_group:
        transport = StreamableHTTPTransport(url, http, task_group, headers=headers)
        client = Client(transport.read_receive, transport.write_stream, **options)
        task_group.start_soon(client.session.run)
        try:
            connected = True
            if initialize:
                try:
                    await client.connect()
                except MCPError as error:
                    status = error.data.get("httpStatus") if isinstance(error.data, dict) else None
                    if not (may_fall_back and status in (400, 404, 405)):
                        raise
                    connected = False
            client.transport = "streamable-http"
            client.http_transport = transport  # type: ignore[attr-defined]  # its session id, for tests and tools
            yield client if connected else None
        finally:
            with anyio.CancelScope(shield=True):
                await transport.close()
            task_group.cancel_scope.cancel()
