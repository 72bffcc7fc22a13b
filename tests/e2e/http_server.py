"""HTTP harness for the transport tests: real servers on 127.0.0.1, raw requests, raw SSE.

- :func:`server_process` runs ``python -m plainmcp_everything --transport http|sse`` on a free port,
  waits (bounded) until ``GET /health`` answers 200, and ends it with SIGTERM, then SIGKILL.
- :func:`app_in_thread` serves an ``MCPApp`` of a test's own server with uvicorn on a thread.
- :class:`SSEReader` reads a streaming httpx response event by event, priming events (empty
  ``data``) and comments included, every read bounded by a timeout.
- Request builders for both eras, so the tests spell out only what they vary.

Every wait here is bounded; nothing talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

HOST = "127.0.0.1"
STARTUP_SECONDS = 20.0
STOP_SECONDS = 5.0
#: Upper bound for one read on a stream / one request, in the tests.
TIMEOUT = 10.0

MODERN = "2026-07-28"
LATEST_LEGACY = "2025-11-25"
ACCEPT_BOTH = "application/json, text/event-stream"
SERVER_NAME = "plainmcp-everything"
SERVER_VERSION = "0.1.0"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the caller retries if it is taken by then)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_healthy(base_url: str, deadline: float, alive: Any = None) -> None:
    """Poll ``GET /health`` until 200 (raises past ``deadline`` or if ``alive()`` turns false)."""
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if alive is not None and not alive():
            raise RuntimeError("the server exited during startup")
        try:
            if httpx.get(f"{base_url}/health", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError as error:
            last_error = error
        time.sleep(0.05)
    raise TimeoutError(f"{base_url}/health did not answer 200 in time (last error: {last_error!r})")


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    port: int
    log_path: str

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    def log(self) -> str:
        with open(self.log_path, encoding="utf-8", errors="replace") as file:
            return file.read()

    def stop(self) -> int | None:
        return stop_process(self.process)


def stop_process(process: subprocess.Popen[bytes], seconds: float = STOP_SECONDS) -> int | None:
    """SIGTERM, wait (bounded), then SIGKILL; returns the exit code."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(seconds)
    return process.returncode


@contextlib.contextmanager
def server_process(
    *args: str, transport: str = "http", module: str = "plainmcp_everything", env: dict[str, str] | None = None
) -> Iterator[ServerProcess]:
    """``python -m <module> --transport <transport> <args>`` (the everything fixture unless told
    otherwise) as a real process serving HTTP on a free loopback port; ``env`` adds variables."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="plainmcp-http-", suffix=".log", delete=False)
    command = [sys.executable, "-m", module, "--transport", transport, "--port", str(port), *args]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    server = ServerProcess(process, port, log.name)
    try:
        try:
            wait_healthy(server.base_url, time.monotonic() + STARTUP_SECONDS, lambda: process.poll() is None)
        except Exception as error:
            server.stop()
            raise RuntimeError(f"server did not start: {error}\n--- log ---\n{server.log()}") from error
        yield server
    finally:
        server.stop()
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


@dataclass
class ThreadedApp:
    port: int
    app: Any

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"


@contextlib.contextmanager
def app_in_thread(app: Any) -> Iterator[ThreadedApp]:
    """Serve an ASGI app (an ``MCPApp``) with uvicorn on a thread of its own, on a free port."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(
        app, host=HOST, port=port, lifespan="on", log_config=None, access_log=False, timeout_graceful_shutdown=2
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not server.started:
            if not thread.is_alive():
                raise RuntimeError("uvicorn exited during startup")
            if time.monotonic() > deadline:
                raise TimeoutError("uvicorn did not start in time")
            time.sleep(0.02)
        wait_healthy(f"http://{HOST}:{port}", deadline)
        yield ThreadedApp(port, app)
    finally:
        server.should_exit = True
        thread.join(STOP_SECONDS + 3)
        if thread.is_alive():
            server.force_exit = True
            thread.join(STOP_SECONDS)
        assert not thread.is_alive(), "uvicorn did not stop"


# ------------------------------------------------------------------------------------- requests


def rpc(request_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize_body(request_id: Any = 0, version: str = LATEST_LEGACY) -> dict[str, Any]:
    return rpc(
        request_id,
        "initialize",
        {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "e2e-http", "version": "0"}},
    )


