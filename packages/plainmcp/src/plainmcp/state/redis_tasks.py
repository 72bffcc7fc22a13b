"""Task records on Redis: every replica creates, reads, answers and cancels the same tasks.

Keys, under the state's prefix (``<prefix>tasks:``):

- ``task:<id>``: the record, one JSON value, ``PX`` its ttl (Redis forgets it when the ttl ends);
- ``lease:<id>``: the running replica's lease, ``PX`` the lease time, renewed while the task runs
  and deleted when it ends; a non-terminal record without one has lost its runner;
- ``all`` and ``done``: sorted sets of every record and of the finished ones, members
  ``<quota hash>|<id>``, scored by expiry (ms), so the store's bound is counted and the finished
  task that expires first is dropped to make room;
- ``quota:<quota hash>`` and ``quota-done:<quota hash>``: the same per quota key (ids only), for
  the per-caller bound. Each set expires after its last member, and expired members are swept
  when a task is created.

Creating is one Lua script (count, drop, write the record and its lease: nothing is told the id
before all of that is in Redis). A change is a read-modify-write under ``WATCH`` (retried when
another replica changed the record meanwhile). Only commands Redis 7 and Valkey share are used.
Not for Redis Cluster: the script names keys it computes.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any

from .. import json_codec
from .redis_state import RedisState
from .task_records import Edit, NoRoom, TaskRecord

logger = logging.getLogger(__name__)

#: Attempts at a change while other replicas keep changing the same record.
CHANGE_ATTEMPTS = 20

_CREATE = """
local now = ARGV[1]
for i = 1, 4 do redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now) end
local function drop(member)
  local sep = string.find(member, '|', 1, true)
  local qk, id = string.sub(member, 1, sep - 1), string.sub(member, sep + 1)
  redis.call('ZREM', KEYS[1], member)
  redis.call('ZREM', KEYS[2], member)
  redis.call('ZREM', ARGV[10] .. 'quota:' .. qk, id)
  redis.call('ZREM', ARGV[10] .. 'quota-done:' .. qk, id)
  redis.call('DEL', ARGV[10] .. 'task:' .. id, ARGV[10] .. 'lease:' .. id)
end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[4], 0, 0)
  if #oldest == 0 then return 'quota' end
  drop(ARGV[11] .. '|' .. oldest[1])
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0)
  if #oldest == 0 then return 'all' end
  drop(oldest[1])
end
redis.call('SET', KEYS[5], ARGV[6], 'PX', ARGV[7])
redis.call('SET', KEYS[6], '1', 'PX', ARGV[9])
redis.call('ZADD', KEYS[1], ARGV[8], ARGV[4])
redis.call('ZADD', KEYS[3], ARGV[8], ARGV[5])
for _, key in ipairs({KEYS[1], KEYS[3]}) do
  redis.call('PEXPIRE', key, ARGV[7], 'NX')
  redis.call('PEXPIRE', key, ARGV[7], 'GT')
