"""The two servers of the OAuth end-to-end tests, both real and both on 127.0.0.1.

- :func:`authorization_server`: panva's ``oidc-provider`` (a certified OpenID Provider and OAuth 2
  authorization server), pinned and installed once under ``.ci-cache/node/oauth-server`` by
  ``tools/npm_prefix.py``, run with the pinned Node and configured by ``authorization_server.mjs``.
- :func:`protected_server`: a plainmcp server over Streamable HTTP whose every request needs a JWT
  access token from that authorization server for its resource (``JWTVerifier`` against the
  server's JWKS, issuer and audience checked, no clock leeway), and which serves its Protected
  Resource Metadata (RFC 9728) naming the authorization server.

:func:`play_browser` is the person at the browser: it opens the authorization URL, signs in on the
provider's login form, approves on its consent form and follows the redirect to the loopback
callback, as a browser does (cookies, form posts, redirects), with httpx.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import httpx
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.http.auth import BearerAuth
from plainmcp.http.jwt_auth import JWTVerifier

from tests.e2e.http_server import free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import npm_prefix  # noqa: E402  (tools/ is not a package)

PACKAGES = {"oidc-provider": "9.13.3"}
SCRIPT = Path(__file__).with_name("authorization_server.mjs")
SCOPE = "mcp:tools"
SERVER_NAME = "oauth-protected"
STARTUP_SECONDS = 30


@dataclass
class AuthorizationServer:
    issuer: str
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)  # its stderr lines (grant events)

    def grants(self, kind: str) -> int:
        """How many successful token requests of grant type ``kind`` it answered."""
        return sum(1 for line in list(self.log) if line.strip() == f"grant.success {kind}")


def _pump(stream: Any, lines: list[str]) -> None:
    for line in stream:
        lines.append(line)


@contextmanager
def authorization_server(access_token_ttl: int = 3600) -> Iterator[AuthorizationServer]:
    prefix = npm_prefix.ensure_prefix("oauth-server", PACKAGES)
    env = {
        **os.environ,
        "OIDC_PROVIDER": str(prefix / "node_modules" / "oidc-provider" / "lib" / "index.js"),
        "ACCESS_TOKEN_TTL": str(access_token_ttl),
        "PROTECTED_PREFIX": "http://127.0.0.1:",
    }
    process = subprocess.Popen(
        [npm_prefix.node(), str(SCRIPT)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()  # the script prints its issuer once it listens
        if not first:
            raise RuntimeError(f"the authorization server did not start: {process.stderr.read()}")
        server = AuthorizationServer(json.loads(first)["issuer"], process)
        threading.Thread(target=_pump, args=(process.stderr, server.log), daemon=True).start()
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def build_server() -> Server:
    server = Server(SERVER_NAME, "1.0.0")

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    async def echo(ctx, args):
        """Say the text back."""
        return args["text"]

    @server.tool(input_schema={"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}})
    async def add(ctx, args):
        """Add two integers."""
        return str(args.get("a", 0) + args.get("b", 0))

    return server


@dataclass
class ProtectedServer:
    url: str
    app: MCPApp


@contextmanager
def protected_server(issuer: str) -> Iterator[ProtectedServer]:
    """The plainmcp server at ``http://127.0.0.1:<port>/mcp``, on a thread of its own."""
    import uvicorn

    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    verifier = JWTVerifier(audience=url, issuer=issuer, jwks_url=f"{issuer}/jwks", leeway=0)
    auth = BearerAuth([verifier], authorization_servers=[issuer], scopes_supported=[SCOPE])
    app = MCPApp(build_server(), auth=auth)
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on", log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"protected-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the protected server did not start")
            time.sleep(0.02)
        wait_healthy(f"http://127.0.0.1:{port}", deadline)
        yield ProtectedServer(url, app)
    finally:
        server.should_exit = True
        thread.join(10)


FORM = re.compile(r"<form[^>]*action=\"([^\"]+)\"[^>]*>(.*?)</form>", re.S)
HIDDEN = re.compile(r"<input[^>]*type=\"hidden\"[^>]*name=\"([^\"]+)\"[^>]*value=\"([^\"]*)\"")


def _form(page: httpx.Response) -> tuple[str, dict[str, str]]:
    found = FORM.search(page.text)
    if found is None:
        raise AssertionError(f"no form on {page.url} (HTTP {page.status_code}): {page.text[:500]}")
    action, body = found.groups()
    return urljoin(str(page.url), unescape(action)), {name: unescape(value) for name, value in HIDDEN.findall(body)}


def play_browser(authorization_url: str, login: str = "alice") -> httpx.Response:
    """Sign in and consent on the provider's pages; returns the loopback callback's answer."""
    with httpx.Client(follow_redirects=True, timeout=30) as browser:
        page = browser.get(authorization_url)
        action, fields = _form(page)
        assert fields.get("prompt") == "login", page.text[:500]
        page = browser.post(action, data={**fields, "login": login, "password": "any password"})
        if "/callback" not in str(page.url):  # a first grant for this client: the consent page
            action, fields = _form(page)
            assert fields.get("prompt") == "consent", page.text[:500]
            page = browser.post(action, data=fields)
        assert "/callback" in str(page.url) and page.url.host == "127.0.0.1", page.url
        return page


AUTH_URL = re.compile(r"(http://127\.0\.0\.1:\d+/auth\?\S+)")


def wait_for_url(stream: Any, seen: list[str], timeout: float = 60) -> str:
    """Read ``stream`` (a process's stderr) line by line until the printed authorization URL."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()
        if not line:
            break
        seen.append(line)
        found = AUTH_URL.search(line)
        if found:
            return found.group(1)
    raise AssertionError("no authorization URL was printed:\n" + "".join(seen))
