"""The one error of the authorization flow, and the redaction every log line of it goes through."""

from __future__ import annotations

from ..errors import MCPError

#: The JSON-RPC code an :class:`AuthorizationError` carries (implementation-defined server-error
#: range; not a wire code of the specification, like ``REQUEST_TIMEOUT``).
AUTHORIZATION_FAILED = -32003


class AuthorizationError(MCPError):
    """The client could not get (or keep) authorization for an MCP server.

    The message says what went wrong in words a person can act on (which server, which step, what
    to try); it never holds a token, an authorization code, a client secret or a PKCE verifier.
    ``reason`` is a short machine-readable slug (``resource_mismatch``, ``issuer_mismatch``,
    ``iss_mismatch``, ``iss_missing``, ``no_pkce``, ``no_registration``, ``insufficient_scope``,
    ``denied``, ``token_request``, ``discovery``, ``unauthorized``, ``missing_dependency``, ...).
    """

    def __init__(self, message: str, reason: str = "unauthorized") -> None:
        super().__init__(AUTHORIZATION_FAILED, message, {"reason": reason})
        self.reason = reason


def missing_authlib() -> AuthorizationError:
    return AuthorizationError("OAuth needs the authlib library: pip install 'plainmcp[oauth]'", "missing_dependency")
