"""The task records that go with a shared state (one place decides, so no other module knows)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from .task_records import MemoryTaskRecords, TaskRecords

if TYPE_CHECKING:
    from . import SharedState


def task_records_for(shared: SharedState) -> TaskRecords:
    """The records that go with ``shared``: in Redis for a state on Redis, else in this process."""
    # Not imported here: a state on Redis has loaded the module already, and a stdio server's
    # start-up need not pay for it (urllib.parse).
    redis_state = sys.modules.get(f"{__package__}.redis_state")
    if redis_state is not None and isinstance(shared, redis_state.RedisState):
        from .redis_tasks import RedisTaskRecords

        return RedisTaskRecords(shared)
    return MemoryTaskRecords()
