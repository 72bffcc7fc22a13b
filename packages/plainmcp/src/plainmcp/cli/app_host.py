"""The development host of ``plainmcp app``: a web page that renders a tool's MCP Apps view as a host does.

Two origins on 127.0.0.1 (two ports), as the extension asks of a web host: the *host page* (``/``, its script
and the bundled ``AppBridge`` of ``@modelcontextprotocol/ext-apps``) and the *sandbox proxy* (``/sandbox``),
whose inner iframe holds the view under the Content-Security-Policy built from the view's ``_meta.ui.csp``.
The page speaks to the MCP server through ``POST /mcp`` on its own origin: this process forwards the call
through the real plainmcp :class:`~plainmcp.Client` it holds (stdio or HTTP), so a view's ``tools/call``
reaches the real server. Only the methods a view may use are forwarded, and a view may call only the tools
whose visibility includes ``"app"``.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import socket
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from ..apps import APP_MIME, FLAT_RESOURCE_URI
from ..errors import ErrorCode, MCPError

logger = logging.getLogger(__name__)

ASSETS = resources.files("plainmcp") / "apphost"
BRIDGE = "app-bridge.js"
#: ``POST /mcp`` methods, by who asks: the host page itself (the tool call it renders), or the view.
FORWARDED = {"host": {"tools/call"}, "app": {"tools/call", "resources/read", "ping"}}
MAX_BODY = 1 << 20
#: An origin a view may declare in ``_meta.ui.csp`` (scheme, host with an optional ``*.``, port): nothing
#: that could end a directive or add a keyword.
_ORIGIN = re.compile(r"^(https?|wss?)://(\*\.)?[A-Za-z0-9.-]+(:\d{1,5})?$")
#: The restrictive default the specification requires when a view declares no ``csp``.
DEFAULT_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; "
    "object-src 'none'; base-uri 'self'"
)


class BridgeMissing(RuntimeError):
    """The bundled host bridge is not there (a checkout where ``tools/app_bridge.py`` has not run)."""


def bridge_script() -> bytes:
    """The bundled ``AppBridge``; raises :class:`BridgeMissing` with the command that builds it."""
    try:
        return (ASSETS / BRIDGE).read_bytes()
    except OSError:
        raise BridgeMissing(
            "the MCP Apps host bridge is not built: run `python3 tools/app_bridge.py` in the plainmcp checkout "
            "(it bundles npm @modelcontextprotocol/ext-apps; a wheel built after it ships the bundle)"
        ) from None


def view_csp(csp: Any) -> str:
    """The sandbox's Content-Security-Policy for a view's ``_meta.ui.csp`` (the specification's construction;
    its restrictive default when none is declared). Origins that are not plain origins are dropped."""
    if not isinstance(csp, dict):
        return DEFAULT_CSP

    def origins(key: str) -> list[str]:
        value = csp.get(key)
        listed = value if isinstance(value, list) else []
        kept = [origin for origin in listed if isinstance(origin, str) and _ORIGIN.match(origin)]
        if len(kept) != len(listed):
            logger.warning("dropped origins of %s that are not plain origins: %r", key, listed)
        return kept

    resource = " ".join(origins("resourceDomains"))
    connect = " ".join(origins("connectDomains")) or "'none'"
    frames = " ".join(origins("frameDomains")) or "'none'"
    base = " ".join(origins("baseUriDomains")) or "'self'"
    return (
        f"default-src 'none'; script-src 'self' 'unsafe-inline' {resource}; style-src 'self' 'unsafe-inline' {resource}; "
        f"img-src 'self' data: {resource}; font-src 'self' {resource}; media-src 'self' data: {resource}; "
        f"connect-src {connect}; frame-src {frames}; object-src 'none'; base-uri {base}"
    ).replace("  ", " ")


@dataclass
class View:
    """A tool's view as read from the server: its HTML and its ``_meta.ui``."""

    uri: str
    html: str
    ui: dict[str, Any] = field(default_factory=dict)


def _object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a peer's data is checked, not trusted)."""
    return value if isinstance(value, dict) else {}


