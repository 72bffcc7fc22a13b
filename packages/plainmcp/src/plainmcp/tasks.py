"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663, 2026-07-28): a ``tools/call`` that
goes on after its request has been answered, which the client polls (``tasks/get``), feeds with input
(``tasks/update``) and cancels (``tasks/cancel``).

A tool declares ``task_support`` (``"optional"`` or ``"required"``); its handler decides when the call
becomes a task by awaiting :meth:`plainmcp.Context.start_task`. Until then the call is an ordinary
request (it may gather input through ``input_required`` rounds); at that point, if the client declared
the extension, the request is answered with a ``CreateTaskResult`` and the handler runs again from the
top in the background, where ``start_task`` returns at once. Input asked for inside a task parks it in
``input_required`` until ``tasks/update`` has answered every pending request; the handler then runs
again from the top with the answers, as in a multi-round request.

State is bounded: at most ``max_tasks`` tasks live at once, and ``max_tasks_per_owner`` of one owner,
so that one caller cannot take every slot (finished ones are dropped oldest first to make room; when
every slot is running, new calls get a tool error), each is forgotten ``ttl_ms`` after
it was created (a task still running then is cancelled), and a result larger than ``max_result_bytes``
fails the task. A task belongs to the caller that created it: the authenticated principal over HTTP
with authentication, else everyone who knows its id (ids are 128-bit random); another principal's
task id is "not found" (``-32602``), exactly like an unknown one.
"""

from __future__ import annotations

import base64
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import TaskGroup

from . import json_codec
from .errors import ErrorCode, MCPError, invalid_params
from .inputs import InputRequest, InputRequired, InputRound

logger = logging.getLogger(__name__)

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})

#: Runs one round of the handler as task ``task_id``: returns the tools/call result, raises
#: InputRequired for input, MCPError for a protocol error (anything else is an internal error).
Round = Callable[[str, InputRound], Awaitable[dict[str, Any]]]


class StartTask(BaseException):
    """Raised by :meth:`Context.start_task` when the call should become a task now.

    Control flow, like :class:`~plainmcp.inputs.InputRequired`: the dispatcher answers the request
    with a ``CreateTaskResult`` and runs the handler again in the background.
    """


def iso(timestamp: float) -> str:
    """An ISO-8601 UTC timestamp with milliseconds, as the wire wants ``createdAt``."""
    # time, not datetime: datetime costs a millisecond at start-up, in every server, for the few that use tasks
    seconds = int(timestamp)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{int((timestamp - seconds) * 1000):03d}Z"


def _new_task_id() -> str:
    """128 random bits, URL-safe (``secrets.token_urlsafe(16)``, without importing ``secrets``: it
    pulls in hmac and OpenSSL's hashes, milliseconds of every server's start-up)."""
    return base64.urlsafe_b64encode(os.urandom(16)).rstrip(b"=").decode("ascii")


@dataclass(eq=False)
class Task:
    """One task's state. Only :class:`TaskStore` changes it."""

    id: str
    owner: str | None
    ttl_ms: int
    poll_interval_ms: int
    created: float = field(default_factory=time.time)
    updated: float = 0.0
    status: str = WORKING
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    pending: dict[str, InputRequest] = field(default_factory=dict)
    answers: dict[str, Any] = field(default_factory=dict)
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    answered: anyio.Event = field(default_factory=anyio.Event)
    finished: anyio.Event = field(default_factory=anyio.Event)  # set once the status is terminal
    #: Called after each change of status (the legacy era tells the client with a notification).
    on_change: Callable[[Task], None] | None = None

    def __post_init__(self) -> None:
        self.updated = self.created

    @property
    def expires(self) -> float:
        return self.created + self.ttl_ms / 1000

    def envelope(self) -> dict[str, Any]:
        """The ``Task`` fields every task-shaped result carries."""
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
            detail["inputRequests"] = {key: request.to_dict() for key, request in self.pending.items()}
        return detail

    def _set(self, status: str) -> None:
        self.status = status
        self.updated = time.time()
        if self.on_change is not None:
            self.on_change(self)


