"""The task-record interface (plainmcp.state.task_records) behaves the same in memory and on a real Redis:
bounds per quota and overall (finished tasks make room, oldest first, from whichever quota they hold),
atomic changes, leases that lapse when nobody renews them, and records forgotten at their ttl."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from plainmcp.state.memory import MemoryState
from plainmcp.state.redis_state import RedisState
from plainmcp.state.task_backends import task_records_for
from plainmcp.state.task_records import COMPLETED, MemoryTaskRecords, NoRoom, TaskRecord, TaskRecords

pytestmark = pytest.mark.anyio

LEASE = 5.0


@pytest.fixture(params=["memory", "redis"])
def state(request):
    if request.param == "memory":
        return MemoryState()
    return RedisState(request.getfixturevalue("redis_url"), prefix="records-test:")


@asynccontextmanager
async def records_of(state) -> AsyncIterator[TaskRecords]:
    async with state.opened():
        yield task_records_for(state)


def record(task_id: str, quota: str = "q", ttl_ms: int = 60_000) -> TaskRecord:
    return TaskRecord(task_id, "owner", quota, ttl_ms, 1000)


async def create(records: TaskRecords, made: TaskRecord, max_tasks: int = 10, per_quota: int = 10) -> None:
    await records.create(made, max_tasks=max_tasks, max_per_quota=per_quota, lease_seconds=LEASE)


def finish(current: TaskRecord) -> bool:
    current.result = {"content": []}
    current.touch(COMPLETED)
    return True


async def test_the_factory_picks_the_store_that_goes_with_the_state(state):
    async with records_of(state) as records:
        assert isinstance(records, MemoryTaskRecords) == isinstance(state, MemoryState)


async def test_a_created_record_reads_back_whole_and_leased(state):
    async with records_of(state) as records:
        made = record("t1")
        made.pending = {"a": {"method": "elicitation/create", "params": {"message": "A?"}}}
        await create(records, made)
        seen = await records.get("t1")
        assert seen is not None and seen.to_dict() == made.to_dict() and seen.leased
        assert await records.get("nope") is None
        assert [r.id if r else None for r in await records.get_many(["t1", "nope"])] == ["t1", None]


async def test_a_full_quota_refuses_until_a_finished_task_makes_room(state):
    async with records_of(state) as records:
        await create(records, record("a1"), per_quota=2)
        await create(records, record("a2"), per_quota=2)
        with pytest.raises(NoRoom, match="of this caller"):
            await create(records, record("a3"), per_quota=2)
        await create(records, record("b1", quota="other"), per_quota=2)
        await records.change("a1", finish)
        await create(records, record("a3"), per_quota=2)
        assert await records.get("a1") is None  # the finished one was dropped for it
        assert {r.id for r in await records.owned_by("q")} == {"a2", "a3"}


async def test_the_store_bound_drops_the_oldest_finished_task_of_any_quota(state):
    async with records_of(state) as records:
        await create(records, record("x1", quota="x"), max_tasks=2)
        await create(records, record("y1", quota="y"), max_tasks=2)
        with pytest.raises(NoRoom, match="too many running tasks"):
            await create(records, record("z1", quota="z"), max_tasks=2)
        await records.change("x1", finish)
        await create(records, record("z1", quota="z"), max_tasks=2)
        assert await records.count() == 2
        assert await records.owned_by("x") == []  # dropped from its own quota too
        await create(records, record("x2", quota="x"), max_tasks=3, per_quota=1)  # x's slot is free again


async def test_a_change_sees_the_latest_record_and_a_false_edit_writes_nothing(state):
    async with records_of(state) as records:
        await create(records, record("t1"))
        changed = await records.change("t1", finish)
        assert (
            changed is not None and changed.status == COMPLETED and not changed.leased
        )  # a finished task has no lease

        def rewrite(current: TaskRecord) -> bool:
            current.status = "working"
            return False

        assert (await records.change("t1", rewrite)).status == "working"  # type: ignore[union-attr]  # what the edit saw
        assert (await records.get("t1")).status == COMPLETED  # type: ignore[union-attr]  # not written
        assert await records.change("nope", finish) is None


async def test_a_lease_lapses_unless_renewed(state):
    async with records_of(state) as records:
        await records.create(record("kept"), max_tasks=10, max_per_quota=10, lease_seconds=0.3)
        await records.create(record("lost"), max_tasks=10, max_per_quota=10, lease_seconds=0.3)
        for _ in range(3):
            await anyio.sleep(0.15)
            await records.renew(["kept"], 0.3)
        kept, lost = await records.get_many(["kept", "lost"])
        assert kept is not None and kept.leased
        assert lost is not None and not lost.leased


async def test_a_record_is_forgotten_at_its_ttl(state):
    async with records_of(state) as records:
        await create(records, record("short", ttl_ms=200))
        await create(records, record("long"))
        await anyio.sleep(0.35)
        assert await records.get("short") is None
        assert await records.count() == 1
        await records.delete([record("long")])
        assert await records.count() == 0 and await records.get("long") is None
