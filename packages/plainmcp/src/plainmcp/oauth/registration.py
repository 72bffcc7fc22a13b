"""Who we are to an authorization server: the client registration.

In the spec's order of preference: credentials the user registered beforehand (``client_id``,
``client_secret``); a Client ID Metadata Document (the document's URL is the client_id) when the
server says ``client_id_metadata_document_supported``; else dynamic registration (RFC 7591) at the
server's ``registration_endpoint``. A registration belongs to one issuer and is stored with it, so
a resource that moves to another authorization server gets a new one (SEP-2352).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .errors import AuthorizationError

logger = logging.getLogger(__name__)

AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
MAX_RESPONSE = 64 * 1024


def supported_auth_methods(metadata: dict[str, Any]) -> list[str]:
    """The token endpoint's client authentication methods (RFC 8414's default when unsaid)."""
    methods = metadata.get("token_endpoint_auth_methods_supported")
    if isinstance(methods, list) and methods:
        return [m for m in methods if isinstance(m, str)]
    return ["client_secret_basic"]


def method_for_secret(metadata: dict[str, Any], has_secret: bool) -> str:
    """The method to present a client's credentials with: Basic where offered, else POST."""
    if not has_secret:
        return "none"
    supported = supported_auth_methods(metadata)
    if "client_secret_basic" in supported or "client_secret_post" not in supported:
        return "client_secret_basic"
    return "client_secret_post"


def preregistered(
    client_id: str, client_secret: str | None, metadata: dict[str, Any], method: str | None
) -> dict[str, Any]:
    return {
        "client_id": client_id,
        **({"client_secret": client_secret} if client_secret else {}),
        "token_endpoint_auth_method": method or method_for_secret(metadata, bool(client_secret)),
        "source": "preregistered",
    }


def metadata_document(url: str) -> dict[str, Any]:
    """The client of a Client ID Metadata Document: a public client whose id is the URL."""
    return {"client_id": url, "token_endpoint_auth_method": "none", "source": "cimd"}


def registration_request(
    metadata: dict[str, Any], client_name: str, redirect_uri: str, grant: str, scopes: list[str], method: str | None
) -> dict[str, Any]:
    """The RFC 7591 client metadata we register with."""
    supported = supported_auth_methods(metadata)
    if method is None:
        # A native client keeps no secret safely: public where the server allows it.
        method = next(
            (m for m in ("none", "client_secret_basic", "client_secret_post") if m in supported), supported[0]
        )
    body: dict[str, Any] = {
        "client_name": client_name,
        "token_endpoint_auth_method": method,
        # SEP-837: a loopback redirect (or none, for client credentials) is a native application.
        "application_type": "native",
    }
    if grant == "client_credentials":
        body["grant_types"] = ["client_credentials"]
    else:
        body.update(
            redirect_uris=[redirect_uri], grant_types=["authorization_code", "refresh_token"], response_types=["code"]
        )
    if scopes:
        body["scope"] = " ".join(scopes)
    return body


async def register(
    http: Any, metadata: dict[str, Any], request: dict[str, Any], headers: dict[str, str]
) -> dict[str, Any]:
    """Dynamic client registration; the client record (see ``oauth.store``).

    Raises:
        AuthorizationError: the server has no registration endpoint, or refused.
    """
    endpoint = metadata.get("registration_endpoint")
    issuer = metadata.get("issuer")
    if not isinstance(endpoint, str):
        raise AuthorizationError(
            f"The authorization server {issuer} offers no dynamic client registration and this client has no "
            "client_id for it: register one with the server's operator and pass client_id (and client_secret)",
            "no_registration",
        )
    try:
        response = await http.post(endpoint, json=request, headers={"accept": "application/json", **headers})
    except Exception as failure:
        raise AuthorizationError(f"Client registration at {endpoint} failed: {failure}", "registration") from None
    answer = response_object(response.content)
    if response.status_code not in (200, 201) or answer is None or not isinstance(answer.get("client_id"), str):
        detail = answer.get("error") if isinstance(answer, dict) else None
        raise AuthorizationError(
            f"Client registration at {endpoint} was refused (HTTP {response.status_code}"
            + (f", {str(detail)[:100]}" if detail else "")
            + ")",
            "registration",
        )
    client: dict[str, Any] = {"client_id": answer["client_id"], "source": "dcr"}
    if isinstance(answer.get("client_secret"), str):
        client["client_secret"] = answer["client_secret"]
    method = answer.get("token_endpoint_auth_method")
    client["token_endpoint_auth_method"] = method if method in AUTH_METHODS else request["token_endpoint_auth_method"]
    if isinstance(answer.get("client_secret_expires_at"), int):
        client["client_secret_expires_at"] = answer["client_secret_expires_at"]
    if request.get("redirect_uris"):
        client["redirect_uri"] = request["redirect_uris"][0]
    logger.info("registered with %s (dynamic client registration)", issuer)
    return client


def response_object(body: bytes) -> dict[str, Any] | None:
    """An authorization or identity server's answer as a JSON object, or None when it is not one or
    is larger than :data:`MAX_RESPONSE` (registration and token exchange answers alike)."""
    if len(body) > MAX_RESPONSE:
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
