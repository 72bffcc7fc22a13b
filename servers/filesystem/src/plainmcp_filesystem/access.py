"""Which policy applies to a request: the operator's, narrowed by the client's roots, or the client's roots.

Started with no directory, the server serves each client its own roots (as the official server
does): asked with ``roots/list`` in both eras (in 2026-07-28 as an input request of each call; in
the legacy era once per session, and again after the client says they changed). A client that
offers no roots gets every path refused with a message saying why.

With directories and ``--use-roots``, a legacy client that declared the ``roots`` capability is asked for its roots
once per session (``roots/list``), and again after it says they changed; the operator's directories
are narrowed to them (:meth:`AccessPolicy.narrowed`): roots never widen or replace the operator's
set. A client that declared roots but does not answer gets every path refused (fail closed).
2026-07-28 requests use the operator's set: asking for roots there costs an extra round trip on
every request, and the revision has no roots-changed notification to cache against.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit
from weakref import WeakKeyDictionary

from plainmcp import MODERN_VERSIONS, MCPError

from .paths import AccessPolicy, PathDenied

if TYPE_CHECKING:
    from plainmcp import Context

logger = logging.getLogger(__name__)

ROOTS_TIMEOUT = 10.0


def _usable(directory: str) -> bool:
    """Whether a client's root can be an allowed directory: absolute, and an existing directory."""
    if "\x00" in directory or not os.path.isabs(directory):
        return False
    try:
        AccessPolicy([directory])
    except (ValueError, OSError):
        return False
    return True


def file_uri_path(uri: str) -> str | None:
    """The local path of a ``file://`` URI (empty or ``localhost`` host), else None."""
    parts = urlsplit(uri)
    if parts.scheme != "file" or parts.netloc not in ("", "localhost") or parts.query or parts.fragment:
        return None
    path = unquote(parts.path, errors="strict") if parts.path else ""
    return path or None


class Access:
    """Hands out the :class:`AccessPolicy` for each request."""

    def __init__(self, policy: AccessPolicy, *, use_roots: bool) -> None:
        self.policy = policy
        self.use_roots = use_roots
        self._narrowed: WeakKeyDictionary[Any, AccessPolicy] = WeakKeyDictionary()

    async def policy_for(self, ctx: Context) -> AccessPolicy:
        """The policy for this request.

        Raises:
            PathDenied: the client declared roots but could not list them.
        """
        connection = ctx.connection
        if not self.policy.roots:
            return await self._roots_only(ctx, connection)
        if (
            not self.use_roots
            or connection is None
            or ctx.version in MODERN_VERSIONS
            or not ctx.client_supports("roots")
        ):
            return self.policy
        cached = self._narrowed.get(connection)
        if cached is not None:
            return cached
        try:
            roots = await ctx.list_roots(timeout=ROOTS_TIMEOUT)
        except (MCPError, TimeoutError) as problem:
            logger.warning("roots/list failed (%s); refusing every path for this client", problem)
            raise PathDenied("Access denied: the client's roots could not be listed") from None
        directories = [p for p in (file_uri_path(r.get("uri", "")) for r in roots if isinstance(r, dict)) if p]
        narrowed = self.policy.narrowed(directories)
        logger.info("client roots narrow the allowed directories to %d", len(narrowed.roots))
        self._narrowed[connection] = narrowed
        return narrowed

    async def _roots_only(self, ctx: Context, connection: Any) -> AccessPolicy:
        """The client's roots as the allowed directories (the server was started without any)."""
        if not ctx.client_supports("roots"):
            raise PathDenied(
                "Access denied: this server was started without directories and the client offers no "
                "roots; start it with a directory, or use a client that declares roots"
            )
        modern = ctx.version in MODERN_VERSIONS
        cached = None if modern or connection is None else self._narrowed.get(connection)
        if cached is not None:
            return cached
        try:
            roots = await ctx.list_roots(timeout=ROOTS_TIMEOUT)
        except (MCPError, TimeoutError) as problem:
            logger.warning("roots/list failed (%s); refusing every path for this client", problem)
            raise PathDenied("Access denied: the client's roots could not be listed") from None
        directories = [p for p in (file_uri_path(r.get("uri", "")) for r in roots if isinstance(r, dict)) if p]
        policy = AccessPolicy(d for d in directories if _usable(d))
        if not modern and connection is not None:
            self._narrowed[connection] = policy
        return policy

    async def roots_changed(self, connection: Any) -> None:
        """Registered with ``Server.roots_changed``: forget the cached roots; the next request asks again."""
        self._narrowed.pop(connection, None)