def resource_uri(tool: dict[str, Any]) -> str | None:
    """The view a listed tool names: ``_meta.ui.resourceUri``, or the deprecated flat key."""
    meta = _object(tool.get("_meta"))
    uri = _object(meta.get("ui")).get("resourceUri", meta.get(FLAT_RESOURCE_URI))
    return uri if isinstance(uri, str) else None


def visibility(tool: dict[str, Any]) -> list[str]:
    """Who may use a listed tool (``_meta.ui.visibility``; both the model and the view by default)."""
    seen = _object(_object(tool.get("_meta")).get("ui")).get("visibility")
    return [str(who) for who in seen] if isinstance(seen, list) else ["model", "app"]


async def read_view(client: Any, uri: str, listed_ui: Any = None) -> View:
    """The view ``uri`` read through ``client``; raises MCPError when it is not an MCP Apps document."""
    contents = (await client.read_resource(uri)).get("contents") or []
    item = next((c for c in contents if isinstance(c, dict) and c.get("uri") == uri), None)
    if item is None or item.get("mimeType") != APP_MIME:
        raise MCPError(ErrorCode.INVALID_PARAMS, f"{uri} is not an MCP Apps view ({APP_MIME})")
    if isinstance(item.get("text"), str):
        html = item["text"]
    else:
        html = base64.b64decode(str(item.get("blob", ""))).decode("utf-8")
    ui = _object(item.get("_meta")).get("ui")
    return View(uri, html, ui if isinstance(ui, dict) else _object(listed_ui))


