"""``OAuth``: the authorization an HTTP connection carries (``connect_http(url, auth=OAuth(...))``).

It is an :class:`httpx.Auth`: every request of the connection (POST, GET stream, DELETE) goes
through :meth:`_Flow.async_auth_flow`, which adds the bearer token, and on ``401`` (or ``403``
``insufficient_scope``) runs the flow once and sends the request again. The flow itself lives in
small modules: ``challenge`` (WWW-Authenticate), ``discovery`` (RFC 9728, RFC 8414, OpenID),
``registration`` (CIMD, pre-registered, RFC 7591), ``grants`` (authlib: PKCE, token requests,
refresh, client credentials).
"""

from __future__ import annotations

import logging
from typing import Any

from .authorizer import Authorizer, HeadlessAuthorizer
from .store import MemoryTokenStore, TokenStore

logger = logging.getLogger(__name__)

GRANTS = ("authorization_code", "client_credentials")


class OAuth:
    """OAuth 2.1 for an MCP client, as the 2025-11-25 and 2026-07-28 authorization specs say.

    Keyword options:
        store: where records go (:class:`MemoryTokenStore` by default); see ``oauth.store``.
        authorizer: gets the user to the authorization URL (:class:`HeadlessAuthorizer` by default).
        client_id, client_secret: a pre-registered client (used before CIMD and DCR).
        client_metadata_url: this client's Client ID Metadata Document URL (used as the client_id
            when the server says ``client_id_metadata_document_supported``).
        client_name: the name registered by dynamic registration.
        scopes: scopes to ask for when the server's challenge names none (instead of the
            resource's ``scopes_supported``).
        token_endpoint_auth_method: force one (``none``, ``client_secret_basic``,
            ``client_secret_post``, ``private_key_jwt``); else chosen from the registration and
            the server's metadata.
        grant: ``"authorization_code"`` (a person or an auto-approving server) or
            ``"client_credentials"`` (a machine client, the client-credentials extension).
        private_key: a PEM private key for ``private_key_jwt`` (client credentials);
            ``signing_algorithm`` its JWS algorithm (from the key's type when omitted).
        max_step_ups: how many times one request may re-authorize for ``insufficient_scope``.

    Helpers for a command line, without an MCP session: :meth:`login`, :meth:`logout`,
    :meth:`status`.
    """

    def __init__(
        self,
        *,
        store: TokenStore | None = None,
        authorizer: Authorizer | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "plainmcp",
        scopes: list[str] | None = None,
        token_endpoint_auth_method: str | None = None,
        grant: str = "authorization_code",
        private_key: str | None = None,
        signing_algorithm: str | None = None,
        max_step_ups: int = 2,
        timeout: float = 30.0,
        verify: Any = True,
    ) -> None:
        if grant not in GRANTS:
            raise ValueError(f"grant must be one of {GRANTS}, not {grant!r}")
        self.store: TokenStore = store if store is not None else MemoryTokenStore()
        self.authorizer: Authorizer = authorizer if authorizer is not None else HeadlessAuthorizer()
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.scopes = list(scopes) if scopes else None
        self.token_endpoint_auth_method = token_endpoint_auth_method
        self.grant = grant
        self.private_key = private_key
        self.signing_algorithm = signing_algorithm
        self.max_step_ups = max_step_ups
        self.timeout = timeout
        self.verify = verify

    def httpx_auth(self, server_url: str) -> Any:
        """The :class:`httpx.Auth` for a connection to ``server_url`` (what ``connect_http`` installs)."""
        raise NotImplementedError

    async def login(self, url: str) -> dict[str, Any]:
        """Authorize for the MCP server at ``url`` now (discovery without a challenge: the
        well-known locations), save the record, and return its :meth:`status` entry."""
        raise NotImplementedError

    async def logout(self, url: str) -> int:
        """Forget every record for the resource at ``url`` (any issuer); returns how many."""
        raise NotImplementedError

    async def status(self, url: str | None = None) -> list[dict[str, Any]]:
        """The stored logins (for ``url``'s resource, or all), redacted: ``issuer``, ``resource``,
        ``client_id``, ``scopes``, ``expires_at``, ``expired``, ``refreshable``; never a token."""
        raise NotImplementedError
