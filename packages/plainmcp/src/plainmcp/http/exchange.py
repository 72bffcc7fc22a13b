"""One HTTP request as the app sees it pass: its request id, its time limits, its access-log line.

The request id is the client's (``X-Request-ID``, else ``X-MCP-Request-ID``) when it is a short
visible-ASCII string, else a fresh UUID. It goes back on every response in both headers, into the
ASGI scope's ``state`` (``scope["state"]["request_id"]``, for code the app calls), and into the
structured log line written when the request ends. No context variable: the id travels explicitly.

Slow clients are bounded: a request body must arrive within ``body_timeout`` (else ``408``), and
each write must be taken within ``write_timeout``; a client that stops reading a stream has its
request cancelled and its connection closed.
"""

from __future__ import annotations

import logging
import math
import re
import secrets
import time
import uuid
from collections.abc import Callable
from typing import Any

import anyio

from ..errors import ErrorCode
from ..log_sink import log_later
from .asgi import Message, Receive, Scope, Send, error_payload, header, respond_json
from .body_deadlines import BodyDeadlines

logger = logging.getLogger(__name__)

REQUEST_ID_HEADERS = ("x-request-id", "x-mcp-request-id")
_USABLE_ID = re.compile(r"[\x21-\x7e]{1,128}")


_SMALL_BODY = 64 * 1024


class RequestIds:
    """Fresh request ids, shaped as version 4 UUIDs and cheap to mint: a random prefix (74 random
    bits, drawn again every 2**48 ids) and a counter in the last 12 hex digits. Unique within the
    process, and across processes as random UUIDs are; a request id is echoed to its client and
    logged, never a secret, so it needs no fresh randomness per request (``uuid.uuid4()`` reads
    the OS's random source on every call)."""

    def __init__(self) -> None:
        self._prefix = ""
        self._next = 1 << 48  # reseed on the first call

    def __call__(self) -> str:
        if self._next >= 1 << 48:
            self._prefix = str(uuid.uuid4())[:24]  # "xxxxxxxx-xxxx-4xxx-yxxx-"
            self._next = secrets.randbelow(1 << 47)
        value = self._next
        self._next = value + 1
        return f"{self._prefix}{value:012x}"


def request_id_of(scope: Scope, new_id: Callable[[], str] | None = None) -> str:
    """The client's request id if it sent a usable one, else ``new_id()`` (default: a new UUID)."""
    for name in REQUEST_ID_HEADERS:
        value = header(scope, name)
        if value and _USABLE_ID.fullmatch(value):
            return value
    return new_id() if new_id is not None else str(uuid.uuid4())


