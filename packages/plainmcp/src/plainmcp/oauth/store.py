"""Where the authorization flow keeps what it got: one record per (issuer, resource).

A *record* is a JSON-serialisable dict; every key is optional except ``version``:

``version``
    ``1``.
``client``
    The client this issuer knows us as: ``client_id``; ``client_secret`` (confidential clients);
    ``token_endpoint_auth_method`` (``none``, ``client_secret_basic``, ``client_secret_post``,
    ``private_key_jwt``); ``source`` (``dcr``, ``cimd``, ``preregistered``);
    ``client_secret_expires_at`` (epoch seconds, 0 = never, from RFC 7591); ``redirect_uri`` the
    registration was made for. A client is never reused with another issuer (SEP-2352).
``token``
    ``access_token``, ``token_type``, ``refresh_token`` (when granted), ``expires_at`` (epoch
    seconds, absent when the server said nothing), ``scope`` (what the server granted, when it said).
``dpop_key``
    The private JWK a DPoP-bound token (``token_type`` ``DPoP``) is proved with (RFC 9449).
``scopes``
    The scopes last requested, a list of strings (the base a step-up adds to).
``saved_at``
    Epoch seconds of the last save.

Records hold secrets: a store must never log them, and a persistent store must keep them readable
by the user alone (``plainmcp.oauth.file_store``).
"""

from __future__ import annotations

import copy
from typing import Any, Protocol, runtime_checkable

RECORD_VERSION = 1


@runtime_checkable
class TokenStore(Protocol):
    """Records keyed by the authorization server's issuer and the protected resource's URI."""

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None: ...

    async def save(self, issuer: str, resource: str, record: dict[str, Any]) -> None: ...

    async def delete(self, issuer: str, resource: str) -> None: ...

    async def entries(self) -> list[tuple[str, str, dict[str, Any]]]: ...


class MemoryTokenStore:
    """A :class:`TokenStore` in this process's memory (the default: nothing outlives the process)."""

    def __init__(self) -> None:
        self._records: dict[tuple[str, str], dict[str, Any]] = {}

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        record = self._records.get((issuer, resource))
        return copy.deepcopy(record) if record is not None else None

    async def save(self, issuer: str, resource: str, record: dict[str, Any]) -> None:
        self._records[(issuer, resource)] = copy.deepcopy(record)

    async def delete(self, issuer: str, resource: str) -> None:
        self._records.pop((issuer, resource), None)

    async def entries(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [(issuer, resource, copy.deepcopy(record)) for (issuer, resource), record in self._records.items()]
