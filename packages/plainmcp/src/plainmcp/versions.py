"""The MCP revisions, version negotiation, and what each revision allows on the wire."""

from __future__ import annotations

V2024_11_05 = "2024-11-05"
V2025_03_26 = "2025-03-26"
V2025_06_18 = "2025-06-18"
V2025_11_25 = "2025-11-25"
V2026_07_28 = "2026-07-28"

#: Revisions with the ``initialize`` handshake and sessions, oldest first.
LEGACY_VERSIONS: tuple[str, ...] = (V2024_11_05, V2025_03_26, V2025_06_18, V2025_11_25)
#: Stateless revisions: every request carries its version in ``_meta``.
MODERN_VERSIONS: tuple[str, ...] = (V2026_07_28,)
ALL_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS

LATEST_LEGACY = LEGACY_VERSIONS[-1]
LATEST = ALL_VERSIONS[-1]


def negotiate_legacy(requested: object) -> str:
    """The version to answer ``initialize`` with.

    The specification: echo the client's version when it is supported, otherwise answer with another
    supported version (the latest); it is the client's call to disconnect. Not an error either way.
    """
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY


def is_modern(version: str) -> bool:
    return version in MODERN_VERSIONS


def allows_batches(version: str) -> bool:
    """JSON-RPC batches exist in 2025-03-26 only: added there, removed in 2025-06-18."""
    return version == V2025_03_26


def at_least(version: str, minimum: str) -> bool:
    """Whether ``version`` is ``minimum`` or newer. Dated revisions compare as strings."""
    return version >= minimum