@dataclass
class HostSession:
    """What the page renders (the tool, its arguments, its view), and the client its calls go through."""

    client: Any
    tool: dict[str, Any]
    arguments: dict[str, Any]
    view: View
    tools: list[dict[str, Any]]
    theme: str = "light"

    def describe(self, sandbox_origin: str) -> dict[str, Any]:
        """``GET /session``: everything the page needs to start."""
        return {
            "tool": self.tool,
            "arguments": self.arguments,
            "view": {"uri": self.view.uri, "html": self.view.html, "ui": self.view.ui},
            # What a host would put in front of the model: app-only tools are left out (the spec's visibility).
            "modelTools": [t["name"] for t in self.tools if "model" in visibility(t)],
            "sandbox": sandbox_origin,
            "theme": self.theme,
        }

    async def forward(self, caller: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """One request from the page (``caller`` "host") or the view ("app"), through the client."""
        if method not in FORWARDED.get(caller, set()):
            raise MCPError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "ping":
            return {}
        if method == "resources/read":
            return dict(await self.client.read_resource(str(params.get("uri", ""))))
        name = params.get("name")
        tool = next((t for t in self.tools if t.get("name") == name), None)
        allowed = "app" if caller == "app" else "model"
        if tool is None or allowed not in visibility(tool):
            # The spec: a host rejects a view's call of a tool whose visibility leaves out "app".
            raise MCPError(ErrorCode.INVALID_PARAMS, f"Tool {name!r} is not available to the {allowed}")
        arguments = params.get("arguments")
        return dict(await self.client.call_tool(str(name), arguments if isinstance(arguments, dict) else {}))


Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


class AppHost:
    """The ASGI app of both origins: the page on ``host_port``, the sandbox proxy on ``sandbox_port``."""

    def __init__(self, session: HostSession, host_port: int, sandbox_port: int) -> None:
        self.session = session
        self.host_origin = f"http://127.0.0.1:{host_port}"
        self.sandbox_origin = f"http://127.0.0.1:{sandbox_port}"
        self.ports = {host_port: "host", sandbox_port: "sandbox"}

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        side = self.ports.get((scope.get("server") or ("", 0))[1])
        origin = self.host_origin if side == "host" else self.sandbox_origin
        if side is None or _header(scope, "host") != origin.removeprefix("http://"):
            await _respond(send, 421, b"misdirected request", "text/plain")  # DNS rebinding, another port
            return
        path, method = scope["path"], scope["method"]
        if side == "host":
            await self._host(scope, receive, send, path, method)
        else:
            await self._sandbox(scope, send, path, method)

    async def _host(self, scope: dict[str, Any], receive: Receive, send: Send, path: str, method: str) -> None:
        page_csp = (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            f"frame-src {self.sandbox_origin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        headers = [("content-security-policy", page_csp)]
        if method == "GET" and path in ("/", "/host.js", "/host.css", "/" + BRIDGE):
            name = "host.html" if path == "/" else path[1:]
            body = bridge_script() if name == BRIDGE else (ASSETS / name).read_bytes()
            await _respond(send, 200, body, _TYPES[name.rsplit(".", 1)[1]], headers)
        elif method == "GET" and path == "/favicon.ico":
            await _respond(send, 204, b"", "image/x-icon", headers)
        elif method == "GET" and path == "/session":
            await _respond_json(send, 200, self.session.describe(self.sandbox_origin), headers)
        elif method == "POST" and path == "/mcp":
            await self._forward(scope, receive, send)
        else:
            await _respond(send, 404, b"not found", "text/plain", headers)

    async def _forward(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if _header(scope, "origin") != self.host_origin:
            await _respond(send, 403, b"forbidden origin", "text/plain")
            return
        body = await _read_body(receive)
        try:
            request = json.loads(body) if body is not None else None
        except ValueError:
            request = None
        if not isinstance(request, dict) or not isinstance(request.get("method"), str):
            await _respond_json(
                send, 400, {"error": {"code": int(ErrorCode.INVALID_REQUEST), "message": "bad request"}}
            )
            return
        params = _object(request.get("params"))
        try:
            answer: dict[str, Any] = {
                "result": await self.session.forward(str(request.get("caller")), request["method"], params)
            }
        except MCPError as error:
            answer = {"error": {"code": int(error.code), "message": error.message}}
        except Exception:  # the server went away, a timeout: the page shows a generic failure
            logger.exception("forwarding %s failed", request["method"])
            answer = {"error": {"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}}
        await _respond_json(send, 200, answer)

    async def _sandbox(self, scope: dict[str, Any], send: Send, path: str, method: str) -> None:
        if method == "GET" and path == "/sandbox":
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            try:
                csp = json.loads(query.get("csp", ["null"])[0])
            except ValueError:
                csp = None
            page = (ASSETS / "sandbox.html").read_text(encoding="utf-8").replace("{{HOST_ORIGIN}}", self.host_origin)
            headers = [
                # The view's iframe is a srcdoc document: it inherits this policy, the one its csp asks for.
                ("content-security-policy", view_csp(csp) + f"; frame-ancestors {self.host_origin}"),
                ("cache-control", "no-store"),
            ]
            await _respond(send, 200, page.encode("utf-8"), "text/html; charset=utf-8", headers)
        elif method == "GET" and path == "/sandbox.js":
            await _respond(send, 200, (ASSETS / "sandbox.js").read_bytes(), _TYPES["js"])
        else:
            await _respond(send, 404, b"not found", "text/plain")


_TYPES = {"html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8"}


def _header(scope: dict[str, Any], name: str) -> str | None:
    wanted = name.encode("latin-1")
    for key, value in scope.get("headers", []):
        if key.lower() == wanted:
            return bytes(value).decode("latin-1")
    return None


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)


async def _respond(
    send: Send, status: int, body: bytes, content_type: str, headers: list[tuple[str, str]] | None = None
) -> None:
    raw = [(b"content-type", content_type.encode()), (b"content-length", b"%d" % len(body))]
    raw += [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
    raw += [(key.encode(), value.encode()) for key, value in headers or []]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _respond_json(send: Send, status: int, payload: Any, headers: list[tuple[str, str]] | None = None) -> None:
    await _respond(send, status, json.dumps(payload).encode("utf-8"), "application/json", headers)


def listen(port: int = 0) -> socket.socket:
    """A listening TCP socket on 127.0.0.1 (``port`` 0: a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    return sock


async def serve(session: HostSession, port: int, on_ready: Callable[[str], None]) -> None:
    """Serve the page on 127.0.0.1:``port`` (0: a free port) and the sandbox on a free port beside it;
    calls ``on_ready(url)`` once both listen, then serves until cancelled."""
    import uvicorn

    bridge_script()  # refuse to start without the bridge, with the command that builds it
    host_socket, sandbox_socket = listen(port), listen(0)
    app = AppHost(session, host_socket.getsockname()[1], sandbox_socket.getsockname()[1])
    config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False)
    server = uvicorn.Server(config)
    on_ready(app.host_origin + "/")
    await server.serve(sockets=[host_socket, sandbox_socket])
