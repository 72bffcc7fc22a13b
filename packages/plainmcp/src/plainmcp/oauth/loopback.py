"""A person's authorization: the browser, and the redirect received on 127.0.0.1 (RFC 8252).

:class:`LoopbackAuthorizer` binds ``127.0.0.1:0`` when it is made, so its ``redirect_uri``
(``http://127.0.0.1:<port>/callback``) is known before the client registers. ``authorize(url)``
prints the URL on stderr (always: the browser may not open, or open on another screen), opens the
browser where there is a display, and waits for exactly one request to ``/callback`` carrying the
``state`` of that URL. The browser gets a small page; requests to other paths get 404 and are
otherwise ignored, as is a callback with another ``state`` (a forged or stale redirect). The wait is
bounded (``timeout``) and cancellable; the socket is closed when it ends, and bound again (same
port, so the registered redirect URI still matches) if another authorization follows.

Each request is read with a size bound and a deadline, so a stuck or hostile local connection
cannot hold the flow. The query parameters (the authorization code among them) are never logged.
"""

from __future__ import annotations

import html
import logging
import os
import socket
import sys
import webbrowser
from typing import Any, TextIO
from urllib.parse import parse_qsl, urlsplit

import anyio
import anyio.abc

logger = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
#: The most of one request this reads (request line and headers; a callback has no body).
MAX_REQUEST_BYTES = 16 * 1024
#: Seconds one connection may take to send its request.
REQUEST_DEADLINE = 10.0
#: Connections answered at once; more are closed unanswered.
MAX_CONNECTIONS = 16


class AuthorizationTimeout(TimeoutError):
    """No callback came within the authorizer's timeout."""


class LoopbackAuthorizer:
    """The browser and a one-shot redirect listener on 127.0.0.1.

    Args:
        open_browser: open the URL with :mod:`webbrowser` (only where there is a display: on Linux,
            ``DISPLAY``, ``WAYLAND_DISPLAY`` or ``BROWSER`` set; console browsers are never started).
        timeout: seconds to wait for the callback.
        output: where the URL is printed (stderr).
    """

    def __init__(self, *, open_browser: bool = True, timeout: float = 300.0, output: TextIO | None = None) -> None:
        self.open_browser = open_browser
        self.timeout = timeout
        self.output = output
        self._socket: socket.socket | None = _bind(0)
        self.port: int = self._socket.getsockname()[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"

    async def authorize(self, url: str) -> dict[str, str]:
        """Send the person to ``url`` and return the redirect's query parameters.

        Raises:
            AuthorizationTimeout: no matching callback within ``timeout`` seconds.
            ValueError: ``url`` carries no ``state`` (the callback could not be told from a forgery).
            OSError: the port cannot be bound again for a second authorization.
        """
        state = dict(parse_qsl(urlsplit(url).query)).get("state")
        if not state:
            raise ValueError("the authorization URL has no state parameter")
        if self._socket is None:
            self._socket = _bind(self.port)
        listener = await anyio.abc.SocketListener.from_socket(self._socket)
        self._socket = None  # the listener owns it now, and closes it
        try:
            self._show(url)
            with anyio.fail_after(self.timeout):
                return await self._serve(listener, state)
        except TimeoutError:
            raise AuthorizationTimeout(f"no answer from the browser within {self.timeout:g} seconds") from None
        finally:
            await listener.aclose()

    async def _serve(self, listener: Any, state: str) -> dict[str, str]:
        """Answer connections (each in its own task, so a slow one holds up no other) until the callback."""
        found: dict[str, str] = {}
        active = 0
        async with anyio.create_task_group() as group:

            async def serve(stream: Any) -> None:
                nonlocal active
                try:
                    params = await self._answer(stream, state)
                finally:
                    active -= 1
                if params is not None and not group.cancel_scope.cancel_called:
                    found.update(params)
                    group.cancel_scope.cancel()

            while True:
                stream = await listener.accept()
                if active >= MAX_CONNECTIONS:
                    await stream.aclose()
                    continue
                active += 1
                group.start_soon(serve, stream)
        return found

    def close(self) -> None:
        """Release the port (when no authorization is under way)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None

    def _show(self, url: str) -> None:
        output = self.output or sys.stderr
        print(f"To authorize, open this URL in your browser:\n\n    {url}\n", file=output, flush=True)
        if self.open_browser and _has_display():
            try:
                webbrowser.open(url)
            except Exception as error:  # no usable browser: the printed URL is the way
                logger.info("could not open a browser: %s", type(error).__name__)

    async def _answer(self, stream: Any, state: str) -> dict[str, str] | None:
        """Read one request and answer it; the callback's parameters when it is the one we wait for."""
        async with stream:
            try:
                with anyio.fail_after(REQUEST_DEADLINE):
                    head = await _read_head(stream)
            except (TimeoutError, anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return None
            target = _request_target(head)
            if target is None:
                await _respond(stream, 400, "Bad request", "This is not a request this page answers.")
                return None
            path, _, query = target.partition("?")
            if path != CALLBACK_PATH:
                await _respond(stream, 404, "Not found", "Nothing here.")
                return None
            params = dict(parse_qsl(query, keep_blank_values=True))
            if params.get("state") != state:
                logger.info("ignored a callback with an unexpected state")
                await _respond(stream, 400, "Unexpected callback", "This answer is not for the sign-in under way.")
                return None
            if "error" in params:
                await _respond(stream, 200, "Authorization refused", "You can close this tab and return.")
            else:
                await _respond(stream, 200, "Authorized", "You can close this tab and return to plainmcp.")
            return params


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        sock.listen(8)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock


def _has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return any(os.environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))


async def _read_head(stream: Any) -> bytes:
    """The request up to the blank line after the headers (at most MAX_REQUEST_BYTES)."""
    head = b""
    while b"\r\n\r\n" not in head and b"\n\n" not in head:
        if len(head) > MAX_REQUEST_BYTES:
            break
        head += await stream.receive(4096)
    return head[:MAX_REQUEST_BYTES]


def _request_target(head: bytes) -> str | None:
    """The target of a ``GET`` request line, or None."""
    line = head.split(b"\n", 1)[0].strip()
    parts = line.split(b" ")
    if len(parts) != 3 or parts[0] != b"GET" or not parts[2].startswith(b"HTTP/1."):
        return None
    try:
        return parts[1].decode("ascii")
    except UnicodeDecodeError:
        return None


async def _respond(stream: Any, status: int, title: str, text: str) -> None:
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    title, text = html.escape(title), html.escape(text)
    body = (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head>"
        f"<body style='font-family:sans-serif;margin:3em'><h1>{title}</h1><p>{text}</p></body></html>"
    )
    encoded = body.encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n"
        f"content-length: {len(encoded)}\r\ncache-control: no-store\r\nreferrer-policy: no-referrer\r\n"
        "connection: close\r\n\r\n"
    )
    try:
        await stream.send(head.encode("ascii") + encoded)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
        pass
