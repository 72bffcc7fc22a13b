"""Bearer-token authentication for the HTTP transports (RFC 6750), and the Protected Resource
Metadata document (RFC 9728) that tells OAuth clients where to get a token.

An :class:`Authenticator` turns a token into a :class:`Principal`. Two come with plainmcp:
:class:`StaticTokens` (shared secrets, compared in constant time) and
:class:`~plainmcp.http.jwt_auth.JWTVerifier` (signed JWTs, with the optional ``plainmcp[jwt]`` extra).
:class:`BearerAuth` asks them in turn and answers ``401`` with a ``WWW-Authenticate`` challenge.

Tokens are never logged, and never echoed in a response.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

from .asgi import Scope, Send, header, log_extra, respond_json

logger = logging.getLogger(__name__)

WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request comes from. ``subject`` is safe to log; ``claims`` are a JWT's (empty otherwise)."""

    subject: str
    claims: dict[str, Any] = field(default_factory=dict)


class AuthError(Exception):
    """The token was refused; ``description`` is fit to show the client (no token, no secret)."""

    def __init__(self, description: str) -> None:
        super().__init__(description)
        self.description = description


class AuthUnavailable(Exception):
    """The token cannot be checked right now (say, the JWKS endpoint is down): ``503``."""


class Authenticator(Protocol):
    async def authenticate(self, token: str) -> Principal | None:
        """The principal for ``token``; None when the token is not of this authenticator's kind.

        Raises:
            AuthError: the token is of this kind but not valid (expired, wrong audience, ...).
            AuthUnavailable: the token cannot be checked at the moment.
        """
        ...


class StaticTokens:
    """Fixed shared tokens. Every configured token is compared with ``hmac.compare_digest``, so the
    time taken says nothing about which token, or how much of one, matched."""

    def __init__(self, tokens: Iterable[str]) -> None:
        self._tokens = [token.encode("utf-8") for token in tokens]
        if not self._tokens or any(not token or token != token.strip() for token in self._tokens):
            raise ValueError("static tokens must be non-empty, without surrounding white space")
        if any(len(token) < 16 for token in self._tokens):
            logger.warning("a static token is shorter than 16 characters; use long random tokens")

    async def authenticate(self, token: str) -> Principal | None:
        given = token.encode("utf-8")
        found = -1
        for index, expected in enumerate(self._tokens):
            if hmac.compare_digest(expected, given):
                found = index
        return Principal(f"static-token-{found + 1}") if found >= 0 else None


def bearer_token(scope: Scope) -> str | None:
    """The token of an ``Authorization: Bearer`` header; None when there is no such header."""
    value = header(scope, "authorization")
    if value is None:
        return None
    scheme, _, token = value.partition(" ")
    if scheme.lower() != "bearer":
        return None
    return token.strip()


def _quoted(value: str) -> str:
    # RFC 6750 3: the values are quoted strings without '"' and '\'.
    return '"' + "".join(c for c in value if c not in '"\\' and 0x20 <= ord(c) < 0x7F) + '"'


def challenge(*, error: str | None = None, description: str | None = None, resource_metadata: str | None = None) -> str:
    """A ``WWW-Authenticate`` value. Without a token there is no ``error`` (RFC 6750 3.1)."""
    params = []
    if error is not None:
        params.append(f"error={_quoted(error)}")
        if description:
            params.append(f"error_description={_quoted(description)}")
    if resource_metadata is not None:
        params.append(f"resource_metadata={_quoted(resource_metadata)}")
    return "Bearer " + ", ".join(params) if params else "Bearer"


def protected_resource_metadata(
    resource: str,
    authorization_servers: Sequence[str],
    *,
    resource_name: str | None = None,
    scopes_supported: Sequence[str] = (),
) -> dict[str, Any]:
    """The RFC 9728 document: this resource, the authorization servers that issue its tokens, and
    how tokens are presented (only in the ``Authorization`` header)."""
    document: dict[str, Any] = {
        "resource": resource,
        "authorization_servers": list(authorization_servers),
        "bearer_methods_supported": ["header"],
    }
    if scopes_supported:
        document["scopes_supported"] = list(scopes_supported)
    if resource_name:
        document["resource_name"] = resource_name
    return document