end
return 'ok'
"""


def quota_hash(quota: str) -> str:
    """A short, fixed-length stand-in for a quota key (a principal may be long, or hold ``|``)."""
    return hashlib.sha256(quota.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class RedisTaskRecords:
    """:class:`~plainmcp.state.task_records.TaskRecords` on a :class:`RedisState` (see the module)."""

    def __init__(self, state: RedisState) -> None:
        self.state = state
        self.base = state.key("tasks", "")
        self._script: Any = None

    def _key(self, kind: str, name: str) -> str:
        return f"{self.base}{kind}:{name}"

    @staticmethod
    def _decode(raw: bytes | None, lease: bytes | None) -> TaskRecord | None:
        if raw is None:
            return None
        record = TaskRecord.from_dict(json_codec.loads(raw))
        record.leased = lease is not None
        return record

    async def create(self, record: TaskRecord, *, max_tasks: int, max_per_quota: int, lease_seconds: float) -> None:
        client = self.state.client
        if self._script is None:
            self._script = client.register_script(_CREATE)
        qk = quota_hash(record.quota)
        keys = [
            self.base + "all",
            self.base + "done",
            self._key("quota", qk),
            self._key("quota-done", qk),
            self._key("task", record.id),
            self._key("lease", record.id),
        ]
        args = [
            int(time.time() * 1000),
            max_tasks,
            max_per_quota,
            f"{qk}|{record.id}",
            record.id,
            json_codec.dumps(record.to_dict()),
            record.ttl_ms,
            int(record.expires * 1000),
            max(1, int(lease_seconds * 1000)),
            self.base,
            qk,
        ]
        with self.state.guard("tasks"):
            outcome = await self._script(keys=keys, args=args, client=client)
        if outcome == b"quota":
            raise NoRoom("too many running tasks of this caller")
        if outcome == b"all":
            raise NoRoom("too many running tasks")

    async def get(self, task_id: str) -> TaskRecord | None:
        (record,) = await self.get_many([task_id])
        return record

    async def get_many(self, task_ids: list[str]) -> list[TaskRecord | None]:
        if not task_ids:
            return []
        names = [name for task_id in task_ids for name in (self._key("task", task_id), self._key("lease", task_id))]
        with self.state.guard("tasks"):
            values = await self.state.client.mget(names)
        return [self._decode(values[2 * i], values[2 * i + 1]) for i in range(len(task_ids))]

    async def change(self, task_id: str, edit: Edit) -> TaskRecord | None:
        import redis.exceptions

        key = self._key("task", task_id)
        with self.state.guard("tasks"):
            async with self.state.client.pipeline(transaction=True) as pipe:
                for _ in range(CHANGE_ATTEMPTS):
                    try:
                        return await self._change_once(pipe, key, task_id, edit)
                    except redis.exceptions.WatchError:
                        continue  # another replica changed it between our read and write: again
        raise RuntimeError(f"task {task_id[:8]}: {CHANGE_ATTEMPTS} conflicting changes in a row")

    async def _change_once(self, pipe: Any, key: str, task_id: str, edit: Edit) -> TaskRecord | None:
        await pipe.watch(key, self._key("lease", task_id))
        raw, lease = await pipe.mget(key, self._key("lease", task_id))
        record = self._decode(raw, lease)
        was_terminal = record is not None and record.terminal
        if record is None or not edit(record):
            await pipe.unwatch()
            return record
        pipe.multi()
        pipe.set(key, json_codec.dumps(record.to_dict()), keepttl=True)
        if record.terminal and not was_terminal:
            self._mark_done(pipe, record)
        await pipe.execute()
        record.leased = record.leased and not record.terminal
        return record

    def _mark_done(self, pipe: Any, record: TaskRecord) -> None:
        """Queue what a finished task changes: no lease, and its slot may be taken over."""
        qk = quota_hash(record.quota)
        expires_ms = int(record.expires * 1000)
        remaining = max(1, expires_ms - int(time.time() * 1000))
        pipe.delete(self._key("lease", record.id))
        pipe.zadd(self.base + "done", {f"{qk}|{record.id}": expires_ms})
        pipe.zadd(self._key("quota-done", qk), {record.id: expires_ms})
        for name in (self.base + "done", self._key("quota-done", qk)):
            pipe.pexpire(name, remaining, nx=True)
            pipe.pexpire(name, remaining, gt=True)

    async def renew(self, task_ids: list[str], lease_seconds: float) -> None:
        if not task_ids:
            return
        milliseconds = max(1, int(lease_seconds * 1000))
        with self.state.guard("tasks"):
            async with self.state.client.pipeline(transaction=False) as pipe:
                for task_id in task_ids:
                    pipe.set(self._key("lease", task_id), b"1", px=milliseconds)
                await pipe.execute()

    async def owned_by(self, quota: str) -> list[TaskRecord]:
        with self.state.guard("tasks"):
            ids = await self.state.client.zrange(self._key("quota", quota_hash(quota)), 0, -1)
        records = await self.get_many([task_id.decode("ascii") for task_id in ids])
        return sorted((record for record in records if record is not None), key=lambda record: record.created)

    async def delete(self, records: list[TaskRecord]) -> None:
        if not records:
            return
        with self.state.guard("tasks"):
            async with self.state.client.pipeline(transaction=True) as pipe:
                for record in records:
                    qk = quota_hash(record.quota)
                    pipe.delete(self._key("task", record.id), self._key("lease", record.id))
                    pipe.zrem(self.base + "all", f"{qk}|{record.id}")
                    pipe.zrem(self.base + "done", f"{qk}|{record.id}")
                    pipe.zrem(self._key("quota", qk), record.id)
                    pipe.zrem(self._key("quota-done", qk), record.id)
                await pipe.execute()

    async def count(self) -> int:
        with self.state.guard("tasks"):
            async with self.state.client.pipeline(transaction=True) as pipe:
                pipe.zremrangebyscore(self.base + "all", "-inf", int(time.time() * 1000))
                pipe.zcard(self.base + "all")
                _, kept = await pipe.execute()
        return int(kept)
