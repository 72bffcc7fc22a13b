"""The shared state the command line asks for: ``--redis URL`` and ``PLAINMCP_STATE_KEYS``."""

from __future__ import annotations

from . import SharedState
from .keyring import keys_from_environment
from .memory import MemoryState


def default_prefix(server_name: str) -> str:
    """Keys of one server's replicas: ``plainmcp:<server name>:`` (several servers can share one Redis)."""
    return f"plainmcp:{server_name}:"


def shared_state_for(server_name: str, redis_url: str | None, prefix: str | None = None) -> SharedState | None:
    """The state to :meth:`~plainmcp.Server.share`, or None to keep the server's own default.

    ``redis_url``: a :class:`~.redis_state.RedisState` (checked reachable now, synchronously); else,
    with ``PLAINMCP_STATE_KEYS`` set, in-memory state sealing with those keys (processes that share no
    store still accept each other's ``requestState``).

    Raises:
        ValueError: a key in ``PLAINMCP_STATE_KEYS`` that is not valid.
        RuntimeError: one line: redis-py is missing, or Redis cannot be reached.
    """
    keyring = keys_from_environment()
    if redis_url:
        from .redis_state import RedisState, check_reachable

        check_reachable(redis_url)
        return RedisState(redis_url, prefix=prefix or default_prefix(server_name), keyring=keyring)
    if keyring is not None:
        return MemoryState(keyring)
    return None
