"""One run of the flow for one resource: discovery, then the cheapest way to a valid token.

In order: a stored token not tried yet; a refresh (before asking the user again, and never for a
step-up, since a refresh cannot widen the scopes); a full authorization (registration first when
this issuer does not know us). Each new token is saved with the registration it was got with.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from . import dpop as dpop_proofs
from . import grants, registration
from .challenge import Challenge
from .discovery import Discovered, discover
from .enterprise import AssertionRequest
from .errors import AuthorizationError
from .store import RECORD_VERSION

if TYPE_CHECKING:
    from .authorizer import Authorizer
    from .store import TokenStore


class OAuth(Protocol):
    """What the flow reads of :class:`plainmcp.oauth.OAuth` (a protocol here: that class drives this
    module, and the two must not import each other)."""

    store: TokenStore
    authorizer: Authorizer
    client_id: str | None
    client_secret: str | None
    client_metadata_url: str | None
    client_name: str
    scopes: list[str] | None
    token_endpoint_auth_method: str | None
    grant: str
    private_key: str | None
    dpop: bool | None
    timeout: float
    verify: Any

    def grant_options(self) -> dict[str, Any]: ...

    async def workload_assertion(self, request: AssertionRequest) -> str: ...


logger = logging.getLogger(__name__)

#: A token this close to its expiry (seconds) counts as expired.
EXPIRY_LEEWAY = 30
OFFLINE_ACCESS = "offline_access"


@dataclass(frozen=True)
class Binding:
    """The token a connection uses now, and where it came from."""

    issuer: str
    resource: str
    access_token: str
    fresh: bool = False  #: got by a new authorization just now (not stored, not refreshed)
    dpop: dpop_proofs.DPoPKey | None = None  #: the key a DPoP-bound token is proved with

    def authorization(self) -> str:
        return f"{'DPoP' if self.dpop is not None else 'Bearer'} {self.access_token}"


def _key_of(record: dict[str, Any]) -> dpop_proofs.DPoPKey | None:
    """The DPoP key a stored token is bound to (None for a Bearer token)."""
    jwk = record.get("dpop_key")
    token: dict[str, Any] = record["token"] if isinstance(record.get("token"), dict) else {}
    if not isinstance(jwk, dict) or str(token.get("token_type", "")).lower() != "dpop":
        return None
    return dpop_proofs.DPoPKey(jwk)


def expired(token: dict[str, Any]) -> bool:
    expires_at = token.get("expires_at")
    return isinstance(expires_at, (int, float)) and expires_at < time.time() + EXPIRY_LEEWAY


async def obtain(
    oauth: OAuth,
    server_url: str,
    challenge: Challenge,
    sent: str | None,
    *,
    step_up: bool = False,
    may_authorize: bool = True,
    force: bool = False,
    headers: dict[str, str] | None = None,
) -> Binding:
    """A token for ``server_url`` better than ``sent`` (the one the server refused, if any).

    Raises:
        AuthorizationError: discovery, registration or a grant failed, or only a new
            authorization would help and ``may_authorize`` is False.
    """
    import httpx

    headers = headers or {}
    async with httpx.AsyncClient(timeout=oauth.timeout, verify=oauth.verify) as http:
        found = await discover(http, server_url, challenge.resource_metadata, headers)
        record = await oauth.store.load(found.issuer, found.resource) or {}
        token: dict[str, Any] = record["token"] if isinstance(record.get("token"), dict) else {}
        if not step_up and not force:
            access = token.get("access_token")
            if isinstance(access, str) and access != sent and not expired(token):
                return Binding(found.issuer, found.resource, access, dpop=_key_of(record))
            renewed = await _refreshed(oauth, found, record)
            if renewed is not None:
                return renewed
        if not may_authorize:
            raise AuthorizationError(
                f"The server at {found.resource} refused the token {found.issuer} just issued (HTTP 401)",
                "unauthorized",
            )
        return await _authorize(oauth, http, found, challenge, record, step_up, headers)


async def _refreshed(oauth: OAuth, found: Discovered, record: dict[str, Any]) -> Binding | None:
    token, client = record.get("token") or {}, record.get("client")
    if not isinstance(token.get("refresh_token"), str) or not isinstance(client, dict):
        return None
    # A public client's refresh token is bound to the DPoP key too (RFC 9449 §5).
    key = dpop_proofs.DPoPKey(record["dpop_key"]) if isinstance(record.get("dpop_key"), dict) else None
    try:
        renewed = await grants.refresh(
            client, found.issuer, found.metadata, found.resource, token["refresh_token"], oauth.grant_options(), key
        )
    except AuthorizationError as error:
        logger.info("refreshing the token of %s failed (%s); authorizing again", found.issuer, error.reason)
        return None
    record = {**record, "token": renewed, "saved_at": int(time.time())}
    await oauth.store.save(found.issuer, found.resource, record)
    logger.info("refreshed the token of %s for %s", found.issuer, found.resource)
    bound = key if renewed.get("token_type") == "DPoP" else None
    return Binding(found.issuer, found.resource, renewed["access_token"], dpop=bound)


async def _authorize(
    oauth: OAuth,
    http: Any,
    found: Discovered,
    challenge: Challenge,
    record: dict[str, Any],
    step_up: bool,
    headers: dict[str, str],
) -> Binding:
    previous: list[str] = record["scopes"] if step_up and isinstance(record.get("scopes"), list) else []
    scopes = choose_scopes(oauth, challenge, found, previous)
    options = oauth.grant_options()
    key = dpop_proofs.DPoPKey() if wants_dpop(oauth, challenge, found) else None
    if oauth.grant == "client_credentials":
        client = await _client(oauth, http, found, record, scopes, headers)
        token = await grants.client_credentials(
            client, found.issuer, found.metadata, found.resource, scopes, options, key
        )
    elif oauth.grant == "jwt_bearer":
        client = await _client(oauth, http, found, record, scopes, headers)
        assertion = await oauth.workload_assertion(AssertionRequest(found.issuer, found.resource, tuple(scopes)))
        token = await grants.jwt_bearer(
            client, found.issuer, found.metadata, found.resource, scopes, assertion, options, key
        )
    else:
        grants.require_pkce(found.issuer, found.metadata, found.metadata_found)
        client = await _client(oauth, http, found, record, scopes, headers)
        token = await grants.authorize_with_code(
            oauth.authorizer, client, found.issuer, found.metadata, found.resource, scopes, options, key
        )
    saved = {
        "version": RECORD_VERSION,
        "client": client,
        "token": token,
        "scopes": scopes,
        "saved_at": int(time.time()),
    }
    bound = key if token.get("token_type") == "DPoP" else None
    if bound is not None:
        saved["dpop_key"] = bound.private_jwk()
    await oauth.store.save(found.issuer, found.resource, saved)
    logger.info("authorized with %s for %s%s", found.issuer, found.resource, " (DPoP)" if bound else "")
    return Binding(found.issuer, found.resource, token["access_token"], fresh=True, dpop=bound)


def wants_dpop(oauth: OAuth, challenge: Challenge, found: Discovered) -> bool:
    """Whether to ask for a DPoP-bound token (see ``oauth.dpop``)."""
    if oauth.dpop is False or not dpop_proofs.server_supports(found.metadata):
        return False
    required = found.resource_metadata.get("dpop_bound_access_tokens_required") is True
    return oauth.dpop is True or required or "dpop" in challenge.schemes


def choose_scopes(oauth: OAuth, challenge: Challenge, found: Discovered, previous: list[str]) -> list[str]:
    """The spec's scope selection: the challenge's ``scope``, else the configured scopes, else the
    resource's ``scopes_supported``, else none; a step-up keeps what was asked before (SEP-2350);
    ``offline_access`` is added when the authorization server lists it (SEP-2207)."""
    chosen = challenge.scopes or oauth.scopes or found.scopes_supported
    scopes = list(dict.fromkeys([*previous, *chosen]))
    offered = found.metadata.get("scopes_supported")
    if (
        oauth.grant == "authorization_code"
        and isinstance(offered, list)
        and OFFLINE_ACCESS in offered
        and OFFLINE_ACCESS not in scopes
    ):
        scopes.append(OFFLINE_ACCESS)
    return scopes


async def _client(
    oauth: OAuth, http: Any, found: Discovered, record: dict[str, Any], scopes: list[str], headers: dict[str, str]
) -> dict[str, Any]:
    """This issuer's client for us: configured credentials, the stored registration, a Client ID
    Metadata Document, or a new dynamic registration."""
    metadata = found.metadata
    if oauth.client_id:
        method = oauth.token_endpoint_auth_method or ("private_key_jwt" if oauth.private_key else None)
        return registration.preregistered(oauth.client_id, oauth.client_secret, metadata, method)
    stored = record.get("client")
    if isinstance(stored, dict) and isinstance(stored.get("client_id"), str) and _still_valid(oauth, stored):
        return stored
    if oauth.client_metadata_url and metadata.get("client_id_metadata_document_supported") is True:
        return registration.metadata_document(oauth.client_metadata_url)
    request = registration.registration_request(
        metadata,
        oauth.client_name,
        oauth.authorizer.redirect_uri,
        oauth.grant,
        scopes,
        oauth.token_endpoint_auth_method,
    )
    try:
        return await registration.register(http, metadata, request, headers)
    except AuthorizationError as error:
        if found.metadata_found:
            raise
        raise AuthorizationError(
            f"The server at {found.resource} asks for authorization but publishes no OAuth metadata, and the "
            f"2025-03-26 default endpoints at {found.issuer} do not work ({error.message}); if it takes a fixed "
            "token, pass it as a header instead",
            "discovery",
        ) from None


def _still_valid(oauth: OAuth, client: dict[str, Any]) -> bool:
    """A stored registration is reused unless its secret expired or it names another redirect URI
    (a loopback authorizer on another port next time)."""
    expires = client.get("client_secret_expires_at")
    if isinstance(expires, int) and expires and expires < time.time() + EXPIRY_LEEWAY:
        return False
    redirect = client.get("redirect_uri")
    return oauth.grant != "authorization_code" or redirect is None or redirect == oauth.authorizer.redirect_uri