class TaskStore:
    """The tasks of one server. Tasks run in the task group of :meth:`plainmcp.Server.running`."""

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
        self._tasks: dict[str, Task] = {}
        self._group: TaskGroup | None = None

    def attach(self, group: TaskGroup | None) -> None:
        """Run new tasks in ``group`` (None: the server stopped; running tasks were cancelled with it)."""
        self._group = group

    def __len__(self) -> int:
        self._sweep()
        return len(self._tasks)

    # ------------------------------------------------------------------------------- creating

    def create(
        self,
        owner: str | None,
        run_round: Round,
        first: InputRound,
        ttl_ms: int | None = None,
        on_change: Callable[[Task], None] | None = None,
    ) -> Task:
        """Make a task and start running it; returns once ``tasks/get`` finds it. ``ttl_ms`` (what
        a client asked for) is capped at the store's; ``on_change`` is told of each status change.

        Raises:
            RuntimeError: every slot holds a running task (the caller answers with a tool error),
                or the server is not running.
        """
        if self._group is None:
            raise RuntimeError("the server is not running")
        self._make_room(owner)
        ttl = self.ttl_ms if ttl_ms is None else max(1, min(ttl_ms, self.ttl_ms))
        task = Task(_new_task_id(), owner, ttl, self.poll_interval_ms, on_change=on_change)
        self._tasks[task.id] = task
        self._group.start_soon(self._run, task, run_round, first)
        return task

    def _make_room(self, owner: str | None) -> None:
        self._sweep()
        mine = [task for task in self._tasks.values() if task.owner == owner]
        if len(mine) >= self.max_tasks_per_owner:
            self._drop_oldest_finished(mine, "too many running tasks of this caller")
        if len(self._tasks) >= self.max_tasks:
            self._drop_oldest_finished(list(self._tasks.values()), "too many running tasks")

    def _drop_oldest_finished(self, tasks: list[Task], refusal: str) -> None:
        for task in sorted(tasks, key=lambda t: t.created):
            if task.status in TERMINAL:
                del self._tasks[task.id]
                return
        raise RuntimeError(refusal)

    def _sweep(self) -> None:
        now = time.time()
        for task in [t for t in self._tasks.values() if t.expires <= now]:
            task.scope.cancel()
            del self._tasks[task.id]

    # -------------------------------------------------------------------------------- running

    async def _run(self, task: Task, run_round: Round, first: InputRound) -> None:
        inputs = first
        with task.scope:
            task.scope.deadline = anyio.current_time() + task.ttl_ms / 1000
            while True:
                try:
                    result = await run_round(task.id, inputs)
                except InputRequired as need:
                    await self._wait_for_input(task, need.requests)
                    inputs = InputRound({**inputs.answers, **task.answers}, inputs.state)
                    continue
                except MCPError as error:
                    self._finish(task, FAILED, error=error.to_dict())
                except Exception:
                    logger.exception("task %s failed", task.id[:8])
                    self._finish(
                        task, FAILED, error={"code": int(ErrorCode.INTERNAL_ERROR), "message": "Internal error"}
                    )
                else:
                    self._complete(task, result)
                return

    async def _wait_for_input(self, task: Task, requests: dict[str, InputRequest]) -> None:
        task.pending = dict(requests)
        task.answers = {}
        task.answered = anyio.Event()
        task._set(INPUT_REQUIRED)
        await task.answered.wait()
        task._set(WORKING)

    def _complete(self, task: Task, result: dict[str, Any]) -> None:
        size = len(json_codec.dumps(result))
        if size > self.max_result_bytes:
            logger.warning(
                "task %s: result of %d bytes is over the %d-byte limit", task.id[:8], size, self.max_result_bytes
            )
            message = f"The result ({size} bytes) is larger than this server keeps ({self.max_result_bytes} bytes)"
            self._finish(task, FAILED, error={"code": int(ErrorCode.INTERNAL_ERROR), "message": message})
            return
        self._finish(task, COMPLETED, result=result)

    @staticmethod
    def _finish(
        task: Task, status: str, *, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> None:
        if task.status in TERMINAL:
            return  # cancelled meanwhile: that stays
        task.result, task.error, task.pending = result, error, {}
        task._set(status)
        task.finished.set()

    # --------------------------------------------------------------------- the client's methods

    def find(self, task_id: Any, owner: str | None) -> Task:
        """The caller's task. Raises MCPError(-32602) for an unknown, expired or foreign id."""
        self._sweep()
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None or task.owner != owner:
            raise invalid_params("Unknown taskId", {"taskId": task_id if isinstance(task_id, str) else None})
        return task

    def forget_owner(self, owner: str) -> None:
        """Cancel and forget every task of ``owner`` (a connection that ended: nobody can reach them)."""
        for task in [t for t in self._tasks.values() if t.owner == owner]:
            self.cancel(task)
            del self._tasks[task.id]

    def owned_by(self, owner: str | None) -> list[Task]:
        """The caller's tasks, oldest first."""
        self._sweep()
        return sorted((task for task in self._tasks.values() if task.owner == owner), key=lambda task: task.created)

    def update(self, task: Task, responses: Any) -> None:
        """Take answers to the task's pending input requests (others are ignored)."""
        if not isinstance(responses, dict):
            raise invalid_params('"inputResponses" must be an object')
        if task.status != INPUT_REQUIRED:
            return
        for key in [key for key in responses if key in task.pending]:
            task.answers[key] = responses[key]
            del task.pending[key]
        task.updated = time.time()
        if not task.pending:
            task.answered.set()

    def cancel(self, task: Task) -> None:
        """Cancel a task that is still going; a finished one stays as it is."""
        if task.status in TERMINAL:
            return
        task.scope.cancel()
        task.pending = {}
        task._set(CANCELLED)
        task.finished.set()
