"""Finding the authorization server: Protected Resource Metadata, then its metadata.

RFC 9728: the ``resource_metadata`` URL of the challenge first; then the path-aware well-known URL
(``/.well-known/oauth-protected-resource/<path>``), then the root one. The document's ``resource``
must name the server we are talking to (same origin, a path prefix of its URL), or we stop: a
server must not send our authorization to another resource's server (``auth/resource-mismatch``).

RFC 8414 / OpenID Connect Discovery, in the order the MCP spec lists: for an issuer with a path,
``/.well-known/oauth-authorization-server/<path>``, ``/.well-known/openid-configuration/<path>``,
``/<path>/.well-known/openid-configuration``; for one without, the first two at the root. The
document's ``issuer`` must equal, as a plain string, the issuer the URL was built from (RFC 8414
§3.3), or it is not used at all (``auth/metadata-issuer-mismatch``).

2025-03-26 servers have no resource metadata: the authorization server is the server's origin,
its metadata at the root's ``/.well-known/oauth-authorization-server``, and without that document
the default endpoints ``/authorize``, ``/token`` and ``/register``.

Every document is bounded (:data:`MAX_DOCUMENT`) and must be a JSON object.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .errors import AuthorizationError

logger = logging.getLogger(__name__)

MAX_DOCUMENT = 256 * 1024
PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OPENID_WELL_KNOWN = "/.well-known/openid-configuration"


@dataclass(frozen=True)
class Discovered:
    """Where to authorize for one resource."""

    resource: str  #: the ``resource`` indicator to send (RFC 8707)
    issuer: str
    metadata: dict[str, Any]  #: the authorization server's metadata (the defaults for 2025-03-26)
    metadata_found: bool  #: False when the 2025-03-26 default endpoints stand in for it
    resource_metadata: dict[str, Any] = field(default_factory=dict)  #: empty when the server has none

    @property
    def scopes_supported(self) -> list[str]:
        scopes = self.resource_metadata.get("scopes_supported")
        return [s for s in scopes if isinstance(s, str)] if isinstance(scopes, list) else []


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707, the spec's "Canonical Server URI"): lower-case
    scheme and host, no default port, no fragment, no trailing slash on the path."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    netloc = host if port is None or (scheme, port) in (("http", 80), ("https", 443)) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), parts.query, ""))


def origin(url: str) -> str:
    parts = urlsplit(canonical_resource(url))
    return f"{parts.scheme}://{parts.netloc}"


def resource_matches(declared: str, server_url: str) -> bool:
    """Whether a resource identifier covers the server's URL: same origin, and its path is the
    server's path or a parent of it at a ``/`` boundary."""
    declared_c, server_c = urlsplit(canonical_resource(declared)), urlsplit(canonical_resource(server_url))
    if (declared_c.scheme, declared_c.netloc) != (server_c.scheme, server_c.netloc):
        return False
    prefix, path = declared_c.path, server_c.path
    return path == prefix or path.startswith(prefix.rstrip("/") + "/")


def prm_urls(server_url: str, challenge_url: str | None) -> list[str]:
    """The Protected Resource Metadata URLs to try, in order."""
    path = urlsplit(server_url).path.rstrip("/")
    base = origin(server_url)
    urls = [challenge_url] if challenge_url else []
    if path:
        urls.append(f"{base}{PRM_WELL_KNOWN}{path}")
    urls.append(f"{base}{PRM_WELL_KNOWN}")
    return list(dict.fromkeys(urls))


def metadata_urls(issuer: str) -> list[str]:
    """The authorization server metadata URLs for an issuer, in the spec's order."""
    parts = urlsplit(issuer)
    base = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{base}{OAUTH_WELL_KNOWN}", f"{base}{OPENID_WELL_KNOWN}"]
    return [f"{base}{OAUTH_WELL_KNOWN}{path}", f"{base}{OPENID_WELL_KNOWN}{path}", f"{base}{path}{OPENID_WELL_KNOWN}"]


def legacy_defaults(base: str) -> dict[str, Any]:
    """The 2025-03-26 default endpoints of a server without authorization server metadata."""
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
    }


