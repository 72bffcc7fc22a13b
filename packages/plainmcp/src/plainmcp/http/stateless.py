"""One 2026-07-28 request over Streamable HTTP: a stateless POST, answered as JSON or as an SSE stream.

Each POST is served in the ASGI request's own task by a connection that lives for this request
only: the mirrored headers are checked first (``-32020`` on a mismatch), the answer is JSON unless
notifications come first (progress, logs, a ``subscriptions/listen`` stream), and the client
closing the response cancels the request, which is this revision's cancellation.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream, TaskGroup

from .. import protocol
from ..connection import ServerConnection
from ..envelope import Envelope, parse_envelope
from ..errors import ErrorCode, MCPError
from ..framing import frame
from ..jsonrpc import Decoded, ErrorResponse, Message, Notification, Request, RequestId
from ..param_headers import check_request_headers, decode_header_value
from ..peer import CallExtras
from ..session import Outbound, Session
from .asgi import (
    EventStream,
    Receive,
    Scope,
    Send,
    error_payload,
    header,
    principal_subject,
    repeated_header,
    respond,
    respond_json,
    wait_disconnect,
)

if TYPE_CHECKING:
    from ..server import Server
    from ..session import Observer

#: HTTP status of a 2026-07-28 error response, by JSON-RPC code (200 for the rest).
MODERN_ERROR_STATUS: dict[int, int] = {
    ErrorCode.METHOD_NOT_FOUND: 404,
    ErrorCode.PARSE_ERROR: 400,
    ErrorCode.INVALID_REQUEST: 400,
    ErrorCode.INVALID_PARAMS: 400,
    ErrorCode.HEADER_MISMATCH: 400,
    ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    ErrorCode.UNSUPPORTED_PROTOCOL_VERSION: 400,
}
#: A 2026-07-28 request still running after this long starts watching for its client leaving.
WATCH_AFTER_SECONDS = 0.02
#: The name of the task that starts those watchers.
SWEEPER_NAME = "plainmcp-late-watch-sweeper"
NAME_HEADER_SOURCE = {
    protocol.TOOLS_CALL: "name",
    protocol.PROMPTS_GET: "name",
    protocol.RESOURCES_READ: "uri",
    **dict.fromkeys(protocol.TASK_METHODS, "taskId"),
}
#: Headers that mirror the body or name the session: sent twice, the two values could disagree
#: about what the request is (a proxy checking the first, the server acting on the other).
MIRRORED_HEADERS = ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name", "Mcp-Session-Id")


class StatelessHTTP:
    """Serves 2026-07-28 POSTs, each an exchange of its own; knows the exchanges still running, so
    that shutdown can end them (a ``subscriptions/listen`` stream gets its final result).

    Args: as :class:`~plainmcp.http.streamable.StreamableHTTP`'s, which routes POSTs here.
    """

    def __init__(
        self, server: Server, *, max_message_bytes: int, keepalive_seconds: float, observer: Observer | None = None
    ) -> None:
        self.server = server
        self.max_message_bytes = max_message_bytes
        self.keepalive_seconds = keepalive_seconds
        self.observer = observer
        self.live: set[Session] = set()
        #: Set by the owner's ``running()``: where watchers and keep-alive comments run.
        self.background: TaskGroup | None = None
        # Every exchange's connection reads this: one request comes, in the POST, and nothing after.
        self.no_input: ObjectReceiveStream[Decoded]
        input_send, self.no_input = anyio.create_memory_object_stream[Decoded](0)
        input_send.close()
        self.watches = _LateWatches(self)

    def task_group(self) -> TaskGroup:
        if self.background is None:
            raise RuntimeError("StreamableHTTP must run inside running() (the app lifespan)")
        return self.background

    async def serve(
        self, scope: Scope, receive: Receive, send: Send, decoded: Decoded, version_header: str | None
    ) -> None:
        """Answer one decoded POST body (the version header as sent)."""
        await ModernExchange(self, scope, receive, send).serve(decoded, version_header)

    def end_all(self) -> None:
        """Declare every running exchange's input over: long-lived requests finish now."""
        for session in list(self.live):
            session.end_input()


