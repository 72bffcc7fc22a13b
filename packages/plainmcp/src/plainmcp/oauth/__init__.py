"""OAuth 2.1 for the plainmcp HTTP client (``pip install 'plainmcp[oauth]'``).

``connect_http(url, auth=OAuth(...))`` authorizes as the MCP authorization specification
(2025-11-25, 2026-07-28) says: a ``401`` with ``WWW-Authenticate`` leads to the Protected Resource
Metadata (RFC 9728), the authorization server's metadata (RFC 8414 / OpenID Connect Discovery,
with the 2025-03-26 fallbacks), a client registration (pre-registered, Client ID Metadata
Document, or RFC 7591 dynamic registration), the authorization code grant with PKCE (S256) and the
``resource`` indicator (RFC 8707), the ``iss`` check (RFC 9207), step-up on ``insufficient_scope``,
refresh, DPoP-bound tokens (RFC 9449), and for machine clients the client-credentials extension,
the JWT-bearer grant of workload identity federation (SEP-1933) and enterprise-managed
authorization (SEP-990, :class:`IdJagExchange`).

Why authlib for the OAuth mechanics: its httpx-based ``AsyncOAuth2Client`` already does PKCE,
the token endpoint's client authentication (``client_secret_basic``, ``client_secret_post``,
``none``, and ``private_key_jwt`` through ``PrivateKeyJWT`` over joserfc), token parsing, expiry and
refresh, on the same httpx this client's transports use, and it is well kept (RFC-by-RFC modules,
regular releases). The MCP-specific parts (which URLs to try in which order, what to refuse) are
this package's own small modules. authlib is imported only when a flow runs, so the core stays
light; without it the flow raises :class:`AuthorizationError` saying how to install it.
"""

from __future__ import annotations

from .authorizer import Authorizer, HeadlessAuthorizer
from .enterprise import AssertionRequest, IdJagExchange
from .errors import AuthorizationError
from .provider import OAuth
from .store import MemoryTokenStore, TokenStore

__all__ = [
    "AssertionRequest",
    "AuthorizationError",
    "Authorizer",
    "HeadlessAuthorizer",
    "IdJagExchange",
    "MemoryTokenStore",
    "OAuth",
    "TokenStore",
]