def request_origin(scope: Scope) -> str:
    """``scheme://host[:port]`` as the client addressed this server (Host was checked already)."""
    scheme = "https" if scope.get("scheme") in ("https", "wss") else "http"
    host = header(scope, "host")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}"


class BearerAuth:
    """The authentication of one HTTP app: who may call, and what to tell those who may not.

    Args:
        authenticators: asked in order; the first that recognises a token decides.
        authorization_servers: issuer URLs of the OAuth authorization servers; when given, the
            Protected Resource Metadata document is served and every challenge points to it.
        resource_url: the public URL of the MCP endpoint (the RFC 8707 resource); by default the
            URL the client used, from ``Host``. Set it when a proxy changes scheme, host or path.
        scopes_supported: listed in the metadata document.
    """

    def __init__(
        self,
        authenticators: Sequence[Authenticator],
        *,
        authorization_servers: Sequence[str] = (),
        resource_url: str | None = None,
        scopes_supported: Sequence[str] = (),
    ) -> None:
        if not authenticators:
            raise ValueError("BearerAuth needs at least one authenticator")
        self.authenticators = list(authenticators)
        self.authorization_servers = list(authorization_servers)
        self.resource_url = resource_url.rstrip("/") if resource_url else None
        self.scopes_supported = list(scopes_supported)

    @property
    def publishes_metadata(self) -> bool:
        return bool(self.authorization_servers)

    def resource(self, scope: Scope, mcp_path: str) -> str:
        return self.resource_url or request_origin(scope) + mcp_path

    def metadata_url(self, scope: Scope, mcp_path: str) -> str | None:
        """Where the metadata of this resource is (RFC 9728 3.1: the path goes after the
        well-known part), or None when no authorization server is configured."""
        if not self.publishes_metadata:
            return None
        if self.resource_url:
            parts = urlsplit(self.resource_url)
            return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN_PRM}{parts.path.rstrip('/')}"
        return request_origin(scope) + WELL_KNOWN_PRM + mcp_path.rstrip("/")

    def metadata(self, scope: Scope, mcp_path: str, resource_name: str | None) -> dict[str, Any]:
        return protected_resource_metadata(
            self.resource(scope, mcp_path),
            self.authorization_servers,
            resource_name=resource_name,
            scopes_supported=self.scopes_supported,
        )

    async def authenticate(self, token: str) -> Principal:
        """Raises AuthError when no authenticator accepts ``token``, AuthUnavailable as they do."""
        if not token:
            raise AuthError("Empty bearer token")
        for authenticator in self.authenticators:
            principal = await authenticator.authenticate(token)
            if principal is not None:
                return principal
        raise AuthError("Invalid access token")

    async def check(self, scope: Scope, send: Send, mcp_path: str) -> Principal | None:
        """The request's principal; or answer ``401`` (``503``) and return None."""
        metadata_url = self.metadata_url(scope, mcp_path)
        token = bearer_token(scope)
        if token is None:
            await _unauthorized(send, "Bearer token required", challenge(resource_metadata=metadata_url))
            return None
        try:
            return await self.authenticate(token)
        except AuthError as refusal:
            logger.info("refused a request to %s: %s", scope.get("path"), refusal.description, extra=log_extra(scope))
            value = challenge(error="invalid_token", description=refusal.description, resource_metadata=metadata_url)
            await _unauthorized(send, refusal.description, value)
        except AuthUnavailable as problem:
            logger.warning("cannot check a bearer token: %s", problem, extra=log_extra(scope))
            await respond_json(
                send,
                503,
                {"error": "temporarily_unavailable", "error_description": "Cannot check tokens right now"},
                headers=[("retry-after", "5")],
            )
        return None


async def _unauthorized(send: Send, description: str, www_authenticate: str) -> None:
    await respond_json(
        send,
        401,
        {"error": "invalid_token", "error_description": description},
        headers=[("www-authenticate", www_authenticate), ("cache-control", "no-store")],
    )