class ModernExchange:
    """One 2026-07-28 POST: check the mirrored headers, serve the request, answer JSON or SSE."""

    def __init__(self, app: StatelessHTTP, scope: Scope, receive: Receive, send: Send) -> None:
        self.app = app
        self.scope = scope
        self.receive = receive
        self.send = send

    async def serve(self, decoded: Decoded, version_header: str | None) -> None:
        if isinstance(decoded, Notification):
            await respond(self.send, 202)  # this revision defines none over HTTP: accepted, ignored
            return
        if not isinstance(decoded, Request):
            await respond_json(
                self.send,
                400,
                error_payload(ErrorCode.INVALID_REQUEST, "Invalid Request: POST one request or notification"),
            )
            return
        try:
            envelope = self._check(decoded, version_header)
        except MCPError as error:
            await self._error(decoded.id, error)
            return
        extras = CallExtras(
            trace_id=(self.scope.get("state") or {}).get("request_id"),
            envelope=envelope,
            principal=principal_subject(self.scope),
            client_address=_client_host(self.scope),
        )
        await self._run(decoded, extras)

    def _check(self, request: Request, version_header: str | None) -> Envelope:
        """Envelope shape (-32602), then the mirrored headers (-32020); the version is the
        dispatcher's to judge (-32022), in that order. Returns the parsed envelope."""
        envelope = parse_envelope(request.params or {})
        repeated = repeated_header(self.scope, MIRRORED_HEADERS)
        if repeated is not None:
            raise MCPError(ErrorCode.HEADER_MISMATCH, f"Header mismatch: the {repeated} header was sent more than once")
        if header(self.scope, "mcp-method") != request.method:
            raise _mismatch("Mcp-Method", header(self.scope, "mcp-method"), request.method)
        if version_header != envelope.version:
            raise _mismatch("MCP-Protocol-Version", version_header, envelope.version)
        source = NAME_HEADER_SOURCE.get(request.method)
        if source is not None:
            expected = (request.params or {}).get(source)
            given = decode_header_value(header(self.scope, "mcp-name"))
            if given != expected:
                raise _mismatch("Mcp-Name", given, expected)
        if request.method == protocol.TOOLS_CALL:
            self._check_param_headers(request.params or {})
        return envelope

    def _check_param_headers(self, params: dict[str, Any]) -> None:
        """SEP-2243: the called tool's ``x-mcp-header`` arguments against their ``Mcp-Param-*``
        headers. A tool without annotations (or an unknown one) ignores such headers."""
        name = params.get("name")
        tool = self.app.server.tools.get(name) if isinstance(name, str) else None
        arguments = params.get("arguments")
        if tool is None or not tool.header_bindings or not isinstance(arguments, dict):
            return
        repeated = repeated_header(self.scope, [binding.header for binding in tool.header_bindings])
        if repeated is not None:
            raise MCPError(ErrorCode.HEADER_MISMATCH, f"Header mismatch: the {repeated} header was sent more than once")
        check_request_headers(tool.header_bindings, arguments, lambda name: header(self.scope, name))

    async def _error(self, request_id: RequestId, error: MCPError) -> None:
        status = MODERN_ERROR_STATUS.get(error.code, 200)
        await respond_json(self.send, status, {"jsonrpc": "2.0", "id": request_id, "error": error.to_dict()})

    async def _run(self, request: Request, extras: CallExtras) -> None:
        """Serve the request in this task; notifications that come first turn the answer into an
        SSE stream. The client leaving cancels the request (this revision's cancellation).
        ``extras`` carries the envelope parsed by :meth:`_check`: the dispatcher does not parse it
        again.

        No task group of its own: most calls are answered before anything could cancel them, and
        the work that watches or writes beside the request (the disconnect watcher, keep-alive
        comments) starts late and only then, in the app's task group, stopped before we answer."""
        sink = _ExchangeStream(self, request)
        connection = ServerConnection(self.app.server, self.app.no_input, sink, observer=self.app.observer)
        session = connection.session
        sink.watcher = watcher = _Background(self.app, self._cancel_when_gone, session, request.id, sink)
        watches = self.app.watches
        watches.add(watcher)
        self.app.live.add(session)
        try:
            try:
                reply = await session.answer(request, extras)
            finally:
                watches.drop(watcher)
                self.app.live.discard(session)
                await watcher.stop()
                if sink.keep_alive is not None:
                    await sink.keep_alive.stop()
            if reply is None or sink.gone:
                return  # cancelled: nothing more may be sent for it
            # One turn of the event loop before answering, as the per-exchange task group's exit
            # gave: an exchange that runs from its body to its answer without one let the other
            # connections wait, p99 at 64 connections (wrk) 40-160 ms instead of 15-25 ms, for a
            # similar rate. (Cancelled here, as at server shutdown, the answer is not sent.)
            await anyio.lowlevel.checkpoint()
            if sink.started:
                await sink.finish(reply)
            else:
                await self._reply_json(reply)
        finally:
            sink.detach()

    async def _cancel_when_gone(self, session: Session, request_id: RequestId, sink: _ExchangeStream) -> None:
        await wait_disconnect(self.receive)
        sink.gone = True
        session.cancel(request_id, "client disconnected")

    async def _reply_json(self, message: Message) -> None:
        # A result too large to send becomes -32603, which is a 200 like the result would be.
        data = frame(message, self.app.max_message_bytes).rstrip(b"\n")
        status = MODERN_ERROR_STATUS.get(message.code, 200) if isinstance(message, ErrorResponse) else 200
        await respond(self.send, status, data, content_type="application/json")