class Exchange:
    """Wraps ``receive`` and ``send`` of one request. Run the app inside :attr:`cancel_scope`.

    Args:
        body_timeout: seconds for the whole request body to arrive.
        write_timeout: seconds one ``send`` may wait for a client that does not read.
        on_stream: called with +1 when an SSE response starts and -1 when the request ends.
        new_id: mints the request id when the client sent no usable one (default: a UUID).
        deadlines: the app's keeper of body deadlines (default, or outside its lifespan: a timer
            of this request's own).
    """

    def __init__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        *,
        body_timeout: float | None = 30.0,
        write_timeout: float | None = 30.0,
        on_stream: Callable[[int], None] | None = None,
        new_id: Callable[[], str] | None = None,
        deadlines: BodyDeadlines | None = None,
    ) -> None:
        self.scope = scope
        self.id = request_id_of(scope, new_id)
        scope.setdefault("state", {})["request_id"] = self.id
        self._receive = receive
        self._send = send
        self.body_timeout = body_timeout
        self.write_timeout = write_timeout
        self.on_stream = on_stream
        self.started = time.perf_counter()
        self.cancel_scope = anyio.CancelScope()
        self.status: int | None = None
        self.streaming = False
        self.session: str | None = header(scope, "mcp-session-id")
        self.bytes_in = 0
        self.bytes_out = 0
        self.body_timed_out = False
        self.stalled = False
        self._body_done = False
        self._deadline_set = False
        self._own_deadline = False
        self._deadlines = deadlines if body_timeout is not None else None
        self._id_header = self.id.encode("ascii")

    # ------------------------------------------------------------------------------- receiving

    async def receive(self) -> Message:
        if self._body_done or self.body_timeout is None:
            message = await self._receive()
            self._count_in(message)
            return message
        if not self._deadline_set:
            # Until the body is in, its deadline is the request's: passing it cancels the request
            # (the cancel scope the app runs in), which is then answered 408 (see
            # :meth:`timed_out_response`). The app's sweeper keeps the clock; outside the app's
            # lifespan, a timer on the cancel scope does.
            self._deadline_set = True
            if self._deadlines is None or not self._deadlines.add(self):
                self._own_deadline = True
                self.cancel_scope.deadline = anyio.current_time() + self.body_timeout
        message = await self._receive()
        self._count_in(message)
        if self._body_done:
            self._stop_clock()
        return message

    def _stop_clock(self) -> None:
        if self._own_deadline:
            self.cancel_scope.deadline = math.inf
        elif self._deadlines is not None:
            self._deadlines.drop(self)

    def body_deadline_passed(self) -> None:
        """The body did not arrive in time (the app's sweeper calls this)."""
        if not self._body_done:
            self.cancel_scope.cancel()

    def _count_in(self, message: Message) -> None:
        if message["type"] == "http.request":
            self.bytes_in += len(message.get("body", b""))
            if not message.get("more_body", False):
                self._body_done = True
        else:
            self._body_done = True

    # --------------------------------------------------------------------------------- sending

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = [
                *message.get("headers", ()),
                (b"x-request-id", self._id_header),
                (b"x-mcp-request-id", self._id_header),
            ]
            message = {**message, "headers": headers}
            self.status = message["status"]
            for name, value in headers:
                name = name.lower()
                if name == b"content-type":
                    self.streaming = value.startswith(b"text/event-stream")
                elif name == b"mcp-session-id":
                    self.session = value.decode("latin-1")  # the session this request opened or used
            if self.streaming and self.on_stream is not None:
                self.on_stream(1)
        elif message["type"] == "http.response.body":
            self.bytes_out += len(message.get("body", b""))
        if self.write_timeout is None or not (self.streaming or len(message.get("body", b"")) > _SMALL_BODY):
            # A small one-shot answer goes into the server's buffer at once; only streams and big
            # bodies can wait on a client that stopped reading, and only they pay for a timer.
            await self._send(message)
            return
        with anyio.move_on_after(self.write_timeout) as waiting:
            await self._send(message)
        if waiting.cancelled_caught:
            self.stalled = True
            logger.warning("request %s: the client stopped reading for %g s; dropped", self.id, self.write_timeout)
            self.cancel_scope.cancel()
            await anyio.lowlevel.checkpoint()  # raises the cancellation here, inside the scope
            raise TimeoutError("the client stopped reading")

    async def timed_out_response(self) -> None:
        """Answer 408 if the body timed out before anything was sent. Call when the app has
        returned from :attr:`cancel_scope`."""
        if self._deadline_set and not self._body_done and self.cancel_scope.cancelled_caught and not self.stalled:
            self.body_timed_out = True
            logger.info("request %s: body not received within %g s", self.id, self.body_timeout)
        if self.body_timed_out and self.status is None:
            await respond_json(
                self.send,
                408,
                error_payload(ErrorCode.INVALID_REQUEST, "Request Timeout: the body did not arrive in time"),
                headers=[("connection", "close")],
            )

    # ----------------------------------------------------------------------------------- ending

    def finish(self, *, route: str, extra: dict[str, Any] | None = None) -> None:
        """Write the access-log line (debug level for probes and scrapes)."""
        if not self._body_done and self._deadline_set:
            self._stop_clock()
        if self.streaming and self.on_stream is not None:
            self.on_stream(-1)
        level = logging.DEBUG if route in ("/health", "/metrics") else logging.INFO
        if not logger.isEnabledFor(level):
            return
        # The values only: the line is made later, with many others (log_sink.log_later).
        scope = self.scope
        values = (
            scope.get("method"), scope.get("path"), self.status, (time.perf_counter() - self.started) * 1000,
            self.id, self.bytes_in, self.bytes_out, header(scope, "mcp-method"), self.session, self.stalled, extra,
        )  # fmt: skip
        log_later(logger, level, access_line, values)


def access_line(
    method: str | None,
    path: str | None,
    status: int | None,
    milliseconds: float,
    request_id: str,
    bytes_in: int,
    bytes_out: int,
    mcp_method: str | None,
    session: str | None,
    stalled: bool,
    extra: dict[str, Any] | None,
    *,
    brief: bool,
) -> tuple[str, dict[str, Any]]:
    """The access line's message (``POST /mcp 200 0.8 ms``) and its fields (``brief``: the request id
    alone), from what :meth:`Exchange.finish` kept."""
    shown_status = status if status is not None else "-"
    message = f"{method} {path} {shown_status} {milliseconds:.1f} ms"
    if brief:
        return message, {"request_id": request_id}
    fields: dict[str, Any] = {
        "request_id": request_id,
        "method": method,
        "path": path,
        "status": status,
        "duration_ms": round(milliseconds, 2),
        "bytes_in": bytes_in,
        "bytes_out": bytes_out,
    }
    if mcp_method:
        fields["mcp_method"] = mcp_method[:100]
    if session:
        fields["mcp_session"] = session[:8]  # a prefix: the full id lets anyone use the session
    if stalled:
        fields["stalled"] = True
    fields.update(extra or {})
    return message, fields
