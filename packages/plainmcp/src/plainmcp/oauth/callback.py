"""Checking the authorization response before its code is used.

``state`` must be the one we sent (CSRF). ``iss`` (RFC 9207, SEP-2468): when the server's metadata
says ``authorization_response_iss_parameter_supported``, it must be present; when present, it must
equal the issuer we recorded, compared as plain strings (no case folding, no trailing-slash or
port normalization: ``auth/iss-normalized``). Either failure stops the flow before the token
request, which is what protects against a mix-up attack.
"""

from __future__ import annotations

import hmac
from typing import Any

from .errors import AuthorizationError


def authorization_code(params: dict[str, str], state: str, issuer: str, metadata: dict[str, Any]) -> str:
    """The code of a valid authorization response.

    Raises:
        AuthorizationError: the server refused, or the response fails a check.
    """
    if "error" in params:
        description = params.get("error_description", "")[:200]
        raise AuthorizationError(
            f"The authorization server {issuer} refused: {params['error'][:64]}"
            + (f" ({description})" if description else ""),
            "denied",
        )
    if not hmac.compare_digest(params.get("state", ""), state):
        raise AuthorizationError(
            "The authorization response carries another state: not ours; refused", "state_mismatch"
        )
    iss = params.get("iss")
    if iss is None and metadata.get("authorization_response_iss_parameter_supported") is True:
        raise AuthorizationError(
            f"The authorization response has no iss, though {issuer} says it sends one (RFC 9207); refused",
            "iss_missing",
        )
    if iss is not None and iss != issuer:
        raise AuthorizationError(
            f"The authorization response comes from {iss[:200]!r}, not {issuer!r} (RFC 9207); refused", "iss_mismatch"
        )
    code = params.get("code")
    if not code:
        raise AuthorizationError("The authorization response has no code", "denied")
    return code
