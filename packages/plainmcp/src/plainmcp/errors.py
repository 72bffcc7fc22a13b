"""Error codes and the one exception type that carries a JSON-RPC error.

Handlers raise :class:`MCPError` to answer a request with a specific error. Anything else they raise
is turned into ``-32603 Internal error`` by the session, with the traceback on stderr: exception text
never reaches the peer, because it may carry host paths or secrets.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any


class ErrorCode(IntEnum):
    """Every error code the protocol defines, named as the specification names it."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    # Legacy revisions (<= 2025-11-25).
    RESOURCE_NOT_FOUND = -32002
    URL_ELICITATION_REQUIRED = -32042
    # Modern revision (2026-07-28).
    HEADER_MISMATCH = -32020
    MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
    UNSUPPORTED_PROTOCOL_VERSION = -32022
    # JSON-RPC's first implementation-defined server error: the HTTP gateway's failed tool call.
    SERVER_ERROR = -32000
    # Not a wire code of the specification: used locally for a request that timed out or whose peer
    # went away, so a caller can tell these apart from errors the peer sent.
    REQUEST_TIMEOUT = -32001


class MCPError(Exception):
    """A JSON-RPC error: raised by handlers, and by the client when the peer answers with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """The ``error`` member of a JSON-RPC error response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"MCPError({self.code}, {self.message!r}, data={self.data!r})"


class RequestFailed(MCPError):
    """Our own request to the peer failed: the peer's error response, a timeout, or a closed connection.

    A distinct type so that a server handler's call to the client (sampling, elicitation, roots)
    that fails is never mistaken for the handler's own answer: the session does not pass it on as
    the error of the request being served.
    """


def invalid_params(message: str, data: Any = None) -> MCPError:
    return MCPError(ErrorCode.INVALID_PARAMS, message, data)


def method_not_found(method: str) -> MCPError:
    return MCPError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: {method}")