class _ExchangeStream(ObjectSendStream[Outbound]):
    """The write stream of one 2026-07-28 exchange: the first notification starts the SSE
    response, and every message related to the request becomes an event of it."""

    def __init__(self, exchange: ModernExchange, request: Request) -> None:
        self.app = exchange.app
        self.request = request
        self.events: EventStream | None = EventStream(exchange.send)
        self.started = False
        self.gone = False
        self.watcher: _Background | None = None  # of the client leaving
        self.keep_alive: _Background | None = None  # comments on a long-lived stream

    async def send(self, item: Outbound) -> None:
        if self.gone or self.events is None:
            return
        data = frame(item.message, self.app.max_message_bytes).rstrip(b"\n")
        if not data:
            return
        try:
            if not self.started:
                await self.events.start()
                self.started = True
                if self.watcher is not None:
                    self.app.watches.now(self.watcher)  # a stream may be long: watch from now on
                if self.request.method in protocol.MODERN_ONLY_METHODS:
                    self.keep_alive = _Background(self.app, self.events.keep_alive, self.app.keepalive_seconds)
                    self.keep_alive.start()
            await self.events.event(data.decode("utf-8"), event="message")
        except OSError:
            self.gone = True

    async def finish(self, reply: Message) -> None:
        """The final response, then the end of the stream."""
        if self.events is None:
            return
        data = frame(reply, self.app.max_message_bytes).rstrip(b"\n")
        try:
            await self.events.event(data.decode("utf-8"), event="message")
            await self.events.close()
        except OSError:
            pass

    def detach(self) -> None:
        """The exchange is over: nothing more is sent, and nothing of the exchange is held. The
        exchange's connection and session hold this stream in reference cycles of their own;
        detached, the request's scope, its ASGI callables and the watchers are freed at once by
        reference counting instead of waiting for the cyclic collector."""
        self.gone = True
        self.events = None
        self.watcher = self.keep_alive = None

    async def aclose(self) -> None:
        pass


class _Background:
    """One piece of work beside an exchange, run in the app's task group once started, which the
    exchange stops, and waits for, before it answers."""

    def __init__(self, app: StatelessHTTP, func: Callable[..., Awaitable[object]], *args: object) -> None:
        self._app = app
        self._func = func
        self._args = args
        self._scope: anyio.CancelScope | None = None
        self._done: anyio.Event | None = None

    def start(self) -> None:
        """Start it (once; later calls do nothing). Call from a task."""
        if self._scope is None:
            self._scope = anyio.CancelScope()
            self._done = anyio.Event()
            self._app.task_group().start_soon(self._run)

    async def _run(self) -> None:
        assert self._scope is not None and self._done is not None
        try:
            with self._scope:
                await self._func(*self._args)
        finally:
            self._done.set()

    async def stop(self) -> None:
        if self._scope is None or self._done is None:
            return
        self._scope.cancel()
        with anyio.CancelScope(shield=True):  # waited for even while the exchange is cancelled
            await self._done.wait()


class _LateWatches:
    """Watching for the client leaving, started only once a request has run for
    :data:`WATCH_AFTER_SECONDS` (or starts streaming): most calls are answered sooner, and skip
    the watcher task and the cancellation that ends it, which cost more than the call itself.

    One sweeper task, running while requests come, starts the watchers that are due: a call
    costs an entry in a dict, not a timer of its own."""

    def __init__(self, app: StatelessHTTP) -> None:
        self._app = app
        self._waiting: dict[_Background, float] = {}  # in the order they began: oldest first
        self._sweeping = False
        self._added = False  # since the sweeper last woke

    def add(self, watcher: _Background) -> None:
        self._waiting[watcher] = time.monotonic()
        self._added = True
        if not self._sweeping:
            self._app.task_group().start_soon(self._sweep, name=SWEEPER_NAME)
            self._sweeping = True

    def now(self, watcher: _Background) -> None:
        """Start this one's watcher at once (a stream may be long)."""
        if self._waiting.pop(watcher, None) is not None:
            watcher.start()

    def drop(self, watcher: _Background) -> None:
        self._waiting.pop(watcher, None)

    async def _sweep(self) -> None:
        # It ends only after a whole period in which no request began: under load it stays, and
        # a task is not started again for nearly every request.
        try:
            while self._added or self._waiting:
                self._added = False
                await anyio.sleep(WATCH_AFTER_SECONDS)
                due = time.monotonic() - WATCH_AFTER_SECONDS
                while self._waiting:
                    watcher = next(iter(self._waiting))
                    if self._waiting[watcher] > due:
                        break
                    del self._waiting[watcher]
                    watcher.start()
        finally:
            self._sweeping = False


def _mismatch(name: str, given: Any, expected: Any) -> MCPError:
    return MCPError(
        ErrorCode.HEADER_MISMATCH,
        f"Header mismatch: {name} header value {given!r} does not match body value {expected!r}",
    )


def _client_host(scope: Scope) -> str | None:
    """The peer's host as the ASGI server saw it (a proxy's, behind one)."""
    client = scope.get("client")
    return str(client[0]) if client else None