async def fetch_json(http: Any, url: str, headers: dict[str, str]) -> dict[str, Any] | None:
    """A JSON object from ``url``; None for an error status, a non-object or an unreachable host."""
    try:
        async with http.stream("GET", url, headers={"accept": "application/json", **headers}) as response:
            if response.status_code != 200:
                logger.debug("GET %s: HTTP %d", url, response.status_code)
                return None
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT:
                    logger.warning("GET %s: document larger than %d bytes; ignored", url, MAX_DOCUMENT)
                    return None
    except Exception as failure:  # httpx errors: the host is unreachable or the URL unusable
        logger.debug("GET %s failed: %s", url, failure)
        return None
    try:
        document = json.loads(body)
    except ValueError:
        logger.debug("GET %s: not JSON", url)
        return None
    return document if isinstance(document, dict) else None


async def discover(http: Any, server_url: str, challenge_url: str | None, headers: dict[str, str]) -> Discovered:
    """Where to authorize for ``server_url``.

    Raises:
        AuthorizationError: the resource metadata names another resource, lists no authorization
            server, or the authorization server's metadata is missing, poisoned, or without PKCE.
    """
    for url in prm_urls(server_url, challenge_url):
        prm = await fetch_json(http, url, headers)
        if prm is not None:
            return await _from_resource_metadata(http, server_url, prm, headers)
    logger.info("%s has no protected resource metadata; using the 2025-03-26 discovery", origin(server_url))
    return await _legacy(http, server_url, headers)


async def _from_resource_metadata(
    http: Any, server_url: str, prm: dict[str, Any], headers: dict[str, str]
) -> Discovered:
    resource = prm.get("resource")
    if not isinstance(resource, str) or not resource_matches(resource, server_url):
        raise AuthorizationError(
            f"The server at {canonical_resource(server_url)} published protected resource metadata for another "
            f"resource ({str(resource)[:200]!r}); not authorizing",
            "resource_mismatch",
        )
    servers = prm.get("authorization_servers")
    issuers = [s for s in servers if isinstance(s, str) and s] if isinstance(servers, list) else []
    if not issuers:
        raise AuthorizationError(f"The server at {resource} names no authorization server", "discovery")
    issuer = issuers[0]
    metadata = await authorization_server_metadata(http, issuer, headers)
    if metadata is None:
        raise AuthorizationError(f"The authorization server {issuer} publishes no metadata", "discovery")
    return Discovered(resource, issuer, metadata, True, prm)


async def authorization_server_metadata(http: Any, issuer: str, headers: dict[str, str]) -> dict[str, Any] | None:
    """The first metadata document found for ``issuer``; None when there is none.

    Raises:
        AuthorizationError: a document's ``issuer`` is not ``issuer`` (RFC 8414 §3.3).
    """
    for url in metadata_urls(issuer):
        metadata = await fetch_json(http, url, headers)
        if metadata is None:
            continue
        if metadata.get("issuer") != issuer:
            raise AuthorizationError(
                f"The authorization server metadata at {url} claims to be {str(metadata.get('issuer'))[:200]!r}, "
                f"not {issuer!r}; not using it",
                "issuer_mismatch",
            )
        return metadata
    return None


async def _legacy(http: Any, server_url: str, headers: dict[str, str]) -> Discovered:
    base = origin(server_url)
    resource = canonical_resource(server_url)
    url = f"{base}{OAUTH_WELL_KNOWN}"
    metadata = await fetch_json(http, url, headers)
    if metadata is None:
        return Discovered(resource, base, legacy_defaults(base), False)
    # 2025-03-26 predates the issuer rule; a trailing slash is the one difference tolerated.
    if str(metadata.get("issuer", "")).rstrip("/") != base:
        raise AuthorizationError(
            f"The authorization server metadata at {url} claims to be {str(metadata.get('issuer'))[:200]!r}, "
            f"not {base!r}; not using it",
            "issuer_mismatch",
        )
    return Discovered(resource, str(metadata["issuer"]), metadata, True)