def call_body(request_id: Any, name: str, arguments: dict[str, Any] | None = None, meta: dict[str, Any] | None = None):
    params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if meta:
        params["_meta"] = meta
    return rpc(request_id, "tools/call", params)


def legacy_headers(session_id: str | None = None, version: str | None = LATEST_LEGACY, **extra: str) -> dict[str, str]:
    headers = {"Accept": ACCEPT_BOTH, "Content-Type": "application/json"}
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
    if version is not None:
        headers["MCP-Protocol-Version"] = version
    headers.update(extra)
    return headers


def envelope(version: str = MODERN, capabilities: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities if capabilities is not None else {},
        "io.modelcontextprotocol/clientInfo": {"name": "e2e-http", "version": "0"},
    }
    meta.update(more)
    return meta


def modern_body(
    request_id: Any, method: str, params: dict[str, Any] | None = None, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A 2026-07-28 request: ``params`` plus the ``_meta`` envelope (``meta`` adds/overrides keys)."""
    body_params = dict(params or {})
    body_params["_meta"] = {**envelope(), **(meta or {})}
    return rpc(request_id, method, body_params)


def modern_headers(body: dict[str, Any], **override: str | None) -> dict[str, str]:
    """The mirrored headers a correct client sends for ``body``; ``override`` replaces (None drops) one."""
    params = body.get("params") or {}
    headers: dict[str, str | None] = {
        "Accept": ACCEPT_BOTH,
        "Content-Type": "application/json",
        "MCP-Protocol-Version": params.get("_meta", {}).get("io.modelcontextprotocol/protocolVersion", MODERN),
        "Mcp-Method": body["method"],
    }
    source = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(body["method"])
    if source is not None:
        headers["Mcp-Name"] = header_value(params[source])
    for name, value in override.items():
        headers[name.replace("_", "-")] = value
    return {name: value for name, value in headers.items() if value is not None}


def header_value(value: str) -> str:
    """A header-safe value: as is when visible ASCII, else the ``=?base64?...?=`` form."""
    if (
        value
        and all(0x21 <= ord(c) <= 0x7E for c in value)
        and not (value.startswith("=?base64?") and value.endswith("?="))
    ):
        return value
    return base64_header(value)


def base64_header(value: str) -> str:
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


def text_result(request_id: Any, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


def server_info_meta(*, full: bool = False) -> dict[str, Any]:
    """The ``_meta`` of a 2026-07-28 result: name and version, and with ``full`` (server/discover's)
    the whole serverInfo."""
    info: dict[str, Any] = {"name": SERVER_NAME, "version": SERVER_VERSION}
    if full:
        info["title"] = "Everything (MCP conformance fixture)"
        info["description"] = "Every MCP feature, under the names the official conformance suite expects"
    return {"io.modelcontextprotocol/serverInfo": info}


def modern_text_result(request_id: Any, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": text}], "resultType": "complete", "_meta": server_info_meta()},
    }


# ------------------------------------------------------------------------------------------ SSE


@dataclass
class Event:
    """One SSE event as it was on the wire (``data`` may be empty: a priming event)."""

    data: str
    event: str | None = None
    id: str | None = None
    retry: int | None = None
    fields: list[str] = field(default_factory=list)

    def json(self) -> Any:
        return json.loads(self.data)


class StreamEnded(Exception):
    """The server closed the SSE stream."""


class SSEReader:
    """Reads events off a streaming httpx response; each read is bounded by ``timeout``."""

    def __init__(self, response: httpx.Response, timeout: float = TIMEOUT) -> None:
        self.response = response
        self.timeout = timeout
        self._chunks = response.aiter_raw()
        self._buffer = b""
        self._pending: asyncio.Future[bytes | None] | None = None
        self.comments: list[str] = []
        self.ended = False
        response.sse_reader = self  # type: ignore[attr-defined]  # closed by open_stream

    async def _read(self) -> bytes | None:
        try:
            return await self._chunks.__anext__()
        except StopAsyncIteration:
            return None

    async def _more(self) -> bool:
        # The read runs as a task of its own, so a timeout here (move_on_after, fail_after)
        # leaves it pending for the next call instead of tearing down httpx's byte iterator.
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._read())
        chunk = await asyncio.shield(self._pending)
        self._pending = None
        if chunk is None:
            self.ended = True
            return False
        self._buffer += chunk
        return True

    async def aclose(self) -> None:
        if self._pending is not None and not self._pending.done():
            self._pending.cancel()
            await asyncio.wait([self._pending])
        self._pending = None

    async def next(self, timeout: float | None = None) -> Event:
        """The next event; raises :class:`StreamEnded` when the stream ends first, TimeoutError after ``timeout``."""
        with anyio.fail_after(timeout if timeout is not None else self.timeout):
            while True:
                event = self._take()
                if event is not None:
                    return event
                if self.ended or not await self._more():
                    if self._buffer.strip():
                        raise AssertionError(f"stream ended inside an event: {self._buffer!r}")
                    raise StreamEnded

    async def rest(self, timeout: float | None = None) -> list[Event]:
        """Every event until the server ends the stream (bounded as a whole)."""
        events = []
        with anyio.fail_after(timeout if timeout is not None else self.timeout):
            while True:
                try:
                    events.append(await self.next())
                except StreamEnded:
                    return events

    async def assert_quiet(self, seconds: float) -> None:
        """Nothing but comments (keep-alives) arrives for ``seconds`` and the stream stays open."""
        with anyio.move_on_after(seconds):
            event = await self.next(timeout=seconds + 5)
            raise AssertionError(f"unexpected event: {event}")

    def _take(self) -> Event | None:
        normalized = self._buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = normalized.find(b"\n\n")
        while end != -1:
            block, self._buffer = normalized[:end].decode("utf-8"), normalized[end + 2 :]
            normalized = self._buffer
            lines = block.split("\n")
            if all(line.startswith(":") for line in lines):
                self.comments.extend(lines)
                end = normalized.find(b"\n\n")
                continue
            event = Event(data="")
            data_lines = []
            for line in lines:
                if line.startswith(":"):
                    self.comments.append(line)
                    continue
                name, _, value = line.partition(":")
                value = value.removeprefix(" ")
                event.fields.append(name)
                if name == "data":
                    data_lines.append(value)
                elif name == "event":
                    event.event = value
                elif name == "id":
                    event.id = value
                elif name == "retry":
                    event.retry = int(value)
                else:
                    raise AssertionError(f"unknown SSE field {name!r} in {block!r}")
            event.data = "\n".join(data_lines)
            return event
        self._buffer = normalized
        return None


@contextlib.asynccontextmanager
async def open_stream(client: httpx.AsyncClient, method: str, url: str, **kwargs: Any):
    """A streaming request: yields the response (closing it, and so the connection, at exit)."""
    request = client.build_request(method, url, **kwargs)
    with anyio.fail_after(TIMEOUT):
        response = await client.send(request, stream=True)
    try:
        yield response
    finally:
        with anyio.move_on_after(STOP_SECONDS, shield=True):
            reader = getattr(response, "sse_reader", None)
            if reader is not None:
                await reader.aclose()
            await response.aclose()


def async_client(**kwargs: Any) -> httpx.AsyncClient:
    """A raw client: no pooling across tests, every wait bounded."""
    kwargs.setdefault("timeout", httpx.Timeout(TIMEOUT))
    kwargs.setdefault("trust_env", False)
    return httpx.AsyncClient(**kwargs)


def sync_client(**kwargs: Any) -> httpx.Client:
    kwargs.setdefault("timeout", httpx.Timeout(TIMEOUT))
    kwargs.setdefault("trust_env", False)
    return httpx.Client(**kwargs)


def legacy_session(client: httpx.Client, url: str, version: str = LATEST_LEGACY) -> str:
    """Initialize a legacy session (and send ``notifications/initialized``); returns its id."""
    response = client.post(url, content=dumps(initialize_body(0, version)), headers=legacy_headers(version=None))
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = client.post(
        url,
        content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        headers=legacy_headers(session_id, version),
    )
    assert note.status_code == 202, note.text
    return session_id


async def alegacy_session(client: httpx.AsyncClient, url: str, version: str = LATEST_LEGACY) -> str:
    response = await client.post(url, content=dumps(initialize_body(0, version)), headers=legacy_headers(version=None))
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = await client.post(
        url,
        content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        headers=legacy_headers(session_id, version),
    )
    assert note.status_code == 202, note.text
    return session_id
