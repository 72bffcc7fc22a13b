"""The JSON-RPC session: one peer's view of a connection, over a pair of anyio object streams.

It never sees bytes. It reads :data:`~plainmcp.jsonrpc.Decoded` values (what a transport parsed)
and writes :class:`Outbound` envelopes (what a transport serializes). It correlates ids, runs every
incoming request in its own task and cancel scope (so a slow tool call holds up nothing else),
honours ``notifications/cancelled``, carries progress both ways, and times out its own outgoing
requests. The same class serves the server side and the client side: what differs is the
:class:`Handler` it is given.
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections.abc import Callable
from typing import Any, Protocol

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from . import protocol
from .errors import ErrorCode, MCPError, RequestFailed
from .jsonrpc import (
    Batch,
    Decoded,
    ErrorResponse,
    Invalid,
    Message,
    Notification,
    Request,
    RequestId,
    Response,
    error_response,
    is_id,
)
from .request_tasks import RequestTasks

logger = logging.getLogger(__name__)

#: Incoming requests one session serves at once (see ``Session(max_in_flight=...)``).
DEFAULT_MAX_IN_FLIGHT = 4096
#: Bound on extras held for requests still to arrive (a peer cannot grow it without end).
_MAX_EXPECTED = 1024

ProgressCallback = Callable[[float, "float | None", "str | None"], Any]
#: Called as ``observer(request, reply, seconds)`` once each incoming request is done; ``reply``
#: is None when the request was cancelled. Metrics hang here (see ``plainmcp.http.telemetry``).
Observer = Callable[["Request", "Message | None", float], None]


class Outbound:
    """A message on its way out, and the incoming request it belongs to (if any).

    Transports that multiplex (Streamable HTTP) route by ``related_to``; stdio ignores it.
    """

    # A plain class, not a dataclass: making a dataclass costs every process's start-up ~0.3 ms.
    __slots__ = ("message", "related_to")

    def __init__(self, message: Message | list[Message], related_to: RequestId | None = None) -> None:
        self.message = message
        self.related_to = related_to


class Handler(Protocol):
    """What a session delegates to: the server's or the client's dispatch."""

    def accepts_batches(self) -> bool: ...

    async def handle_request(self, request: Request, call: InFlight) -> Any:
        """Return the result object, or raise :class:`MCPError`."""

    async def handle_notification(self, notification: Notification) -> None:
        """Called in arrival order, before the next message is read: keep it short."""


class InFlight:
    """An incoming request being served: its cancel scope and its progress channel."""

    __slots__ = ("request", "scope", "cancelled", "done", "extras", "_session", "_last_progress")

    def __init__(self, session: Session, request: Request, extras: object = None) -> None:
        self.request = request
        #: What the transport attached to this call, passed through unread (see ``plainmcp.peer``).
        self.extras = extras
        self.scope = anyio.CancelScope()
        self.cancelled = False
        self.done = False
        self._session = session
        self._last_progress = -math.inf

    @property
    def progress_token(self) -> str | int | None:
        meta = (self.request.params or {}).get("_meta")
        token = meta.get(protocol.PROGRESS_TOKEN) if isinstance(meta, dict) else None
        return token if is_id(token) else None

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Send ``notifications/progress`` if the request asked for it.

        Silently does nothing without a progress token or after the response; a value that does
        not increase is dropped with a warning, since the specification requires increase.
        """
        token = self.progress_token
        if token is None or self.done:
            return
        if not progress > self._last_progress:
            logger.warning("progress %r does not increase on request %r; not sent", progress, self.request.id)
            return
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._session.notify(protocol.PROGRESS, params, related_to=self.request.id)


class _Pending:
    """An outgoing request waiting for its reply."""

    __slots__ = ("event", "on_progress", "reply")

    def __init__(self, event: anyio.Event, on_progress: ProgressCallback | None) -> None:
        self.event = event
        self.on_progress = on_progress
        self.reply: Message | None = None


