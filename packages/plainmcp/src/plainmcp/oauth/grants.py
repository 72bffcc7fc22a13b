"""The token requests, through authlib's httpx client: authorization code with PKCE (S256),
refresh, and client credentials (the client-credentials extension, ``private_key_jwt`` or a secret).

The ``resource`` indicator (RFC 8707) goes on the authorization request and on every token
request. A server whose metadata does not list ``S256`` in ``code_challenge_methods_supported`` is
refused before the user is sent anywhere, as the spec says (its absence means no PKCE).
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any

from .authorizer import Authorizer
from .callback import authorization_code
from .dpop import USE_DPOP_NONCE, DPoPKey
from .errors import AuthorizationError, missing_authlib

logger = logging.getLogger(__name__)

#: PKCE verifier length in bytes of randomness (43..128 characters once encoded; RFC 7636 §4.1).
VERIFIER_BYTES = 48


def require_pkce(issuer: str, metadata: dict[str, Any], found: bool) -> None:
    """Refuse an authorization server that does not support S256 (2025-03-26 defaults excepted:
    without metadata there is nothing to read, and the spec says to proceed with S256)."""
    methods = metadata.get("code_challenge_methods_supported")
    if found and not (isinstance(methods, list) and "S256" in methods):
        raise AuthorizationError(
            f"The authorization server {issuer} does not advertise PKCE with S256 "
            "(code_challenge_methods_supported); refusing to authorize",
            "no_pkce",
        )


def _oauth_client(client: dict[str, Any], options: dict[str, Any], **kwargs: Any) -> Any:
    try:
        from authlib.integrations.httpx_client import AsyncOAuth2Client  # type: ignore[import-untyped]  # authlib ships no type information
    except ImportError:  # the [oauth] extra is not installed
        raise missing_authlib() from None
    kwargs.setdefault("client_secret", client.get("client_secret"))
    return AsyncOAuth2Client(
        client_id=client["client_id"],
        token_endpoint_auth_method=client.get("token_endpoint_auth_method", "none"),
        timeout=options.get("timeout", 30.0),
        verify=options.get("verify", True),
        **kwargs,
    )


async def authorize_with_code(
    authorizer: Authorizer,
    client: dict[str, Any],
    issuer: str,
    metadata: dict[str, Any],
    resource: str,
    scopes: list[str],
    options: dict[str, Any],
    dpop: DPoPKey | None = None,
) -> dict[str, Any]:
    """Send the user to the authorization endpoint, check the response, redeem the code."""
    endpoint = _endpoint(metadata, "authorization_endpoint", issuer)
    token_endpoint = _endpoint(metadata, "token_endpoint", issuer)
    verifier = secrets.token_urlsafe(VERIFIER_BYTES)
    state = secrets.token_urlsafe(24)
    async with _oauth_client(
        client,
        options,
        redirect_uri=authorizer.redirect_uri,
        scope=" ".join(scopes) or None,
        code_challenge_method="S256",
    ) as oauth:
        url, _ = oauth.create_authorization_url(endpoint, state=state, code_verifier=verifier, resource=resource)
        logger.info("authorizing with %s for %s (scopes: %s)", issuer, resource, " ".join(scopes) or "none")
        params = await authorizer.authorize(url)
        code = authorization_code(params, state, issuer, metadata)
        return await _token_request(
            oauth,
            token_endpoint,
            issuer,
            dpop,
            grant_type="authorization_code",
            code=code,
            code_verifier=verifier,
            resource=resource,
        )


async def refresh(
    client: dict[str, Any],
    issuer: str,
    metadata: dict[str, Any],
    resource: str,
    refresh_token: str,
    options: dict[str, Any],
    dpop: DPoPKey | None = None,
) -> dict[str, Any]:
    """A new token from a refresh token (the old refresh token is kept when none is returned)."""
    token_endpoint = _endpoint(metadata, "token_endpoint", issuer)
    async with _oauth_client(client, options) as oauth:
        token = await _token_request(
            oauth,
            token_endpoint,
            issuer,
            dpop,
            grant_type="refresh_token",
            refresh_token=refresh_token,
            resource=resource,
        )
    token.setdefault("refresh_token", refresh_token)
    return token


async def client_credentials(
    client: dict[str, Any],
    issuer: str,
    metadata: dict[str, Any],
    resource: str,
    scopes: list[str],
    options: dict[str, Any],
    dpop: DPoPKey | None = None,
) -> dict[str, Any]:
    """A token for the client itself (no user): ``grant_type=client_credentials``."""
    token_endpoint = _endpoint(metadata, "token_endpoint", issuer)
    extra: dict[str, Any] = {}
    signer = None
    if client.get("token_endpoint_auth_method") == "private_key_jwt":
        signer, extra["client_secret"] = _private_key_jwt(options, issuer)  # authlib signs with the key
    async with _oauth_client(client, options, scope=" ".join(scopes) or None, **extra) as oauth:
        if signer is not None:
            oauth.register_client_auth_method(signer)
        return await _token_request(
            oauth, token_endpoint, issuer, dpop, grant_type="client_credentials", resource=resource
        )


JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


async def jwt_bearer(
    client: dict[str, Any],
    issuer: str,
    metadata: dict[str, Any],
    resource: str,
    scopes: list[str],
    assertion: str,
    options: dict[str, Any],
    dpop: DPoPKey | None = None,
) -> dict[str, Any]:
    """A token for a workload identity: RFC 7523's JWT-bearer grant with the platform's JWT as
    the ``assertion`` (workload identity federation, SEP-1933). A refusal is final: no retry,
    and no other grant in its place."""
    token_endpoint = _endpoint(metadata, "token_endpoint", issuer)
    async with _oauth_client(client, options, scope=" ".join(scopes) or None) as oauth:
        return await _token_request(
            oauth, token_endpoint, issuer, dpop, grant_type=JWT_BEARER, assertion=assertion, resource=resource
        )


def _private_key_jwt(options: dict[str, Any], issuer: str) -> tuple[Any, Any]:
    """authlib's ``private_key_jwt`` signer (its audience the issuer, as the client-credentials
    extension profiles RFC 7523) and the key it signs with. A new signer per request: authlib
    keeps the ``jti`` of the claims it is given."""
    from authlib.oauth2.rfc7523 import PrivateKeyJWT  # type: ignore[import-untyped]  # authlib ships no type information
    from joserfc.jwk import ECKey, OKPKey, RSAKey

    pem = options.get("private_key")
    if not pem:
        raise AuthorizationError("private_key_jwt needs a private key (private_key=PEM)", "configuration")
    key: Any = None
    for kind in (ECKey, RSAKey, OKPKey):
        try:
            key = kind.import_key(pem)
            break
        except Exception:  # not this kind of key
            continue
    if key is None:
        raise AuthorizationError("The private key is not a PEM EC, RSA or OKP key", "configuration")
    alg = options.get("signing_algorithm") or _default_alg(key)
    return PrivateKeyJWT(claims={"aud": issuer, "jti": secrets.token_urlsafe(24)}, alg=alg), key


def _default_alg(key: Any) -> str:
    kind = type(key).__name__
    if kind == "ECKey":
        return {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}.get(key.curve_name, "ES256")
    return "EdDSA" if kind == "OKPKey" else "RS256"


async def _token_request(oauth: Any, url: str, issuer: str, dpop: DPoPKey | None, **params: Any) -> dict[str, Any]:
    """One token request; with DPoP, a proof on it, and one retry when the server asks for its
    nonce (RFC 9449 §8)."""
    from authlib.integrations.base_client import OAuthError  # type: ignore[import-untyped]  # authlib ships no type information

    if dpop is not None:
        oauth.register_compliance_hook("access_token_response", lambda response: _noted(dpop, url, response))
    for attempt in (1, 2):
        headers = {"DPoP": dpop.proof("POST", url)} if dpop is not None else None
        try:
            token = await oauth.fetch_token(url, headers=headers, **params)
        except OAuthError as error:
            if dpop is not None and attempt == 1 and error.error == USE_DPOP_NONCE and dpop.nonces:
                continue
            description = (error.description or "")[:200]
            raise AuthorizationError(
                f"The token endpoint of {issuer} refused the {params['grant_type']} request: {str(error.error)[:64]}"
                + (f" ({description})" if description else ""),
                "token_request",
            ) from None
        except Exception as failure:  # httpx errors, or an answer that is no token
            raise AuthorizationError(
                f"The token request to {issuer} failed: {type(failure).__name__}", "token_request"
            ) from None
        return _record_token(token, issuer, dpop is not None)
    raise AssertionError("unreachable")  # the loop returns or raises


def _noted(dpop: DPoPKey, url: str, response: Any) -> Any:
    dpop.learn_nonce(url, response.headers)
    return response


def _record_token(token: dict[str, Any], issuer: str, dpop: bool) -> dict[str, Any]:
    access = token.get("access_token")
    if not isinstance(access, str) or not access:
        raise AuthorizationError(f"The token endpoint of {issuer} answered without an access token", "token_request")
    kind = str(token.get("token_type", "Bearer")).lower()
    if kind not in (("bearer", "dpop") if dpop else ("bearer",)):
        raise AuthorizationError(
            f"The token endpoint of {issuer} issued a {kind[:32]!r} token, not a Bearer one", "token_request"
        )
    record: dict[str, Any] = {"access_token": access, "token_type": "DPoP" if kind == "dpop" else "Bearer"}
    if isinstance(token.get("refresh_token"), str):
        record["refresh_token"] = token["refresh_token"]
    expires_at = token.get("expires_at")
    if isinstance(expires_at, (int, float)):
        record["expires_at"] = int(expires_at)
    elif isinstance(token.get("expires_in"), (int, float)):
        record["expires_at"] = int(time.time() + token["expires_in"])
    if isinstance(token.get("scope"), str):
        record["scope"] = token["scope"]
    return record


def _endpoint(metadata: dict[str, Any], name: str, issuer: str) -> str:
    value = metadata.get(name)
    if not isinstance(value, str) or not value:
        raise AuthorizationError(f"The authorization server {issuer} has no {name}", "discovery")
    return value
