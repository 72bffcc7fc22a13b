"""DNS-rebinding protection on every MCP path: a foreign ``Host`` is 421, a foreign ``Origin`` 403.

Loopback names are accepted by default; ``--allowed-host`` / ``--allowed-origin`` admit more.
``/health`` answers whatever the Host. Real server processes, raw httpx.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from .http_server import (
    ServerProcess,
    dumps,
    initialize_body,
    legacy_headers,
    modern_body,
    modern_headers,
    server_process,
    sync_client,
)

MISDIRECTED = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Misdirected request: unknown Host"}}
FORBIDDEN = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Forbidden: Origin not allowed"}}


@pytest.fixture(scope="module")
def srv() -> Iterator[ServerProcess]:
    with server_process() as server:
        yield server


@pytest.fixture(scope="module")
def proxied() -> Iterator[ServerProcess]:
    with server_process(
        "--allowed-host",
        "mcp.proxy.example, other.proxy.example",
        "--allowed-origin",
        "https://app.example",
    ) as server:
        yield server


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with sync_client() as c:
        yield c


def modern_call() -> tuple[bytes, dict[str, str]]:
    body = modern_body(1, "tools/call", {"name": "test_simple_text", "arguments": {}})
    return dumps(body), modern_headers(body)


def requests_for(server: ServerProcess) -> list[tuple[str, str, bytes | None, dict[str, str]]]:
    """One request per MCP path and method: (method, url, body, headers)."""
    modern_content, modern = modern_call()
    return [
        ("POST", server.url, dumps(initialize_body()), legacy_headers(version=None)),
        ("POST", server.url, modern_content, modern),
        ("GET", server.url, None, {"Accept": "text/event-stream", "Mcp-Session-Id": "x"}),
        ("DELETE", server.url, None, {"Mcp-Session-Id": "x"}),
        ("GET", f"{server.base_url}/sse", None, {"Accept": "text/event-stream"}),
        (
            "POST",
            f"{server.base_url}/messages?session_id=x",
            dumps(initialize_body()),
            {"Content-Type": "application/json"},
        ),
    ]


def send(client: httpx.Client, method: str, url: str, body: bytes | None, headers: dict[str, str]) -> httpx.Response:
    # A bad request is answered at once, so even GET /sse is a plain (non-streaming) exchange here.
    return client.request(method, url, content=body, headers=headers)


@pytest.mark.parametrize(
    "host", ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "localhost.evil.example:1"]
)
def test_foreign_host_is_421_on_every_path(srv, client, host):
    for method, url, body, headers in requests_for(srv):
        response = send(client, method, url, body, {**headers, "Host": host})
        assert response.status_code == 421, (method, url)
        assert response.json() == MISDIRECTED
        assert "mcp-session-id" not in response.headers


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://evil.example:8000",
        "null",
        "http://localhost.evil.example",
        "http://127.0.0.1.evil.example",
        "file://",
    ],
)
def test_foreign_origin_is_403_on_every_path(srv, client, origin):
    for method, url, body, headers in requests_for(srv):
        response = send(client, method, url, body, {**headers, "Origin": origin})
        assert response.status_code == 403, (method, url, origin)
        assert response.json() == FORBIDDEN
        assert "mcp-session-id" not in response.headers


def test_loopback_origins_and_hosts_are_accepted(srv, client):
    port = srv.port
    for origin in (f"http://localhost:{port}", f"http://127.0.0.1:{port}", f"http://[::1]:{port}", "http://localhost"):
        init = client.post(
            srv.url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), "Origin": origin}
        )
        assert init.status_code == 200, origin
        assert init.json()["result"]["serverInfo"]["name"] == "plainmcp-everything"
        client.delete(srv.url, headers={"Mcp-Session-Id": init.headers["mcp-session-id"]})
        content, headers = modern_call()
        modern = client.post(srv.url, content=content, headers={**headers, "Origin": origin})
        assert modern.status_code == 200, origin
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
        content, headers = modern_call()
        response = client.post(srv.url, content=content, headers={**headers, "Host": host})
        assert response.status_code == 200, host
    with client.stream(
        "GET", f"{srv.base_url}/sse", headers={"Accept": "text/event-stream", "Origin": f"http://localhost:{port}"}
    ) as stream:
        assert stream.status_code == 200
        assert next(stream.iter_lines()) == "event: endpoint"


def test_health_needs_no_host_check(srv, client):
    for headers in ({"Host": "evil.example"}, {"Origin": "https://evil.example"}, {}):
        response = client.get(f"{srv.base_url}/health", headers=headers)
        assert response.status_code == 200
        assert response.json() == {"status": "ok", "server": "plainmcp-everything", "version": "0.1.0"}


def test_allowed_host_and_origin_flags(proxied, client):
    content, headers = modern_call()
    for host in ("mcp.proxy.example", "other.proxy.example:443", "MCP.Proxy.Example"):
        response = client.post(proxied.url, content=content, headers={**headers, "Host": host})
        assert response.status_code == 200, host
        assert response.json()["result"]["content"][0]["text"] == "This is a simple text response for testing."
    ok = client.post(
        proxied.url, content=content, headers={**headers, "Host": "mcp.proxy.example", "Origin": "https://app.example"}
    )
    assert ok.status_code == 200
    # An origin on an allowed host's name is accepted too (the site behind the proxy).
    same_site = client.post(proxied.url, content=content, headers={**headers, "Origin": "https://mcp.proxy.example"})
    assert same_site.status_code == 200
    init = client.post(
        proxied.url,
        content=dumps(initialize_body()),
        headers={**legacy_headers(version=None), "Origin": "https://app.example"},
    )
    assert init.status_code == 200
    with client.stream(
        "GET", f"{proxied.base_url}/sse", headers={"Accept": "text/event-stream", "Host": "mcp.proxy.example"}
    ) as stream:
        assert stream.status_code == 200
    # Names that were not admitted stay refused.
    evil_host = client.post(proxied.url, content=content, headers={**headers, "Host": "evil.example"})
    assert evil_host.status_code == 421
    assert evil_host.json() == MISDIRECTED
    for origin in ("https://evil.example", "http://app.example", "https://app.example.evil"):
        evil_origin = client.post(proxied.url, content=content, headers={**headers, "Origin": origin})
        assert evil_origin.status_code == 403, origin
        assert evil_origin.json() == FORBIDDEN
    # Loopback still works.
    local = client.post(proxied.url, content=content, headers={**headers, "Origin": f"http://127.0.0.1:{proxied.port}"})
    assert local.status_code == 200


def test_host_check_comes_before_anything_else(srv, client):
    # A foreign Host is refused even for an invalid body or a bad Accept header.
    response = client.post(srv.url, content=b"{nope", headers={"Host": "evil.example", "Content-Type": "text/plain"})
    assert response.status_code == 421
    response = client.post(srv.url, content=b"{nope", headers={"Origin": "https://evil.example", "Accept": "text/html"})
    assert response.status_code == 403
