"""State that several replicas of one server must share, behind small interfaces.

A server is one process by default and needs nothing else: :class:`~.memory.MemoryState` keeps
everything in the process. Several replicas (``--workers N``, or instances behind a load balancer)
share one :class:`~.redis_state.RedisState` (``--redis URL``). The rest of the core talks only to
the :class:`SharedState` protocol and never learns which one runs.

What is shared, and where it lives:

- the key ring that seals ``requestState`` (:mod:`.keyring`): every replica verifies what any sealed;
- a fan-out of messages to every replica (:mod:`.fanout`): resource updates and list changes reach
  ``subscriptions/listen`` streams and legacy subscribers on every replica; other parts (tasks, legacy
  sessions) use their own topics;
- ``claim``: the first replica to claim a name within a time wins (single-flight for servers'
  upstream calls, leases).

When the shared store is unreachable, operations that need it raise :class:`SharedStateUnavailable`,
a JSON-RPC error (-32000) with a clear message; the store reconnects by itself when it returns.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from ..errors import ErrorCode, MCPError
from .fanout import Fanout, Subscription
from .keyring import KeyRing


class SharedStateUnavailable(MCPError):
    """The shared store (Redis) cannot be reached: the call needs it and fails now, cleanly.

    A JSON-RPC server error (-32000) whose message says what is missing; never a hang."""

    def __init__(self, what: str = "shared state") -> None:
        super().__init__(
            ErrorCode.SERVER_ERROR,
            f"The server's shared state store is unreachable ({what}); try again shortly",
            {"reason": "shared_state_unavailable"},
        )


class SharedState(Protocol):
    """What replicas share. :class:`~.memory.MemoryState` and :class:`~.redis_state.RedisState`
    implement it; nothing else in the core knows which is in use."""

    #: ``"memory"`` or ``"redis"``: for logs, ``/health`` and ``/metrics`` only, never for decisions.
    kind: str
    #: True when other processes may share this state (then notifications go through the fan-out);
    #: False for one process.
    replicated: bool

    @property
    def keyring(self) -> KeyRing:
        """The ring sealing ``requestState`` (valid once :meth:`opened` has been entered)."""

    @property
    def fanout(self) -> Fanout:
        """Messages to every replica, this one included."""

    def opened(self) -> AbstractAsyncContextManager[None]:
        """Connect (and load the key ring) for the block's duration; entered by ``Server.running``."""

    async def claim(self, name: str, ttl_seconds: float) -> bool:
        """True for the first caller, on any replica, to claim ``name`` within ``ttl_seconds``.

        Raises:
            SharedStateUnavailable: the store cannot be reached.
        """

    async def health(self) -> dict[str, Any]:
        """``{"kind": ..., "reachable": bool}`` (and, for Redis, the round trip in ms)."""

    def counters(self) -> dict[str, float]:
        """For ``/metrics``, without a round trip: ``up`` (1 if the last command reached the store, else 0)
        and ``failures`` (commands that could not reach it, since start)."""


__all__ = ["Fanout", "KeyRing", "SharedState", "SharedStateUnavailable", "Subscription"]
