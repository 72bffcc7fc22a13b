"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663, 2026-07-28, and legacy tasks v1):
a ``tools/call`` that goes on after its request has been answered, which the client polls
(``tasks/get``), feeds with input (``tasks/update``) and cancels (``tasks/cancel``).

A tool declares ``task_support`` (``"optional"`` or ``"required"``); its handler decides when the call
becomes a task by awaiting :meth:`plainmcp.Context.start_task`. Until then the call is an ordinary
request (it may gather input through ``input_required`` rounds); at that point, if the client declared
the extension, the request is answered with a ``CreateTaskResult`` and the handler runs again from the
top in the background, where ``start_task`` returns at once. Input asked for inside a task parks it in
``input_required`` until ``tasks/update`` has answered every pending request; the handler then runs
again from the top with the answers, as in a multi-round request.

Across replicas. What every replica must know of a task is its *record*
(:mod:`plainmcp.state.task_records`: in this process, or in Redis with ``--redis``); what runs it
(its cancel scope, in the task group of :meth:`plainmcp.Server.running`) stays in the replica that
created it. The record is written before the ``CreateTaskResult`` goes out, so ``tasks/get`` on any
replica finds it at once. An answer (``tasks/update``) or a cancel given to another replica reaches
the runner through the fan-out topic ``tasks``; the runner also re-reads its records every
:attr:`TaskStore.renew_seconds`, so a lost message costs at most that long. The runner renews a
lease on each record it runs every :attr:`~TaskStore.renew_seconds` (2 s), valid for
:attr:`~TaskStore.lease_seconds` (8 s); a replica that reads a task still going whose lease has
lapsed marks it ``failed`` ("the server instance running this task stopped"), so no task waits
forever for a replica that died.

State is bounded: at most ``max_tasks`` tasks live at once, and ``max_tasks_per_owner`` of one quota
key (the authenticated principal; without authentication, the peer's address over HTTP; else one
shared key), so that one caller cannot take every slot (finished ones are dropped oldest first to make
room; when every slot is running, new calls get a tool error); each is forgotten ``ttl_ms`` after it was
created (a task still running then is cancelled), and a result larger than ``max_result_bytes`` fails
the task. A task belongs to the caller that created it: the authenticated principal over HTTP with
authentication, else everyone who knows its id (ids are 128-bit random); another principal's task id is
"not found" (``-32602``), exactly like an unknown one.
"""

from __future__ import annotations

import base64
import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
from anyio.abc import TaskGroup

from . import json_codec
from .errors import ErrorCode, MCPError, invalid_params
from .inputs import InputRequest, InputRequired, InputRound
from .state import SharedStateUnavailable
from .state.task_backends import task_records_for
from .state.task_records import (
    CANCELLED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    TERMINAL,
    WORKING,
    MemoryTaskRecords,
    NoRoom,
    TaskRecord,
    TaskRecords,
    iso,
)

if TYPE_CHECKING:
    from .state import SharedState

logger = logging.getLogger(__name__)

__all__ = [
    "CANCELLED",
    "COMPLETED",
    "FAILED",
    "INPUT_REQUIRED",
    "TERMINAL",
    "WORKING",
    "Round",
    "StartTask",
    "TaskRecord",
    "TaskStore",
    "iso",
]

#: Runs one round of the handler as task ``task_id``: returns the tools/call result, raises
#: InputRequired for input, MCPError for a protocol error (anything else is an internal error).
Round = Callable[[str, InputRound], Awaitable[dict[str, Any]]]
#: Told of each status change of a task this replica runs (the legacy era notifies its client).
OnChange = Callable[[TaskRecord], None]

#: The fan-out topic on which replicas ask the runner of a task to cancel it or to take its answers.
TOPIC = "tasks"
#: The error of a task whose replica stopped before it ended.
RUNNER_LOST = {
    "code": int(ErrorCode.INTERNAL_ERROR),
    "message": "The server instance running this task stopped before the task finished",
}
#: The longest task id looked up (ours are 22 characters): a peer's id is never a huge key.
MAX_ID_LENGTH = 64


class StartTask(BaseException):
    """Raised by :meth:`Context.start_task` when the call should become a task now.

    Control flow, like :class:`~plainmcp.inputs.InputRequired`: the dispatcher answers the request
    with a ``CreateTaskResult`` and runs the handler again in the background.
    """


def _new_task_id() -> str:
    """128 random bits, URL-safe (``secrets.token_urlsafe(16)``, without importing ``secrets``: it
    pulls in hmac and OpenSSL's hashes, milliseconds of every server's start-up)."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode("ascii")


