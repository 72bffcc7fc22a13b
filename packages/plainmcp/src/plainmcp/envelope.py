"""The 2026-07-28 request envelope: the era rule, and the ``_meta`` fields every modern request carries.

Sans-I/O and synchronous (wire layer). A transport that must look at the envelope before serving a
request (Streamable HTTP checks the mirrored headers against it) parses it here once and hands the
result on with the call, so the dispatcher does not parse it again.
"""

from __future__ import annotations

from typing import Any

from . import protocol
from .errors import ErrorCode, MCPError, invalid_params
from .jsonrpc import Request
from .values import Value, set_field
from .versions import LEGACY_VERSIONS, MODERN_VERSIONS

ENVELOPE_KEYS = (
    protocol.META_PROTOCOL_VERSION,
    protocol.META_CLIENT_CAPABILITIES,
    protocol.META_CLIENT_INFO,
    protocol.META_LOG_LEVEL,
)
#: What a dual-era server supports, newest first: the same list in discover and in -32022 errors.
SUPPORTED_VERSIONS = [*reversed(MODERN_VERSIONS), *reversed(LEGACY_VERSIONS)]


def is_modern_request(request: Request) -> bool:
    """The era rule of the 2026-07-28 versioning page: a request carrying the modern envelope (any
    of its keys, so that an incomplete one is rejected rather than mistaken for legacy) or naming a
    modern-only method is served statelessly."""
    meta = (request.params or {}).get("_meta")
    if isinstance(meta, dict) and any(key in meta for key in ENVELOPE_KEYS):
        return True
    return request.method in protocol.MODERN_ONLY_METHODS


class Envelope(Value):
    """A modern request's terms: its revision, and what the client says about itself."""

    __slots__ = ("version", "client_capabilities", "client_info", "log_threshold")
    version: str
    client_capabilities: dict[str, Any]
    client_info: dict[str, Any]
    log_threshold: int | None

    def __init__(
        self, version: str, client_capabilities: dict[str, Any], client_info: dict[str, Any], log_threshold: int | None
    ) -> None:
        set_field(self, "version", version)
        set_field(self, "client_capabilities", client_capabilities)
        set_field(self, "client_info", client_info)
        set_field(self, "log_threshold", log_threshold)


def check_version(version: str) -> None:
    """Raises -32022 naming what we support unless ``version`` is a modern revision we speak."""
    if version not in MODERN_VERSIONS:
        raise MCPError(
            ErrorCode.UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": SUPPORTED_VERSIONS, "requested": version},
        )


def parse_envelope(params: dict[str, Any]) -> Envelope:
    """The envelope's fields, checked for shape only (-32602); the version is not judged here."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        raise invalid_params(
            f"params._meta must carry {protocol.META_PROTOCOL_VERSION!r} and {protocol.META_CLIENT_CAPABILITIES!r}"
        )
    missing = [key for key in (protocol.META_PROTOCOL_VERSION, protocol.META_CLIENT_CAPABILITIES) if key not in meta]
    if missing:
        raise invalid_params(f"params._meta is missing {', '.join(missing)}")
    version, capabilities = meta[protocol.META_PROTOCOL_VERSION], meta[protocol.META_CLIENT_CAPABILITIES]
    if not isinstance(version, str):
        raise invalid_params(f"{protocol.META_PROTOCOL_VERSION} must be a string")
    if not isinstance(capabilities, dict):
        raise invalid_params(f"{protocol.META_CLIENT_CAPABILITIES} must be an object")
    client_info = meta.get(protocol.META_CLIENT_INFO, {})
    if not isinstance(client_info, dict):
        raise invalid_params(f"{protocol.META_CLIENT_INFO} must be an object")
    threshold = None
    if protocol.META_LOG_LEVEL in meta:
        level = meta[protocol.META_LOG_LEVEL]
        if not isinstance(level, str) or level not in protocol.LOG_LEVEL_RANK:  # an object is unhashable
            raise invalid_params(f"Invalid log level: {level!r}; use one of {', '.join(protocol.LOG_LEVELS)}")
        threshold = protocol.LOG_LEVEL_RANK[level]
    return Envelope(version, capabilities, client_info, threshold)