class Session:
    """A JSON-RPC peer. Call :meth:`run` in a task; it returns at end of input, after a grace period.

    Args:
        read_stream: decoded input from the transport; its end is the end of the connection.
        write_stream: outbound envelopes for the transport; closed when :meth:`run` returns.
        handler: dispatch for incoming requests and notifications.
        request_timeout: default seconds to wait for an answer to our own requests (None: forever).
        shutdown_grace: seconds in-flight requests get to finish after end of input.
        observer: told about every incoming request once it is answered or cancelled.
        max_in_flight: incoming requests served at once; past it a request is refused at once
            with ``-32603`` "Server busy" (a peer cannot make the server hold unbounded work).
        first_request_id: the id of our first request (then counting up): copies of one HTTP
            session on several replicas start far apart, so a reply names the request it answers.
    """

    def __init__(
        self,
        read_stream: ObjectReceiveStream[Decoded],
        write_stream: ObjectSendStream[Outbound],
        handler: Handler,
        *,
        request_timeout: float | None = 60.0,
        shutdown_grace: float = 2.0,
        observer: Observer | None = None,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        first_request_id: int = 1,
    ) -> None:
        self._read_stream = read_stream
        self._write_stream = write_stream
        self._handler = handler
        self.request_timeout = request_timeout
        self.shutdown_grace = shutdown_grace
        self.observer = observer
        self.max_in_flight = max_in_flight
        self._in_flight: dict[RequestId, InFlight] = {}
        self._expected: dict[RequestId, object] = {}  # see expect()
        self._pending: dict[RequestId, _Pending] = {}
        self._progress_routes: dict[str | int, RequestId] = {}
        self._ids = itertools.count(first_request_id)
        self._tasks: RequestTasks | None = None
        self._active = 0
        self._idle: anyio.Event | None = None  # made only when someone waits for the work to end
        self._closed = False
        #: Set when the peer's input ends: long-lived handlers (listen streams) finish on it.
        self.input_ended = anyio.Event()

    # ----------------------------------------------------------------------------------- running

    async def run(self) -> None:
        """Serve until the read stream ends, then let in-flight work finish (bounded) and close."""
        try:
            async with anyio.create_task_group() as task_group:
                self._tasks = tasks = RequestTasks(task_group)
                try:
                    await self._read_until_end()
                    # End of input: nothing we asked can be answered any more.
                    self._closed = True
                    self.input_ended.set()
                    self._fail_pending("Input ended")
                    if self._active:
                        self._idle = anyio.Event()
                        with anyio.move_on_after(self.shutdown_grace):
                            await self._idle.wait()
                finally:
                    await tasks.aclose()  # what is still running is cancelled, and waited for
                task_group.cancel_scope.cancel()
        finally:
            self._closed = True
            self.input_ended.set()
            self._fail_pending("Connection closed")
            await self._write_stream.aclose()

    @property
    def closed(self) -> bool:
        """True once the peer's input has ended: no request of ours can be answered any more."""
        return self._closed

    async def _read_until_end(self) -> None:
        async with self._read_stream:
            receive_nowait = getattr(self._read_stream, "receive_nowait", None)
            while True:
                try:
                    # What is already queued needs no event-loop turn (memory streams).
                    item = receive_nowait() if receive_nowait is not None else await self._read_stream.receive()
                except anyio.WouldBlock:
                    try:
                        item = await self._read_stream.receive()
                    except anyio.EndOfStream:
                        return
                except anyio.EndOfStream:
                    return
                await self._dispatch(item)

    def _start(self, func: Callable[..., Any], *args: Any) -> None:
        assert self._tasks is not None
        self._active += 1
        self._tasks.start_soon(self._tracked, func, *args, name="plainmcp-request")

    async def _tracked(self, func: Callable[..., Any], *args: Any) -> None:
        try:
            await func(*args)
        finally:
            self._active -= 1
            if self._active == 0 and self._idle is not None:
                self._idle.set()

    def spawn(self, func: Callable[..., Any], *args: Any) -> None:
        """Run background work tied to this session's life (cancelled when it ends)."""
        self._start(func, *args)

    # ---------------------------------------------------------------------------------- incoming

    async def _dispatch(self, item: Decoded) -> None:
        if isinstance(item, Request):
            if item.id in self._in_flight:
                await self._send(
                    error_response(item.id, ErrorCode.INVALID_REQUEST, "Invalid Request: id already in use")
                )
                return
            if len(self._in_flight) >= self.max_in_flight:
                await self._send(self._busy(item.id))
                return
            # Registered before its task runs: a cancellation read right after it must find it.
            self._start(self._serve_request, self._register(item))
        elif isinstance(item, Notification):
            await self._on_notification(item)
        elif isinstance(item, (Response, ErrorResponse)):
            self._on_reply(item)
        elif isinstance(item, Invalid):
            if item.reply is not None:
                await self._send(item.reply)
            else:
                logger.debug("dropped an invalid notification: %s", item.reason)
        elif isinstance(item, Batch):
            if self._handler.accepts_batches():
                self._start(self._serve_batch, item)
            else:
                await self._send(
                    error_response(
                        None,
                        ErrorCode.INVALID_REQUEST,
                        "Invalid Request: batches are not supported in this protocol revision",
                    )
                )

    async def answer(self, request: Request, extras: object = None) -> Message | None:
        """Serve one request in the caller's task and return its reply (None when cancelled).

        For transports where every request is an exchange of its own (2026-07-28 over HTTP): no
        read loop and no task per request. :meth:`cancel` from another task cancels it.
        """
        return await self._answer(self._register(request, extras))

    def cancel(self, request_id: RequestId, reason: str = "") -> None:
        """Cancel an incoming request, as ``notifications/cancelled`` from the peer would."""
        self._on_cancelled({"requestId": request_id, "reason": reason})

    def end_input(self) -> None:
        """Declare the peer's input over without a read loop (long-lived handlers finish)."""
        self._closed = True
        self.input_ended.set()

    def expect(self, request_id: RequestId, extras: object) -> None:
        """Attach ``extras`` to the request with this id, about to arrive on the read stream (the
        transport's per-call object: the session passes it on as ``InFlight.extras`` unread)."""
        if len(self._expected) < _MAX_EXPECTED:
            self._expected[request_id] = extras

    def _busy(self, request_id: RequestId) -> Message:
        return error_response(
            request_id,
            ErrorCode.INTERNAL_ERROR,
            f"Server busy: {self.max_in_flight} requests are already being served on this connection; "
            "retry when one has finished",
        )

    def _register(self, request: Request, extras: object = None) -> InFlight:
        if self._expected:
            extras = self._expected.pop(request.id, extras)
        call = InFlight(self, request, extras)
        self._in_flight[request.id] = call
        return call

    async def _serve_request(self, call: InFlight) -> None:
        reply = await self._answer(call)
        if reply is not None:
            await self._send(reply)

    async def _serve_batch(self, batch: Batch) -> None:
        replies: list[Message] = []

        async def answer_into(call: InFlight) -> None:
            reply = await self._answer(call)
            if reply is not None:
                replies.append(reply)

        async with anyio.create_task_group() as task_group:
            for item in batch.items:
                if isinstance(item, Request):
                    if item.id in self._in_flight:
                        replies.append(
                            error_response(item.id, ErrorCode.INVALID_REQUEST, "Invalid Request: id already in use")
                        )
                    elif len(self._in_flight) >= self.max_in_flight:
                        replies.append(self._busy(item.id))
                    else:
                        task_group.start_soon(answer_into, self._register(item))
                elif isinstance(item, Invalid):
                    if item.reply is not None:
                        replies.append(item.reply)
                else:
                    await self._dispatch(item)
        if replies:
            await self._send_outbound(Outbound(replies))

    async def _answer(self, call: InFlight) -> Message | None:
        """Run the handler; return the reply, or None when the request was cancelled.

        The one place where exceptions become error responses.
        """
        request = call.request
        reply: Message | None = None
        started = time.perf_counter() if self.observer is not None else 0.0
        if call.cancelled:  # cancelled before its task started: never run it
            self._in_flight.pop(request.id, None)
            self._observe(request, None, started)
            return None
        try:
            with call.scope:
                try:
                    reply = Response(request.id, await self._handler.handle_request(request, call))
                except RequestFailed as exc:
                    # A request the handler made to the peer failed and the handler did not deal
                    # with it: that error belongs to the other request, so it is not passed on.
                    logger.warning(
                        "request %r (%s) failed on a request to the peer: %s", request.id, request.method, exc.message
                    )
                    reply = error_response(request.id, ErrorCode.INTERNAL_ERROR, "Internal error")
                except MCPError as exc:
                    reply = ErrorResponse(request.id, exc.to_dict())
                except Exception:
                    logger.exception("request %r (%s) failed", request.id, request.method)
                    reply = error_response(request.id, ErrorCode.INTERNAL_ERROR, "Internal error")
        finally:
            call.done = True
            self._in_flight.pop(request.id, None)
            if call.cancelled or call.scope.cancel_called:
                reply = None
            self._observe(request, reply, started)  # also when the whole session is being cancelled
        return reply

    def _observe(self, request: Request, reply: Message | None, started: float) -> None:
        if self.observer is None:
            return
        try:
            self.observer(request, reply, time.perf_counter() - started)
        except Exception:
            logger.exception("the request observer failed")

    async def _on_notification(self, notification: Notification) -> None:
        if notification.method == protocol.CANCELLED:
            self._on_cancelled(notification.params or {})
        elif notification.method == protocol.PROGRESS:
            self._on_progress(notification.params or {})
        else:
            try:
                await self._handler.handle_notification(notification)
            except Exception:
                logger.exception("notification %s failed", notification.method)

    def _on_cancelled(self, params: dict[str, Any]) -> None:
        request_id = params.get("requestId")
        # Only a real id: a dict would not hash, and True or 1.0 would match the id 1.
        call = self._in_flight.get(request_id) if is_id(request_id) else None
        if call is None:
            return  # unknown or already answered: the specification says ignore it
        if call.request.method == protocol.INITIALIZE:
            return  # initialize MUST NOT be cancelled
        logger.debug("request %r cancelled by the peer: %s", call.request.id, params.get("reason"))
        call.cancelled = True
        call.scope.cancel()

    def _on_progress(self, params: dict[str, Any]) -> None:
        token = params.get("progressToken")
        request_id = self._progress_routes.get(token) if is_id(token) else None
        pending = self._pending.get(request_id) if request_id is not None else None
        progress = params.get("progress")
        if pending is None or pending.on_progress is None or not isinstance(progress, (int, float)):
            return
        try:
            pending.on_progress(progress, params.get("total"), params.get("message"))
        except Exception:
            logger.exception("progress callback failed")

    def _on_reply(self, reply: Response | ErrorResponse) -> None:
        pending = self._pending.get(reply.id) if reply.id is not None else None
        if pending is None:
            if isinstance(reply, ErrorResponse) and reply.id is None:
                logger.warning("peer reported an error: %s", reply.error)
            else:
                logger.warning("dropped a response with unknown id %r", reply.id)
            return
        pending.reply = reply
        pending.event.set()

    # ---------------------------------------------------------------------------------- outgoing

    async def _send(self, message: Message) -> None:
        await self._send_outbound(Outbound(message))

    async def _send_outbound(self, outbound: Outbound) -> None:
        try:
            await self._write_stream.send(outbound)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            logger.debug("peer gone; dropped %r", outbound.message)

    async def notify(
        self, method: str, params: dict[str, Any] | None = None, *, related_to: RequestId | None = None
    ) -> None:
        """Send a notification."""
        await self._send_outbound(Outbound(Notification(method, params), related_to))

    async def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = -1,
        on_progress: ProgressCallback | None = None,
        related_to: RequestId | None = None,
        request_id: RequestId | None = None,
    ) -> Any:
        """Send a request and wait for its result.

        Args:
            timeout: seconds; -1 (the default) means the session's ``request_timeout``; None waits
                forever.
            on_progress: called with (progress, total, message) for the peer's progress reports.
            request_id: the id to use (from :meth:`next_id`), for callers that must know it first.

        Raises:
            RequestFailed: the peer's error response; ``REQUEST_TIMEOUT`` when it did not answer in
                time (the peer is then sent ``notifications/cancelled``) or the connection closed.
        """
        if self._closed:
            raise RequestFailed(ErrorCode.REQUEST_TIMEOUT, "Connection closed")
        if request_id is None:
            request_id = self.next_id()
        if on_progress is not None:
            params = dict(params or {})
            params["_meta"] = {**params.get("_meta", {}), protocol.PROGRESS_TOKEN: request_id}
            self._progress_routes[request_id] = request_id
        pending = _Pending(anyio.Event(), on_progress)
        self._pending[request_id] = pending
        seconds = self.request_timeout if timeout == -1 else timeout
        try:
            await self._send_outbound(Outbound(Request(request_id, method, params), related_to))
            with anyio.fail_after(seconds):
                await pending.event.wait()
        except TimeoutError:
            await self._cancel_remote(request_id, "timeout", related_to)
            raise RequestFailed(ErrorCode.REQUEST_TIMEOUT, f"Request {method} timed out after {seconds} s") from None
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel_remote(request_id, "cancelled", related_to)
            raise
        finally:
            self._pending.pop(request_id, None)
            self._progress_routes.pop(request_id, None)
        reply = pending.reply
        if isinstance(reply, Response):
            return reply.result
        if isinstance(reply, ErrorResponse):
            error = reply.error
            raise RequestFailed(error["code"], error["message"], error.get("data"))
        raise RequestFailed(ErrorCode.REQUEST_TIMEOUT, "Connection closed")

    def awaits(self, request_id: RequestId | None) -> bool:
        """Whether a request of ours with this id is waiting for its answer."""
        return request_id in self._pending

    def next_id(self) -> int:
        """A fresh id for an outgoing request."""
        return next(self._ids)

    async def _cancel_remote(self, request_id: RequestId, reason: str, related_to: RequestId | None) -> None:
        if not self._closed:
            await self.notify(protocol.CANCELLED, {"requestId": request_id, "reason": reason}, related_to=related_to)

    def _fail_pending(self, reason: str) -> None:
        for pending in self._pending.values():
            pending.event.set()  # reply stays None: request() raises "Connection closed"
        logger.debug("%s with %d requests unanswered", reason, len(self._pending))