def unknown_task(task_id: Any) -> MCPError:
    return invalid_params("Unknown taskId", {"taskId": task_id if isinstance(task_id, str) else None})


class _Running:
    """What the replica running a task keeps of it, beside the record."""

    __slots__ = ("answered", "finished", "on_change", "owner", "scope")

    def __init__(self, owner: str | None, on_change: OnChange | None) -> None:
        self.owner = owner
        self.on_change = on_change
        self.scope = anyio.CancelScope()
        self.answered = anyio.Event()
        self.finished = anyio.Event()  # set once the record is terminal (or the task is gone)

    def changed(self, record: TaskRecord | None) -> None:
        if record is not None and self.on_change is not None:
            self.on_change(record)


class TaskStore:
    """The tasks of one server: their records (shared with other replicas when the server's state
    is), and those this replica runs, in the task group of :meth:`plainmcp.Server.running`.

    The limits, the lease and renewal times are attributes to tune before serving."""

    def __init__(
        self,
        *,
        max_tasks: int = 1000,
        max_tasks_per_owner: int = 100,
        ttl_ms: int = 600_000,
        poll_interval_ms: int = 1000,
        max_result_bytes: int = 1 << 20,
    ) -> None:
        if max_tasks < 1 or max_tasks_per_owner < 1 or ttl_ms < 1 or poll_interval_ms < 1 or max_result_bytes < 1:
            raise ValueError("task limits must be positive")
        self.max_tasks = max_tasks
        self.max_tasks_per_owner = max_tasks_per_owner
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.max_result_bytes = max_result_bytes
        #: How long a runner's lease on a task lasts, and how often the runner renews it.
        self.lease_seconds = 8.0
        self.renew_seconds = 2.0
        self.records: TaskRecords = MemoryTaskRecords()
        self._shared: SharedState | None = None
        self._running: dict[str, _Running] = {}
        self._group: TaskGroup | None = None

    def attach(self, group: TaskGroup | None, shared: SharedState | None = None) -> None:
        """Run new tasks in ``group``, with records kept where ``shared`` keeps state (None: the
        server stopped; running tasks were cancelled with the group, and their leases lapse)."""
        self._group = group
        if group is None:
            return
        if shared is not None and shared is not self._shared:
            self._shared, self.records = shared, task_records_for(shared)
        group.start_soon(self._keep_leases, name="plainmcp-task-leases")
        if self._shared is not None:
            group.start_soon(self._listen, self._shared, name="plainmcp-task-messages")

    def __len__(self) -> int:
        """How many tasks this replica runs now."""
        return len(self._running)

    async def count(self) -> int:
        """How many task records are kept (running or finished, on every replica sharing them)."""
        return await self.records.count()

    # ------------------------------------------------------------------------------- creating

    async def create(
        self,
        owner: str | None,
        run_round: Round,
        first: InputRound,
        ttl_ms: int | None = None,
        on_change: OnChange | None = None,
        *,
        quota: str | None = None,
    ) -> TaskRecord:
        """Make a task and start running it; returns once ``tasks/get`` finds it, on any replica.
        ``ttl_ms`` (what a client asked for) is capped at the store's; ``quota`` is whose slots it
        takes (the owner's by default); ``on_change`` is told of each status change.

        Raises:
            RuntimeError: every slot holds a running task (the caller answers with a tool error),
                or the server is not running.
            SharedStateUnavailable: the shared store cannot be reached.
        """
        group = self._group
        if group is None:
            raise RuntimeError("the server is not running")
        ttl = self.ttl_ms if ttl_ms is None else max(1, min(ttl_ms, self.ttl_ms))
        quota_key = quota if quota is not None else (owner if owner is not None else "anyone")
        record = TaskRecord(_new_task_id(), owner, quota_key, ttl, self.poll_interval_ms)
        limits = {"max_tasks": self.max_tasks, "max_per_quota": self.max_tasks_per_owner}
        try:
            await self.records.create(record, **limits, lease_seconds=self.lease_seconds)
        except NoRoom as full:
            raise RuntimeError(str(full)) from None
        running = _Running(owner, on_change)
        self._running[record.id] = running
        group.start_soon(self._run, record, running, run_round, first, name=f"plainmcp-task-{record.id[:8]}")
        return record

    # -------------------------------------------------------------------------------- running

    async def _run(self, record: TaskRecord, running: _Running, run_round: Round, first: InputRound) -> None:
        outcome: tuple[str, dict[str, Any] | None, dict[str, Any] | None] | None = None
        # Nothing escapes into the server's task group (it would end the server): a task whose record
        # cannot be kept is abandoned here, and its lapsing lease tells every replica it failed.
        try:
            with running.scope:
                running.scope.deadline = anyio.current_time() + record.ttl_ms / 1000
                outcome = await self._rounds(record.id, running, run_round, first)
            if outcome is not None:
                await self._finish(record.id, running, *outcome)
        except SharedStateUnavailable:
            logger.warning("task %s abandoned: the shared store is unreachable", record.id[:8])
        except Exception:
            logger.exception("task %s abandoned: its record could not be kept", record.id[:8])
        finally:
            self._running.pop(record.id, None)
            running.finished.set()

    async def _rounds(
        self, task_id: str, running: _Running, run_round: Round, first: InputRound
    ) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
        """Run the handler until it ends: (status, result, error)."""
        inputs = first
        while True:
            try:
                result = await run_round(task_id, inputs)
            except InputRequired as need:
                answers = await self._wait_for_input(task_id, running, need.requests)
                inputs = InputRound({**inputs.answers, **answers}, inputs.state)
                continue
            except MCPError as error:
                return FAILED, None, error.to_dict()
            except Exception:
                logger.exception("task %s failed", task_id[:8])
                return FAILED, None, {"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}
            return self._checked(task_id, result)

    def _checked(
        self, task_id: str, result: dict[str, Any]
    ) -> tuple[str, dict[str, Any] | None, dict[str, Any] | None]:
        size = len(json_codec.dumps(result))
        if size > self.max_result_bytes:
            logger.warning(
                "task %s: result of %d bytes is over the %d-byte limit", task_id[:8], size, self.max_result_bytes
            )
            message = f"The result ({size} bytes) is larger than this server keeps ({self.max_result_bytes} bytes)"
            return FAILED, None, {"code": int(ErrorCode.INTERNAL_ERROR), "message": message}
        return COMPLETED, result, None

    async def _wait_for_input(
        self, task_id: str, running: _Running, requests: dict[str, InputRequest]
    ) -> dict[str, Any]:
        """Park the task in ``input_required`` until every request is answered; the answers."""
        pending = {key: request.to_dict() for key, request in requests.items()}

        def park(record: TaskRecord) -> bool:
            if record.terminal:
                return False
            record.pending, record.answers = pending, {}
            record.touch(INPUT_REQUIRED)
            return True

        running.answered = anyio.Event()
        running.changed(await self.records.change(task_id, park))
        while True:
            with anyio.move_on_after(self.renew_seconds):  # a lost wake-up costs this long at most
                await running.answered.wait()
            try:
                record = await self.records.get(task_id)
            except SharedStateUnavailable:
                continue  # the store is away: keep waiting (the lease decides if it is too long)
            if record is None or record.terminal:
                running.scope.cancel()  # forgotten or cancelled meanwhile: the scope ends the task
                await anyio.lowlevel.checkpoint()
                raise AssertionError("unreachable: the task's scope was cancelled")
            if record.status == WORKING and not record.pending:
                break
            running.answered = anyio.Event()  # a stale wake-up (an earlier round's): wait again
        answers = record.answers

        def take(record: TaskRecord) -> bool:
            record.answers = {}
            return True

        running.changed(await self.records.change(task_id, take))
        return answers

    async def _finish(
        self, task_id: str, running: _Running, status: str, result: dict[str, Any] | None, error: dict[str, Any] | None
    ) -> None:
        def end(record: TaskRecord) -> bool:
            if record.terminal:
                return False  # cancelled meanwhile: that stays
            record.result, record.error, record.pending = result, error, {}
            record.touch(status)
            return True

        for attempt in range(3):
            try:
                running.changed(await self.records.change(task_id, end))
                return
            except SharedStateUnavailable:
                if attempt == 2:
                    logger.warning("task %s: its %s status could not be stored", task_id[:8], status)
                    return  # its lease lapses: readers will see it failed
                await anyio.sleep(1)

    async def _keep_leases(self) -> None:
        """Renew the leases of the tasks running here, and stop those another replica cancelled
        (or that are gone) in case their message was lost."""
        while True:
            await anyio.sleep(self.renew_seconds)
            ids = list(self._running)
            if not ids:
                continue
            try:
                await self.records.renew(ids, self.lease_seconds)
                records = await self.records.get_many(ids)
            except SharedStateUnavailable:
                logger.warning("task leases not renewed: the shared store is unreachable")
                continue
            except Exception:  # never end the server for it: the next round tries again
                logger.exception("task leases not renewed")
                continue
            for task_id, record in zip(ids, records, strict=True):
                running = self._running.get(task_id)
                if running is None:
                    continue
                if record is None or record.terminal:
                    running.scope.cancel()
                elif record.status == WORKING and not record.pending:
                    running.answered.set()

    async def _listen(self, shared: SharedState) -> None:
        """Act on what other replicas ask of the tasks running here."""
        async with shared.fanout.subscribe(TOPIC) as messages:
            async for message in messages:
                task_id = message.get("id")
                running = self._running.get(task_id) if isinstance(task_id, str) else None
                if running is None:
                    continue
                if message.get("op") == "cancel":
                    running.scope.cancel()
                elif message.get("op") == "answered":
                    running.answered.set()

    async def _tell_runner(self, op: str, task_id: str) -> None:
        """Ask the replica running ``task_id`` to act, where it may run elsewhere."""
        if self._shared is not None:
            await self._shared.fanout.publish(TOPIC, {"op": op, "id": task_id})

    # --------------------------------------------------------------------- the client's methods

    async def find(self, task_id: Any, owner: str | None) -> TaskRecord:
        """The caller's task. A task still going whose runner stopped is marked failed first.

        Raises:
            MCPError: -32602 for an unknown, expired or foreign id.
            SharedStateUnavailable: the shared store cannot be reached.
        """
        if not isinstance(task_id, str) or not task_id or len(task_id) > MAX_ID_LENGTH:
            raise unknown_task(task_id)
        record = await self.records.get(task_id)
        if record is None or record.owner != owner:
            raise unknown_task(task_id)
        if not record.terminal and not record.leased and task_id not in self._running:
            record = await self._runner_lost(record)
        return record

    async def _runner_lost(self, record: TaskRecord) -> TaskRecord:
        def fail(current: TaskRecord) -> bool:
            if current.terminal or current.leased:
                return False  # ended, or renewed meanwhile
            current.error, current.pending = dict(RUNNER_LOST), {}
            current.touch(FAILED)
            return True

        logger.warning("task %s: the replica running it stopped; marked failed", record.id[:8])
        changed = await self.records.change(record.id, fail)
        if changed is None:
            raise unknown_task(record.id)
        return changed

    async def owned_by(self, owner: str) -> list[TaskRecord]:
        """The tasks of ``owner`` (whose quota key is the owner itself, as legacy sessions'), oldest first."""
        return [record for record in await self.records.owned_by(owner) if record.owner == owner]

    def forget_owner(self, owner: str) -> None:
        """Cancel and forget every task of ``owner`` (a connection that ended: nobody can reach them)."""
        for running in [running for running in self._running.values() if running.owner == owner]:
            running.on_change = None
            running.scope.cancel()
        if self._group is not None:
            self._group.start_soon(self._forget, owner, name="plainmcp-task-forget")

    async def _forget(self, owner: str) -> None:
        try:
            await self.records.delete(await self.owned_by(owner))
        except SharedStateUnavailable:
            logger.warning("the tasks of an ended session stay until their ttl: the shared store is unreachable")
        except Exception:
            logger.exception("the tasks of an ended session stay until their ttl")

    async def update(self, record: TaskRecord, responses: Any) -> None:
        """Take answers to the task's pending input requests (others are ignored); the runner goes
        on once every one is answered."""
        if not isinstance(responses, dict):
            raise invalid_params('"inputResponses" must be an object')
        if record.status != INPUT_REQUIRED:
            return
        complete = False

        def answer(current: TaskRecord) -> bool:
            nonlocal complete
            taken = [key for key in responses if key in current.pending]
            if current.status != INPUT_REQUIRED or not taken:
                return False
            for key in taken:
                current.answers[key] = responses[key]
                del current.pending[key]
            complete = not current.pending
            current.touch(WORKING if complete else None)
            return True

        await self.records.change(record.id, answer)
        if complete:
            await self._wake(record.id, "answered")

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Cancel a task that is still going (on whichever replica runs it); a finished one stays as
        it is. Returns the record after."""

        def stop(current: TaskRecord) -> bool:
            if current.terminal:
                return False
            current.pending = {}
            current.touch(CANCELLED)
            return True

        changed = await self.records.change(record.id, stop)
        if changed is None:
            raise unknown_task(record.id)
        if changed.status == CANCELLED and not record.terminal:
            running = self._running.get(record.id)
            if running is not None:
                running.changed(changed)
            await self._wake(record.id, "cancel")
        return changed

    async def _wake(self, task_id: str, op: str) -> None:
        running = self._running.get(task_id)
        if running is None:
            await self._tell_runner(op, task_id)
        elif op == "cancel":
            running.scope.cancel()
        else:
            running.answered.set()

    async def finished(self, record: TaskRecord, owner: str | None) -> TaskRecord:
        """Wait until the task ends and return its final record (legacy ``tasks/result``): woken
        when it ends here, else reading the record again every poll interval (1 s at most).

        Raises:
            MCPError: -32602 once the task's ttl has ended before it did (or it is gone).
        """
        while not record.terminal:
            remaining = record.expires - time.time()
            if remaining <= 0:
                raise _expired(record)
            running = self._running.get(record.id)
            with anyio.move_on_after(min(remaining, self.renew_seconds)):
                if running is not None:
                    await running.finished.wait()
                else:
                    await anyio.sleep(min(1.0, max(0.05, record.poll_interval_ms / 1000)))
            try:
                record = await self.find(record.id, owner)
            except MCPError as error:
                if error.code == ErrorCode.INVALID_PARAMS and record.expires <= time.time():
                    raise _expired(record) from None
                raise
        return record


def _expired(record: TaskRecord) -> MCPError:
    return invalid_params(
        f"The task expired: its ttl of {record.ttl_ms} ms ended before it finished", {"taskId": record.id}
    )
