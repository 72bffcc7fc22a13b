"""Enterprise-managed authorization (SEP-990, the Identity Assertion JWT Authorization Grant).

A person signed in to the enterprise's identity provider (IdP) once; the client holds the IdP's ID
token. For each MCP server it exchanges that token at the IdP (RFC 8693 token exchange,
``requested_token_type`` ID-JAG) for an *ID-JAG*, a JWT naming the MCP server's authorization
server as audience and the server as resource, then presents it to the authorization server in the
JWT-bearer grant (RFC 7523) with its own client credentials. ``IdJagExchange`` is the first step,
used as ``OAuth(grant="jwt_bearer", assertion=IdJagExchange(...), client_id=..., client_secret=...)``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from .errors import AuthorizationError
from .registration import response_object

logger = logging.getLogger(__name__)

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


@dataclass(frozen=True)
class AssertionRequest:
    """What a JWT-bearer assertion is for: the authorization server, the resource, the scopes."""

    issuer: str
    resource: str
    scopes: tuple[str, ...] = ()


class IdJagExchange:
    """Get an ID-JAG from the IdP for each authorization server (RFC 8693 token exchange).

    Args:
        token_endpoint: the IdP's token endpoint.
        id_token: the person's ID token from the IdP (or a function returning the current one).
        client_id, client_secret: this client at the IdP (a public client when no secret).
    """

    def __init__(
        self,
        token_endpoint: str,
        id_token: str,
        client_id: str,
        client_secret: str | None = None,
        *,
        timeout: float = 30.0,
        verify: Any = True,
    ) -> None:
        self.token_endpoint = token_endpoint
        self.id_token = id_token
        self.client_id = client_id
        self.client_secret = client_secret
        self.timeout = timeout
        self.verify = verify

    async def __call__(self, request: AssertionRequest) -> str:
        import httpx

        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": self.id_token,
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": request.issuer,
            "resource": request.resource,
        }
        if request.scopes:
            form["scope"] = " ".join(request.scopes)
        extra: dict[str, Any] = {}  # the IdP's client authentication: Basic with a secret, else public
        if self.client_secret:
            extra["auth"] = httpx.BasicAuth(self.client_id, self.client_secret)
        else:
            form["client_id"] = self.client_id
        try:
            async with httpx.AsyncClient(timeout=self.timeout, verify=self.verify) as http:
                response = await http.post(self.token_endpoint, data=form, **extra)
        except Exception as failure:  # httpx errors: the IdP is unreachable
            raise AuthorizationError(
                f"The identity provider's token exchange failed: {failure}", "token_exchange"
            ) from None
        answer = response_object(response.content)
        if response.status_code != 200 or answer is None or answer.get("issued_token_type") != ID_JAG:
            error = answer.get("error") if isinstance(answer, dict) else None
            raise AuthorizationError(
                f"The identity provider refused the token exchange for {request.issuer} (HTTP {response.status_code}"
                + (f", {str(error)[:64]}" if error else "")
                + ")",
                "token_exchange",
            )
        grant = answer.get("access_token")
        if not isinstance(grant, str) or not grant:
            raise AuthorizationError("The identity provider's token exchange returned no ID-JAG", "token_exchange")
        logger.info("got an identity assertion grant for %s from the identity provider", request.issuer)
        return grant
