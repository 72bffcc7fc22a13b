"""Tasks in the legacy era: the experimental ``tasks`` capability of 2025-11-25 (tasks v1).

The client asks for a task (``params.task``, with an optional ``ttl``) on a ``tools/call`` of a tool
whose ``execution.taskSupport`` allows it, and gets ``{"task": Task}`` back at once. It then polls
``tasks/get``, waits for the result with ``tasks/result`` (the ``tools/call`` result, or the task's
error), lists its tasks with ``tasks/list`` and cancels with ``tasks/cancel``. The handler is the same
as in 2026-07-28: what runs before ``ctx.start_task()`` runs in the request, the rest as the task (a
handler that never calls it has its result kept as an already completed task). Input a task asks for
goes to the client as ordinary requests on the connection.

Tasks belong to the connection that created them: another session's task id is not found (-32602).
The store, its bounds and its runner are the server's (:class:`~plainmcp.tasks.TaskStore`); records
are shared with the other replicas when the server's state is. ``tasks/result`` waits no longer than
the task's ttl: once it ends, the answer is an error saying the task expired.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from . import protocol
from .context import Context
from .errors import ErrorCode, MCPError, invalid_params, method_not_found
from .inputs import InputRound
from .tasks import CANCELLED, FAILED, TERMINAL, StartTask, TaskRecord

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from .peer import Peer
    from .server import Server

#: The methods of tasks v1 (2025-11-25).
LEGACY_TASK_METHODS = frozenset({protocol.TASKS_GET, protocol.TASKS_RESULT, protocol.TASKS_LIST, protocol.TASKS_CANCEL})
#: What the server declares in ``initialize`` when a tool supports tasks.
CAPABILITY: dict[str, Any] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}


def v1_task(task: TaskRecord) -> dict[str, Any]:
    """A task as 2025-11-25 writes it (``ttl`` and ``pollInterval``, in milliseconds)."""
    return {
        "taskId": task.id,
        "status": task.status,
        "createdAt": task.envelope()["createdAt"],
        "lastUpdatedAt": task.envelope()["lastUpdatedAt"],
        "ttl": task.ttl_ms,
        "pollInterval": task.poll_interval_ms,
    }


class LegacyTasks:
    """The tasks of one legacy connection."""

    def __init__(self, server: Server, peer: Peer, spawn: Callable[..., None]) -> None:
        self.server = server
        self.peer = peer
        self._spawn = spawn
        self._owner: str | None = None
        self._created_any = False  # most connections never create one: no need to look at the store
        self._kept = False

    @property
    def owner(self) -> str:
        """This connection's name in the task store, random, made when first needed (most
        connections never make a task: no syscall for them)."""
        if self._owner is None:
            self._owner = "session:" + os.urandom(16).hex()
        return self._owner

    @owner.setter
    def owner(self, name: str) -> None:
        """Name the owner for a session served by several replicas (the same name on each), and keep
        the tasks when this connection ends: the session goes on elsewhere; its tasks end by their ttl."""
        self._owner = name
        self._kept = True

    async def call_tool(
        self,
        ctx: Context,
        params: dict[str, Any],
        handler: Callable[[Context, dict[str, Any]], Awaitable[Any]],
        make_context: Callable[[str], Context],
    ) -> dict[str, Any]:
        """A ``tools/call``: as a task when the client asked for one, else an ordinary call.

        Raises:
            MCPError: -32601 when the tool forbids the task asked for, or requires one not asked for.
        """
        name = params.get("name")  # a peer's value: a list or an object would not even hash
        tool = self.server.tools.get(name) if isinstance(name, str) else None
        asked = params.get("task")
        support = tool.task_support if tool is not None else "forbidden"
        if asked is None:
            if support == "required":
                raise MCPError(ErrorCode.METHOD_NOT_FOUND, "This tool must be called as a task (params.task)")
            result: dict[str, Any] = await handler(ctx, params)
            return result
        if not isinstance(asked, dict):
            raise invalid_params('"task" must be an object')
        if tool is not None and support == "forbidden":
            raise MCPError(ErrorCode.METHOD_NOT_FOUND, "This tool cannot be called as a task")
        ttl = asked.get("ttl")
        ttl_ms = ttl if isinstance(ttl, int) and not isinstance(ttl, bool) and ttl > 0 else None
        ctx.may_start_task = True
        try:
            done = await handler(ctx, params)
        except StartTask:
            task = await self._create(handler, params, make_context, ttl_ms)
        else:
            task = await self._create_finished(done, ttl_ms)
        return {"task": v1_task(task)}

    async def _create(
        self, handler: Any, params: dict[str, Any], make_context: Callable[[str], Context], ttl_ms: int | None
    ) -> TaskRecord:
        async def run_round(task_id: str, inputs: InputRound) -> dict[str, Any]:
            result: dict[str, Any] = await handler(make_context(task_id), params)
            return result

        return await self._store_create(run_round, ttl_ms)

    async def _create_finished(self, result: dict[str, Any], ttl_ms: int | None) -> TaskRecord:
        async def finished(task_id: str, inputs: InputRound) -> dict[str, Any]:
            return result  # the handler already ran, in the request

        return await self._store_create(finished, ttl_ms)

    async def _store_create(self, run_round: Any, ttl_ms: int | None) -> TaskRecord:
        try:
            task = await self.server.tasks.create(
                self.owner, run_round, InputRound({}, {}), ttl_ms, self._status_changed
            )
        except RuntimeError:
            raise MCPError(ErrorCode.INVALID_REQUEST, "The server is running too many tasks; try again later") from None
        self._created_any = True
        return task

    def _status_changed(self, task: TaskRecord) -> None:
        """notifications/tasks/status (optional in 2025-11-25; sent while the connection lasts)."""
        if not self.peer.closed:
            self._spawn(self.peer.notify, protocol.TASKS_STATUS, v1_task(task))

    def end(self) -> None:
        """The connection ended: its tasks are cancelled and forgotten (no one else may reach them)."""
        if self._created_any and not self._kept:
            self.server.tasks.forget_owner(self.owner)

    async def handle(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``."""
        store = self.server.tasks
        if method == protocol.TASKS_LIST:
            return {"tasks": [v1_task(task) for task in await store.owned_by(self.owner)]}
        task = await store.find(params.get("taskId"), self.owner)
        if method == protocol.TASKS_GET:
            return v1_task(task)
        if method == protocol.TASKS_CANCEL:
            if task.status in TERMINAL:
                raise invalid_params(f"The task is already {task.status}", {"taskId": task.id})
            return v1_task(await store.cancel(task))
        if method == protocol.TASKS_RESULT:
            return await self._result(task)
        raise method_not_found(method)

    async def _result(self, task: TaskRecord) -> dict[str, Any]:
        """Wait until the task ends (at most its ttl: then -32602, it expired); its ``tools/call``
        result, or its error as this request's."""
        task = await self.server.tasks.finished(task, self.owner)
        if task.status == FAILED and task.error is not None:
            raise MCPError(_code(task.error.get("code")), str(task.error.get("message", "Internal error")))
        if task.status == CANCELLED or task.result is None:
            raise MCPError(ErrorCode.INVALID_REQUEST, "The task was cancelled")
        result = dict(task.result)
        meta = result.get("_meta")
        result["_meta"] = {**(meta if isinstance(meta, dict) else {}), protocol.META_RELATED_TASK: {"taskId": task.id}}
        return result


def _code(value: Any) -> ErrorCode:
    try:
        return ErrorCode(value)
    except ValueError:
        return ErrorCode.INTERNAL_ERROR
