"""A resource server and an authorization server on 127.0.0.1, configurable per test, recording
every request they get: what the client's discovery, registration and grants are judged by.

The resource server is a real plainmcp server (``MCPApp``) behind a small bearer check that knows
the tokens the authorization server issued (and their scopes); the authorization server approves
at once (the headless authorizer follows its redirect), like the conformance suite's. Both run
under uvicorn on threads of their own, so the client under test talks real HTTP.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from plainmcp import Server
from plainmcp.http.app import MCPApp

from tests.e2e.http_server import free_port

STARTUP_SECONDS = 30
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
WORKLOAD_JWT = "workload.jwt.from-the-platform"  # the scene's AS takes this one assertion
ID_TOKEN = "the.persons.id-token"  # what the scene's IdP exchanges for an ID-JAG
ID_JAG_TYPE = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass
class Settings:
    """What the two servers do; tests change fields between requests too (migration, expiry)."""

    prm_paths: tuple[str, ...] = ("/.well-known/oauth-protected-resource/mcp",)
    prm_in_challenge: bool = True
    prm_resource: str | None = None  # None: the MCP endpoint's URL
    scopes_supported: list[str] | None = None  # the PRM's
    challenge_scope: str | None = None  # scope in the 401's challenge
    required_scopes: dict[str, list[str]] = field(default_factory=dict)  # method -> scopes (else 403)
    no_prm: bool = False  # a 2025-03-26 server
    issuer_path: str = ""  # the AS's issuer is its origin + this
    metadata_paths: tuple[str, ...] | None = None  # None: the RFC 8414 path for the issuer
    metadata: dict[str, Any] = field(default_factory=dict)  # merged into the AS metadata
    issuer_override: str | None = None  # the metadata's issuer claims this
    iss_in_redirect: str = "correct"  # correct | wrong | omit | slash
    issue_refresh_tokens: bool = True
    reject_refresh: bool = False
    withheld_scopes: list[str] = field(default_factory=list)  # asked for, never granted
    dpop: bool = False  # the AS binds tokens to a DPoP proof's key; the RS challenges with DPoP
    as_nonce: str | None = None  # with dpop: the token endpoint wants this nonce in proofs
    rs_nonce: str | None = None  # with dpop: the resource server wants this nonce in proofs


@dataclass
class Recorder:
    requests: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # (server, path, details)

    def paths(self, server: str) -> list[str]:
        return [path for who, path, _ in self.requests if who == server]

    def of(self, server: str, path: str) -> list[dict[str, Any]]:
        return [details for who, p, details in self.requests if who == server and p == path]


class AuthorizationServer:
    def __init__(self, settings: Settings, recorder: Recorder, tokens: dict[str, list[str]]) -> None:
        self.settings = settings
        self.recorder = recorder
        self.tokens = tokens  # access token -> scopes, shared with the resource server
        self.refresh_tokens: dict[str, list[str]] = {}
        self.codes: dict[str, list[str]] = {}
        self.base = ""
        self.clients: list[dict[str, Any]] = []
        self.resources: list[str] = []  # the resources an ID-JAG may name (the scene's MCP URL)
        self.bound: dict[str, str] = {}  # DPoP-bound access token -> its key's JWK thumbprint

    @property
    def issuer(self) -> str:
        return self.base + self.settings.issuer_path

    def metadata(self) -> dict[str, Any]:
        prefix = self.issuer
        return {
            "issuer": self.settings.issuer_override or self.issuer,
            "authorization_endpoint": f"{prefix}/authorize",
            "token_endpoint": f"{prefix}/token",
            "registration_endpoint": f"{prefix}/register",
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": True,
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic"],
            **({"dpop_signing_alg_values_supported": ["ES256"]} if self.settings.dpop else {}),
            **self.settings.metadata,
        }

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path, query = scope["path"], dict(parse_qsl(scope["query_string"].decode()))
        body = await _body(receive)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        form = dict(parse_qsl(body.decode())) if b"=" in body and not body.startswith(b"{") else {}
        self.recorder.requests.append(("as", path, {"query": query, "form": form, "headers": headers, "body": body}))
        prefix = self.settings.issuer_path
        wanted = self.settings.metadata_paths or (
            (f"/.well-known/oauth-authorization-server{prefix}",)
            if prefix
            else ("/.well-known/oauth-authorization-server",)
        )
        if scope["method"] == "GET" and path in wanted:
            return await _json(send, 200, self.metadata())
        if path == f"{prefix}/register" and scope["method"] == "POST":
            request = json.loads(body)
            client = {"client_id": f"client-{len(self.clients)}", "client_secret": secrets.token_urlsafe(8)}
            self.clients.append({**request, **client})
            return await _json(send, 201, {**request, **client})
        if path == f"{prefix}/authorize":
            code = "code-" + secrets.token_urlsafe(8)
            asked = query.get("scope", "").split()
            self.codes[code] = [x for x in asked if x not in self.settings.withheld_scopes]
            target = {"code": code, "state": query.get("state", "")}
            iss = {"correct": self.issuer, "wrong": "https://evil.example", "slash": self.issuer + "/"}.get(
                self.settings.iss_in_redirect
            )
            if iss is not None:
                target["iss"] = iss
            return await _redirect(send, f"{query['redirect_uri']}?{urlencode(target)}")
        if path == "/idp/token" and scope["method"] == "POST":  # an enterprise IdP (SEP-990)
            if form.get("subject_token") != ID_TOKEN or form.get("requested_token_type") != ID_JAG_TYPE:
                return await _json(send, 400, {"error": "invalid_request"})
            grant = f"id-jag:{form['audience']}:{form['resource']}"
            return await _json(
                send, 200, {"access_token": grant, "issued_token_type": ID_JAG_TYPE, "token_type": "N_A"}
            )
        if path == f"{prefix}/token" and scope["method"] == "POST":
            return await self._token(send, form, headers, f"{self.issuer}/token")
        await _json(send, 404, {"error": "not_found"})

    def assertions(self) -> set[str]:
        return {WORKLOAD_JWT, *(f"id-jag:{self.issuer}:{r}" for r in self.resources)}

    async def _token(self, send: Any, form: dict[str, str], headers: dict[str, str], url: str) -> None:
        grant = form.get("grant_type")
        thumbprint = None
        if self.settings.dpop and "dpop" in headers:
            claims, thumbprint = check_proof(headers["dpop"], "POST", url, None)
            if self.settings.as_nonce and claims.get("nonce") != self.settings.as_nonce:
                extra = {"dpop-nonce": self.settings.as_nonce}
                return await _json(send, 400, {"error": "use_dpop_nonce"}, extra)
        if grant == "authorization_code" and form.get("code") in self.codes:
            scopes = self.codes.pop(form["code"])
        elif (
            grant == "refresh_token"
            and not self.settings.reject_refresh
            and form.get("refresh_token") in self.refresh_tokens
        ):
            scopes = self.refresh_tokens[form["refresh_token"]]
        elif grant == "client_credentials" or (grant == JWT_BEARER and form.get("assertion") in self.assertions()):
            scopes = form.get("scope", "").split()
        else:
            return await _json(send, 400, {"error": "invalid_grant"})
        access = "at-" + secrets.token_urlsafe(12)
        self.tokens[access] = scopes
        kind = "DPoP" if thumbprint else "Bearer"
        if thumbprint:
            self.bound[access] = thumbprint
        answer: dict[str, Any] = {"access_token": access, "token_type": kind, "expires_in": 3600}
        if scopes:
            answer["scope"] = " ".join(scopes)
        if self.settings.issue_refresh_tokens and grant == "authorization_code":
            refresh = "rt-" + secrets.token_urlsafe(12)
            self.refresh_tokens[refresh] = scopes
            answer["refresh_token"] = refresh
        await _json(send, 200, answer)


class ResourceServer:
    """Bearer checks in front of a real plainmcp server; the PRM documents it serves."""

    def __init__(self, settings: Settings, recorder: Recorder, tokens: dict[str, list[str]], issuer: Any) -> None:
        self.settings = settings
        self.recorder = recorder
        self.tokens = tokens
        self.issuer = issuer  # a callable: the current AS issuer (tests may swap the AS)
        self.base = ""
        self.legacy_auth: Any = None
        self.bound_keys: Any = lambda token: None  # the AS's thumbprint of a bound token
        self.proofs: list[dict[str, Any]] = []  # the DPoP proofs' claims it accepted
        self.app = MCPApp(_mcp_server(), legacy_sse=False, gateway=False, metrics=False)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        if path != "/mcp" and self.settings.no_prm and self.legacy_auth is not None:
            return await self.legacy_auth(scope, receive, send)  # 2025-03-26: the server is its own AS
        if path != "/mcp":
            self.recorder.requests.append(("rs", path, {"headers": headers}))
            if scope["method"] == "GET" and path in self.settings.prm_paths and not self.settings.no_prm:
                return await _json(send, 200, self._prm(path))
            return await _json(send, 404, {"error": "not_found"})
        body = await _body(receive)
        method = _method(body)
        self.recorder.requests.append(("rs", path, {"headers": headers, "method": method}))
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if self.settings.dpop and token in self.tokens:
            if scheme != "DPoP":
                return await _json(send, 401, {"error": "invalid_token"}, {"www-authenticate": self._challenge(None)})
            claims, thumbprint = check_proof(headers.get("dpop", ""), "POST", f"{self.base}/mcp", token)
            assert thumbprint == self.bound_keys(token), "the proof's key is not the token's"
            if self.settings.rs_nonce and claims.get("nonce") != self.settings.rs_nonce:
                extra = {"www-authenticate": 'DPoP error="use_dpop_nonce"', "dpop-nonce": self.settings.rs_nonce}
                return await _json(send, 401, {"error": "use_dpop_nonce"}, extra)
            self.proofs.append(claims)
        if token not in self.tokens:
            return await _json(send, 401, {"error": "invalid_token"}, {"www-authenticate": self._challenge(None)})
        needed = self.settings.required_scopes.get(method or "", [])
        if not set(needed) <= set(self.tokens[token]):
            value = self._challenge("insufficient_scope", " ".join(needed))
            return await _json(send, 403, {"error": "insufficient_scope"}, {"www-authenticate": value})
        await self.app(scope, _replay(body), send)

    def _prm(self, path: str) -> dict[str, Any]:
        document: dict[str, Any] = {
            "resource": self.settings.prm_resource or f"{self.base}/mcp",
            "authorization_servers": [self.issuer()],
        }
        if self.settings.scopes_supported is not None:
            document["scopes_supported"] = self.settings.scopes_supported
        return document

    def _challenge(self, error: str | None, scope: str | None = None) -> str:
        params = [f'error="{error}"'] if error else []
        scope = scope or self.settings.challenge_scope
        if scope:
            params.append(f'scope="{scope}"')
        if self.settings.prm_in_challenge and not self.settings.no_prm:
            params.append(f'resource_metadata="{self.base}{self.settings.prm_paths[0]}"')
        scheme = "DPoP" if self.settings.dpop else "Bearer"
        return f"{scheme} " + ", ".join(params) if params else scheme


def check_proof(proof: str, method: str, url: str, access_token: str | None) -> tuple[dict[str, Any], str]:
    """Verify a DPoP proof the way RFC 9449 §4.3 says, with PyJWT (not the code under test):
    its claims and its key's JWK thumbprint (RFC 7638)."""
    import base64
    import hashlib

    import jwt

    header = jwt.get_unverified_header(proof)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"]
    key = jwt.PyJWK(header["jwk"])
    claims = jwt.decode(proof, key.key, algorithms=["ES256"])
    assert claims["htm"] == method and claims["htu"] == url and abs(claims["iat"] - time.time()) < 60
    assert isinstance(claims["jti"], str) and len(claims["jti"]) >= 16
    if access_token is not None:
        digest = base64.urlsafe_b64encode(hashlib.sha256(access_token.encode()).digest()).rstrip(b"=").decode()
        assert claims["ath"] == digest
    members = {name: header["jwk"][name] for name in ("crv", "kty", "x", "y")}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return claims, base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


