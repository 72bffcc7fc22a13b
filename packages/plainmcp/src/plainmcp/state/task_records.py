"""Task records: what every replica must know of a task (SEP-2663 and legacy tasks v1), behind one
small interface, in memory or on Redis.

A record is plain data: status, result or error, the pending input requests and the answers given
so far, the owner (who may reach it) and the quota key (whose slots it takes), the ttl, the poll
interval, and when it was created and last updated. The *running* part of a task (its cancel scope,
the task group it runs in) stays in the replica that runs it (:mod:`plainmcp.tasks`); that replica
holds a *lease* on the record, renewed while the task runs, so any replica reading a record whose
lease has lapsed knows that its runner is gone.

:class:`TaskRecords` is the interface; :class:`MemoryTaskRecords` keeps records in this process
(one process: today's behaviour and limits); :class:`~plainmcp.state.redis_tasks.RedisTaskRecords`
keeps them in Redis. :func:`~plainmcp.state.task_backends.task_records_for` picks the one that
goes with a shared state, so no other module knows which runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})

#: Edits a record in place; returns True when it changed something that must be written.
Edit = Callable[["TaskRecord"], bool]


class NoRoom(RuntimeError):
    """Every slot (of the caller's quota, or of the server) holds a task still going."""


def iso(timestamp: float) -> str:
    """An ISO-8601 UTC timestamp with milliseconds, as the wire wants ``createdAt``."""
    # time, not datetime: datetime costs a millisecond at start-up, in every server, for the few that use tasks
    seconds = int(timestamp)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int((timestamp - seconds) * 1000):03d}Z"


