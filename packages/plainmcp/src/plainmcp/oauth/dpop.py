"""DPoP (RFC 9449, SEP-1932): tokens bound to a key the client holds, proved on every request.

A :class:`DPoPKey` is an EC P-256 key made for one authorization (kept in the record beside the
token it binds, as a private JWK: the record already holds secrets). Each request carries a new
proof, a ``dpop+jwt`` signed with it: ``htm`` and ``htu`` (the method and the URL without query and
fragment), ``iat``, a fresh ``jti``, ``ath`` (the SHA-256 of the access token) towards the
resource, and the server's ``nonce`` once a server asked for one (``use_dpop_nonce``, §8 and §9).
The access token then goes as ``Authorization: DPoP <token>``.

When: ``OAuth(dpop=None)`` (the default) uses DPoP when the resource challenges with the ``DPoP``
scheme or its metadata says ``dpop_bound_access_tokens_required``, and the authorization server
lists ES256 in ``dpop_signing_alg_values_supported``; ``dpop=True`` whenever the server supports
it; ``dpop=False`` never.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .errors import missing_authlib

ALG = "ES256"
USE_DPOP_NONCE = "use_dpop_nonce"


class DPoPKey:
    """One proof-of-possession key and the nonces servers gave for it (per origin)."""

    def __init__(self, private_jwk: dict[str, Any] | None = None) -> None:
        try:
            from joserfc.jwk import ECKey
        except ImportError:  # joserfc comes with authlib, the [oauth] extra
            raise missing_authlib() from None
        self._key = ECKey.import_key(private_jwk) if private_jwk else ECKey.generate_key("P-256")
        self.public_jwk: dict[str, Any] = self._key.as_dict(private=False)
        self.nonces: dict[str, str] = {}  # origin -> the last nonce it sent

    def private_jwk(self) -> dict[str, Any]:
        """For the record only (it is a secret)."""
        return dict(self._key.as_dict(private=True))

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A new proof for one request (never reused: a fresh ``jti`` each time)."""
        from joserfc import jwt

        parts = urlsplit(url)
        claims: dict[str, Any] = {
            "jti": secrets.token_urlsafe(24),
            "htm": method.upper(),
            "htu": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "iat": int(time.time()),
        }
        if access_token is not None:
            digest = hashlib.sha256(access_token.encode("ascii")).digest()
            claims["ath"] = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
        nonce = self.nonces.get(_origin(url))
        if nonce is not None:
            claims["nonce"] = nonce
        header = {"typ": "dpop+jwt", "alg": ALG, "jwk": self.public_jwk}
        return str(jwt.encode(header, claims, self._key, algorithms=[ALG]))

    def learn_nonce(self, url: str, headers: Any) -> bool:
        """Keep a ``DPoP-Nonce`` a response carries; True when it is a new one."""
        value = headers.get("dpop-nonce")
        if not isinstance(value, str) or not value or len(value) > 512:
            return False
        origin = _origin(url)
        new = self.nonces.get(origin) != value
        self.nonces[origin] = value
        return new


def server_supports(metadata: dict[str, Any]) -> bool:
    algs = metadata.get("dpop_signing_alg_values_supported")
    return isinstance(algs, list) and ALG in algs


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