def _mcp_server() -> Server:
    server = Server("oauth-scene", "1.0.0")

    @server.tool(input_schema={"type": "object"})
    async def hello(ctx: Any, args: dict[str, Any]) -> str:
        """Say hello."""
        return "hello"

    return server


def _method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


async def _body(receive: Any) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            return b"".join(chunks)


def _replay(body: bytes) -> Any:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await _forever()
        return {"type": "http.disconnect"}

    return receive


async def _forever() -> None:
    import anyio

    await anyio.sleep_forever()


async def _json(send: Any, status: int, document: Any, extra: dict[str, str] | None = None) -> None:
    body = json.dumps(document).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(k.encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Any, location: str) -> None:
    await send({"type": "http.response.start", "status": 302, "headers": [(b"location", location.encode())]})
    await send({"type": "http.response.body", "body": b""})


@contextmanager
def _serve(app: Any, lifespan: str) -> Iterator[str]:
    import uvicorn

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan=lifespan, log_config=None, access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"oauth-scene-{port}", daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("a scene server did not start")
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@dataclass
class Scene:
    settings: Settings
    recorder: Recorder
    auth_server: AuthorizationServer
    resource_server: ResourceServer
    tokens: dict[str, list[str]]

    @property
    def url(self) -> str:
        return f"{self.resource_server.base}/mcp"


@contextmanager
def scene(settings: Settings | None = None) -> Iterator[Scene]:
    """Both servers running; ``Scene.url`` is the MCP endpoint."""
    settings = settings or Settings()
    recorder, tokens = Recorder(), {}
    auth_server = AuthorizationServer(settings, recorder, tokens)
    resource_server = ResourceServer(settings, recorder, tokens, lambda: auth_server.issuer)
    resource_server.bound_keys = auth_server.bound.get
    if settings.no_prm:
        resource_server.legacy_auth = auth_server
    with _serve(auth_server, "off") as as_base, _serve(resource_server, "on") as rs_base:
        resource_server.base = rs_base
        auth_server.base = rs_base if settings.no_prm else as_base
        auth_server.resources.append(f"{rs_base}/mcp")
        yield Scene(settings, recorder, auth_server, resource_server, tokens)