class TaskRecord:
    """One task as every replica sees it. ``leased`` is filled when the record is read: False once
    the replica running the task has stopped renewing its lease (it died or lost the store)."""

    id: str
    owner: str | None
    quota: str
    ttl_ms: int
    poll_interval_ms: int
    created: float
    updated: float
    status: str
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    #: Input requests still unanswered, in wire form (``{"method", "params"}``), by key.
    pending: dict[str, dict[str, Any]]
    #: Answers given through ``tasks/update`` that the runner has not taken yet.
    answers: dict[str, Any]
    leased: bool

    def __init__(
        self,
        id: str,
        owner: str | None,
        quota: str,
        ttl_ms: int,
        poll_interval_ms: int,
        created: float | None = None,
        updated: float = 0.0,
        status: str = WORKING,
        result: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
        pending: dict[str, dict[str, Any]] | None = None,
        answers: dict[str, Any] | None = None,
        leased: bool = True,
    ) -> None:
        self.id = id
        self.owner = owner
        self.quota = quota
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.created = time.time() if created is None else created
        self.updated = updated
        self.status = status
        self.result = result
        self.error = error
        self.pending = {} if pending is None else pending
        self.answers = {} if answers is None else answers
        self.leased = leased
        if not self.updated:
            self.updated = self.created

    # No __eq__: a record is equal only to itself (each snapshot of a task is a record of its own).

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(id={self.id!r}, owner={self.owner!r}, quota={self.quota!r}, "
            f"ttl_ms={self.ttl_ms!r}, poll_interval_ms={self.poll_interval_ms!r}, created={self.created!r}, "
            f"updated={self.updated!r}, status={self.status!r}, result={self.result!r}, error={self.error!r}, "
            f"pending={self.pending!r}, answers={self.answers!r}, leased={self.leased!r})"
        )

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    @property
    def expires(self) -> float:
        """When the record is forgotten (epoch seconds)."""
        return self.created + self.ttl_ms / 1000

    def touch(self, status: str | None = None) -> None:
        if status is not None:
            self.status = status
        self.updated = time.time()

    def copy(self) -> TaskRecord:
        """A snapshot the caller may edit (the result is shared: nobody edits it)."""
        twin = TaskRecord(**{name: getattr(self, name) for name in _FIELDS})
        twin.pending, twin.answers = dict(self.pending), dict(self.answers)
        return twin

    def to_dict(self) -> dict[str, Any]:
        """The stored form (``leased`` is not stored: it is what a read finds)."""
        return {name: getattr(self, name) for name in _FIELDS if name != "leased"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TaskRecord:
        return cls(**{name: data[name] for name in _FIELDS if name in data})

    # ---------------------------------------------------------------------------------- wire

    def envelope(self) -> dict[str, Any]:
        """The ``Task`` fields every 2026-07-28 task-shaped result carries."""
        return {
            "taskId": self.id,
            "status": self.status,
            "createdAt": iso(self.created),
            "lastUpdatedAt": iso(self.updated),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }

    def detailed(self) -> dict[str, Any]:
        """``tasks/get``'s answer: the envelope, plus the result, the error or the pending input."""
        detail = self.envelope()
        if self.status == COMPLETED and self.result is not None:
            detail["result"] = self.result
        elif self.status == FAILED and self.error is not None:
            detail["error"] = self.error
        elif self.status == INPUT_REQUIRED:
            detail["inputRequests"] = dict(self.pending)
        return detail


#: TaskRecord's fields, in the order of its constructor's parameters.
_FIELDS = (
    "id",
    "owner",
    "quota",
    "ttl_ms",
    "poll_interval_ms",
    "created",
    "updated",
    "status",
    "result",
    "error",
    "pending",
    "answers",
    "leased",
)


class TaskRecords(Protocol):
    """Where task records live. Every method may raise
    :class:`~plainmcp.state.SharedStateUnavailable` when the store cannot be reached."""

    async def create(self, record: TaskRecord, *, max_tasks: int, max_per_quota: int, lease_seconds: float) -> None:
        """Store a new record (with its runner's lease) before anyone is told its id. When the
        record's quota, or the whole store, is full, the oldest finished task of it is dropped.

        Raises:
            NoRoom: every slot of the quota (or of the store) holds a task still going.
        """

    async def get(self, task_id: str) -> TaskRecord | None:
        """A snapshot of the record (``leased`` filled in), None for an unknown or expired id."""

    async def get_many(self, task_ids: list[str]) -> list[TaskRecord | None]:
        """:meth:`get` for several ids, in one round trip where the store allows it."""

    async def change(self, task_id: str, edit: Edit) -> TaskRecord | None:
        """Apply ``edit`` to the record atomically (no other change comes between the read and the
        write) and return the record after it; None when the id is unknown or expired. A record
        that becomes terminal frees its slot for :meth:`create`'s dropping."""

    async def renew(self, task_ids: list[str], lease_seconds: float) -> None:
        """Extend the leases of the tasks this replica runs."""

    async def owned_by(self, quota: str) -> list[TaskRecord]:
        """The records of one quota key, oldest first."""

    async def delete(self, records: list[TaskRecord]) -> None:
        """Forget these records (and free their slots)."""

    async def count(self) -> int:
        """How many records are kept now (running or finished, not expired)."""


class MemoryTaskRecords:
    """:class:`TaskRecords` in this process: one replica, so leases only lapse if the runner stops
    renewing them without ending its task (the process's event loop still runs)."""

    def __init__(self) -> None:
        self._records: dict[str, TaskRecord] = {}
        self._leases: dict[str, float] = {}  # task id -> monotonic deadline

    def _sweep(self) -> None:
        now = time.time()
        for task_id in [key for key, record in self._records.items() if record.expires <= now]:
            del self._records[task_id]
            self._leases.pop(task_id, None)

    async def create(self, record: TaskRecord, *, max_tasks: int, max_per_quota: int, lease_seconds: float) -> None:
        self._sweep()
        mine = [kept for kept in self._records.values() if kept.quota == record.quota]
        if len(mine) >= max_per_quota:
            self._drop_oldest_finished(mine, "too many running tasks of this caller")
        if len(self._records) >= max_tasks:
            self._drop_oldest_finished(list(self._records.values()), "too many running tasks")
        self._records[record.id] = record.copy()
        self._leases[record.id] = time.monotonic() + lease_seconds

    def _drop_oldest_finished(self, records: list[TaskRecord], refusal: str) -> None:
        for record in sorted(records, key=lambda kept: kept.created):
            if record.terminal:
                del self._records[record.id]
                self._leases.pop(record.id, None)
                return
        raise NoRoom(refusal)

    async def get(self, task_id: str) -> TaskRecord | None:
        self._sweep()
        record = self._records.get(task_id)
        if record is None:
            return None
        snapshot = record.copy()
        snapshot.leased = self._leases.get(task_id, 0.0) > time.monotonic()
        return snapshot

    async def get_many(self, task_ids: list[str]) -> list[TaskRecord | None]:
        return [await self.get(task_id) for task_id in task_ids]

    async def change(self, task_id: str, edit: Edit) -> TaskRecord | None:
        record = await self.get(task_id)  # a copy: an edit that returns False leaves no trace
        if record is None:
            return None
        if edit(record):  # nothing suspends between the read above and this write: atomic
            self._records[task_id] = record.copy()
            if record.terminal:
                self._leases.pop(task_id, None)
                record.leased = False
        return record

    async def renew(self, task_ids: list[str], lease_seconds: float) -> None:
        deadline = time.monotonic() + lease_seconds
        for task_id in task_ids:
            if task_id in self._records:
                self._leases[task_id] = deadline

    async def owned_by(self, quota: str) -> list[TaskRecord]:
        self._sweep()
        mine = sorted((record for record in self._records.values() if record.quota == quota), key=lambda r: r.created)
        return [record.copy() for record in mine]

    async def delete(self, records: list[TaskRecord]) -> None:
        for record in records:
            self._records.pop(record.id, None)
            self._leases.pop(record.id, None)

    async def count(self) -> int:
        self._sweep()
        return len(self._records)
