"""JWT bearer tokens: signature, expiry, issuer and audience, checked with PyJWT.

Needs the ``plainmcp[jwt]`` extra (``pyjwt[crypto]``); PyJWT is imported
only when a :class:`JWTVerifier` is made. Keys are an HS256 shared secret, PEM public keys (RS256
for RSA, ES256/384/512 for EC) or a JWKS URL (fetched with a timeout, cached, fetched again
for an unknown ``kid`` at most every ``jwks_min_refresh`` seconds).

Each key accepts only its own algorithm, so a token cannot pick a weaker one (``none``, or HS256
signed with a public key). MCP requires the audience check: tokens must be issued for this server.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

import anyio

from .auth import AuthError, AuthUnavailable, Principal

logger = logging.getLogger(__name__)

#: Algorithms a public key from a JWKS may use (never a symmetric one: a published secret is none).
ASYMMETRIC = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})
MAX_JWKS_BYTES = 1024 * 1024


def _jwt() -> Any:
    try:
        import jwt
    except ImportError:
        raise RuntimeError("JWT verification needs PyJWT: pip install 'plainmcp[jwt]'") from None
    return jwt


def _pem_key(pem: str | bytes) -> tuple[Any, str]:
    """A PEM public key and the one algorithm it may verify."""
    from cryptography.hazmat.primitives.asymmetric import ec, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(pem.encode("ascii") if isinstance(pem, str) else pem)
    if isinstance(key, rsa.RSAPublicKey):
        return key, "RS256"
    if isinstance(key, ec.EllipticCurvePublicKey):
        algorithm = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}.get(key.curve.name)
        if algorithm is not None:
            return key, algorithm
    raise ValueError("a JWT public key must be RSA or EC P-256/P-384/P-521")


def _loopback(host: str | None) -> bool:
    return host in ("127.0.0.1", "::1", "localhost")


class JWKSCache:
    """The keys of a JWKS URL by ``kid``, fetched when needed."""

    def __init__(self, url: str, *, timeout: float = 5.0, ttl: float = 300.0, min_refresh: float = 30.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "https" and not (parts.scheme == "http" and _loopback(parts.hostname)):
            raise ValueError("a JWKS URL must be https (plain http only on loopback)")
        self.url = url
        self.timeout = timeout
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._keys: dict[str | None, Any] = {}
        self._fetched = -float("inf")
        self._error: str | None = None  # why the last fetch failed, while we have no keys at all
        self._lock = anyio.Lock()

    async def key(self, kid: str | None) -> Any:
        """The ``PyJWK`` for ``kid`` (the only key when the token names none), or None."""
        now = time.monotonic()
        stale = now - self._fetched > self.ttl
        unknown = kid not in self._keys and now - self._fetched > self.min_refresh
        if stale or unknown:
            async with self._lock:
                if time.monotonic() - self._fetched > min(self.min_refresh, self.ttl):  # not just done by another task
                    await self._refresh()
        if not self._keys and self._error is not None:
            raise AuthUnavailable(self._error)
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        import httpx

        jwt = _jwt()
        try:
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
                async with client.stream("GET", self.url, headers={"accept": "application/json"}) as response:
                    response.raise_for_status()
                    body = bytearray()
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_JWKS_BYTES:
                            raise ValueError("JWKS document too large")
            keys = jwt.PyJWKSet.from_json(bytes(body).decode("utf-8")).keys
        except (httpx.HTTPError, ValueError, TypeError, KeyError, jwt.PyJWTError) as error:
            self._fetched = time.monotonic()  # do not hammer a failing endpoint
            if self._keys:
                logger.warning(
                    "JWKS refresh from %s failed (%s); keeping the keys we have", self.url, type(error).__name__
                )
            else:
                self._error = f"JWKS fetch from {self.url} failed: {type(error).__name__}"
            return
        usable = {key.key_id: key for key in keys if key.algorithm_name in ASYMMETRIC}
        if len(usable) == 1:
            usable[None] = next(iter(usable.values()))  # a token without "kid" may use the only key
        self._keys = usable
        self._error = None
        self._fetched = time.monotonic()
        logger.info("loaded %d signing keys from %s", len(keys), self.url)


class JWTVerifier:
    """Accepts JWTs signed by a configured key, unexpired, for ``audience`` (and from ``issuer``).

    Give exactly one key source: ``secret`` (HS256, at least 32 bytes), ``public_keys`` (PEM) or
    ``jwks_url``. ``leeway`` is the clock skew tolerated on ``exp``/``nbf``/``iat``, in seconds.
    """

    def __init__(
        self,
        *,
        audience: str | Sequence[str],
        issuer: str | None = None,
        secret: str | bytes | None = None,
        public_keys: Sequence[str | bytes] = (),
        jwks_url: str | None = None,
        leeway: float = 30.0,
        jwks_timeout: float = 5.0,
        jwks_ttl: float = 300.0,
        jwks_min_refresh: float = 30.0,
    ) -> None:
        self._jwt = _jwt()
        sources = sum(1 for given in (secret, public_keys, jwks_url) if given)
        if sources != 1:
            raise ValueError("give exactly one of a JWT secret, public keys or a JWKS URL")
        if not audience:
            raise ValueError("JWT verification needs an audience: tokens must be issued for this server")
        self.audience = [audience] if isinstance(audience, str) else list(audience)
        self.issuer = issuer
        self.leeway = leeway
        self._keys: list[tuple[Any, str]] = []
        self._jwks: JWKSCache | None = None
        if secret:
            key = secret.encode("utf-8") if isinstance(secret, str) else secret
            if len(key) < 32:
                raise ValueError("a JWT secret must be at least 32 bytes (RFC 7518, section 3.2)")
            self._keys = [(key, "HS256")]
        elif public_keys:
            self._keys = [_pem_key(pem) for pem in public_keys]
        else:
            assert jwks_url is not None
            self._jwks = JWKSCache(jwks_url, timeout=jwks_timeout, ttl=jwks_ttl, min_refresh=jwks_min_refresh)

    async def authenticate(self, token: str) -> Principal | None:
        jwt = self._jwt
        if token.count(".") != 2:
            return None  # not a JWS in compact form: not ours to judge
        try:
            header = jwt.get_unverified_header(token)
        except jwt.InvalidTokenError:
            raise AuthError("Malformed access token") from None
        candidates = await self._candidates(header)
        if not candidates:
            raise AuthError("The access token is signed with an unknown key")
        failure: AuthError | None = None
        for key, algorithm in candidates:
            try:
                claims = jwt.decode(
                    token,
                    key,
                    algorithms=[algorithm],
                    audience=self.audience,
                    issuer=self.issuer,
                    leeway=self.leeway,
                    options={"require": ["exp", "aud", *(["iss"] if self.issuer else [])]},
                )
            except jwt.InvalidTokenError as error:
                failure = AuthError(_describe(jwt, error))
                if not isinstance(error, (jwt.InvalidSignatureError, jwt.InvalidAlgorithmError)):
                    break  # the signature matched this key: the token itself is the problem
                continue
            return Principal(_subject(claims, token), claims)
        assert failure is not None
        raise failure

    async def _candidates(self, header: dict[str, Any]) -> list[tuple[Any, str]]:
        if self._jwks is None:
            return self._keys
        kid = header.get("kid")
        found = await self._jwks.key(kid if isinstance(kid, str) else None)
        return [(found.key, found.algorithm_name)] if found is not None else []


def _subject(claims: dict[str, Any], token: str) -> str:
    """Who the token speaks for: ``jwt:<sub>``; without a usable ``sub``, the token itself (a
    digest of it), so that two tokens without ``sub`` are never the same principal (they would
    share each other's sessions). The digest is safe to log: it reveals nothing of the token."""
    subject = claims.get("sub")
    if isinstance(subject, str) and subject:
        return f"jwt:{subject}"
    return "jwt-token:" + hashlib.sha256(token.encode("utf-8")).hexdigest()[:32]


def _describe(jwt: Any, error: Exception) -> str:
    """A fixed description per failure: safe to show, and free of token contents."""
    for kind, text in (
        (jwt.ExpiredSignatureError, "The access token expired"),
        (jwt.InvalidAudienceError, "The access token was not issued for this server (audience)"),
        (jwt.InvalidIssuerError, "The access token comes from an untrusted issuer"),
        (jwt.ImmatureSignatureError, "The access token is not valid yet"),
        (jwt.MissingRequiredClaimError, "The access token lacks a required claim"),
        (jwt.InvalidAlgorithmError, "The access token uses an algorithm this server does not accept"),
        (jwt.InvalidSignatureError, "The access token signature is invalid"),
    ):
        if isinstance(error, kind):
            return text
    return "Malformed access token"
