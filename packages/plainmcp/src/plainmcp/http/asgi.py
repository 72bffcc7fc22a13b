"""Small ASGI helpers for the HTTP transports: headers, bodies, responses, SSE streams, host checks.

No framework: the transports speak raw ASGI, so they mount into any ASGI application.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

import anyio

from .. import sse
from ..errors import ErrorCode

logger = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SSE_HEADERS = (
    ("content-type", "text/event-stream"),
    ("cache-control", "no-cache, no-transform"),
    ("x-accel-buffering", "no"),
)


class BodyTooLarge(Exception):
    """The request body exceeds the configured limit."""


class ClientGone(Exception):
    """The client disconnected before the request body arrived."""


_HEADER_TABLE = "plainmcp.headers"  # scope key of the request's headers by name, built on first use
_REPEATED = "plainmcp.repeated_headers"  # scope key of the names sent more than once (when any)


def _header_table(scope: Scope) -> dict[str, str]:
    table = scope.get(_HEADER_TABLE)
    if table is None:
        # One pass over the header list per request, decoding each header once, instead of one
        # pass and one decoding per lookup: a request is asked for ten or so headers on its way.
        table = {}
        repeated = None
        for raw_key, raw_value in scope.get("headers", ()):
            key = raw_key.decode("latin-1").lower()
            if key in table:
                repeated = (repeated or set()) | {key}
            else:
                table[key] = raw_value.decode("latin-1").strip()
        scope[_HEADER_TABLE] = table
        if repeated:
            scope[_REPEATED] = repeated
    return table


def header(scope: Scope, name: str) -> str | None:
    """The first value of a request header (names compare case-insensitively)."""
    return _header_table(scope).get(name.lower())


def repeated_header(scope: Scope, names: Iterable[str]) -> str | None:
    """The first of ``names`` that the request sent more than once, else None."""
    _header_table(scope)
    repeated = scope.get(_REPEATED)
    if repeated:
        for name in names:
            if name.lower() in repeated:
                return name
    return None


def principal_subject(scope: Scope) -> str | None:
    """Who the request is from, as the HTTP app's authentication put it in ``scope["state"]``
    (None without authentication)."""
    principal = (scope.get("state") or {}).get("principal")
    return getattr(principal, "subject", None)


def log_extra(scope: Scope) -> dict[str, Any]:
    """``extra`` for a log line about this request: its id, when the HTTP app assigned one."""
    return {"request_id": (scope.get("state") or {}).get("request_id")}


async def read_body(receive: Receive, limit: int) -> bytes:
    """The whole request body. Raises BodyTooLarge past ``limit`` bytes, ClientGone on disconnect."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def read_json_body(scope: Scope, receive: Receive, send: Send, limit: int) -> bytes | None:
    """The body of a JSON POST; None once answered otherwise: 415 when it is not JSON, 413 past
    ``limit`` bytes, nothing at all when the client left."""
    if (header(scope, "content-type") or "").split(";")[0].strip().lower() != "application/json":
        await respond_json(
            send, 415, error_payload(ErrorCode.INVALID_REQUEST, "Unsupported Media Type: send application/json")
        )
        return None
    try:
        return await read_body(receive, limit)
    except BodyTooLarge:
        await respond_json(send, 413, error_payload(ErrorCode.INVALID_REQUEST, f"Request body exceeds {limit} bytes"))
    except ClientGone:
        pass
    return None


def _encode_headers(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers]


async def respond(
    send: Send,
    status: int,
    body: bytes = b"",
    *,
    content_type: str | None = None,
    headers: Iterable[tuple[str, str]] = (),
) -> None:
    raw = _encode_headers(headers)
    if content_type is not None:
        raw.append((b"content-type", content_type.encode("latin-1")))
    raw.append((b"content-length", b"%d" % len(body)))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def respond_json(send: Send, status: int, payload: Any, *, headers: Iterable[tuple[str, str]] = ()) -> None:
    try:
        body = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (an id or a name echoed back): legal as a JSON escape, not in UTF-8.
        body = json.dumps(payload, separators=(",", ":")).encode("ascii")
    await respond(send, status, body, content_type="application/json", headers=headers)


def error_payload(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    """A JSON-RPC error response body (``id`` null when there is no request to answer)."""
    error: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class EventStream:
    """An SSE response in progress."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False

    async def start(self, headers: Iterable[tuple[str, str]] = ()) -> None:
        await self._send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": _encode_headers([*SSE_HEADERS, *headers]),
            }
        )
        self.started = True

    async def write(self, data: bytes) -> None:
        await self._send({"type": "http.response.body", "body": data, "more_body": True})

    async def event(
        self, data: str, *, event: str | None = None, id: str | None = None, retry: int | None = None
    ) -> None:
        await self.write(sse.encode(data, event=event, id=id, retry=retry))

    async def close(self) -> None:
        await self._send({"type": "http.response.body", "body": b"", "more_body": False})

    async def keep_alive(self, seconds: float) -> None:
        """Write a comment line every ``seconds``, so idle proxies and clients keep the stream."""
        while True:
            await anyio.sleep(seconds)
            await self.write(sse.comment("keep-alive"))


async def wait_disconnect(receive: Receive) -> None:
    """Return when the client has gone (call once the request body has been read)."""
    while (await receive())["type"] != "http.disconnect":
        pass


# ------------------------------------------------------------------------------ DNS rebinding


LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _host_name(value: str) -> str:
    """The host part of a Host header or URL authority, lowercased, brackets and port removed."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@functools.lru_cache(maxsize=256)  # a client sends the same Host on every request
def _is_loopback(name: str) -> bool:
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class HostPolicy:
    """Which ``Host`` and ``Origin`` values a server accepts (DNS-rebinding protection).

    By default only loopback names: a page on the web cannot make a browser talk to this server.
    Deployments behind a proxy add their public names to ``allowed_hosts`` (and the sites allowed
    to call from a browser to ``allowed_origins``); ``"*"`` turns a check off.
    """

    def __init__(self, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()) -> None:
        self.allowed_hosts = {_host_name(h) for h in allowed_hosts}
        self.allowed_origins = {o.strip().lower().rstrip("/") for o in allowed_origins}

    def host_allowed(self, host: str | None) -> bool:
        if "*" in self.allowed_hosts:
            return True
        if not host:
            return False
        name = _host_name(host)
        return _is_loopback(name) or name in self.allowed_hosts

    def origin_allowed(self, origin: str | None) -> bool:
        if origin is None or "*" in self.allowed_origins:
            return True  # requests from non-browser clients carry no Origin
        origin = origin.strip().lower().rstrip("/")
        if origin in self.allowed_origins:
            return True
        parts = urlsplit(origin)
        return (
            parts.scheme in ("http", "https")
            and parts.hostname is not None
            and (_is_loopback(parts.hostname) or _host_name(parts.netloc) in self.allowed_hosts)
        )

    async def reject(self, scope: Scope, send: Send) -> bool:
        """Answer and return True if the request must be refused: 421 for a foreign Host, 403
        for a foreign Origin."""
        if not self.host_allowed(header(scope, "host")):
            logger.warning("refused a request for host %r", header(scope, "host"), extra=log_extra(scope))
            await respond_json(send, 421, error_payload(ErrorCode.INVALID_REQUEST, "Misdirected request: unknown Host"))
            return True
        if not self.origin_allowed(header(scope, "origin")):
            logger.warning("refused a request from origin %r", header(scope, "origin"), extra=log_extra(scope))
            await respond_json(send, 403, error_payload(ErrorCode.INVALID_REQUEST, "Forbidden: Origin not allowed"))
            return True
        return False
