"""The official Python SDK (``mcp`` 2.3.0) as a tasks client of ``plainmcp-everything`` over Streamable
HTTP, 2026-07-28: a small :class:`mcp.client.extension.ClientExtension` (nobody here wrote the client it
plugs into) claims the ``resultType: "task"`` result of ``tools/call`` and resolves it by polling
``tasks/get`` through the SDK's own session (which mirrors ``taskId`` in ``Mcp-Name``); ``tasks/cancel``
goes the same way. The server is a real process."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from pydantic import Field

from .http_server import running_server

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

TASKS = "io.modelcontextprotocol/tasks"
SESSION_TIMEOUT = 60.0
POLLS = 500


class TaskParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param: ClassVar[str | None] = "taskId"


class CancelTask(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param: ClassVar[str | None] = "taskId"


class CreatedTask(types.Result):
    result_type: Literal["task"]
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class DetailedTask(types.Result):
    result_type: Literal["complete"] = "complete"
    task_id: str
    status: str
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = Field(default=None, alias="inputRequests")


class Ack(types.Result):
    result_type: Literal["complete"] = "complete"


class Tasks(ClientExtension):
    """Polls each created task until it ends; remembers what it saw."""

    identifier = TASKS

    def __init__(self) -> None:
        self.created: list[CreatedTask] = []
        self.statuses: list[str] = []

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
        self.created.append(created)
        for _ in range(POLLS):
            detail = await ctx.session.send_request(GetTask(params=TaskParams(task_id=created.task_id)), DetailedTask)
            self.statuses.append(detail.status)
            if detail.status == "completed" and detail.result is not None:
                return types.CallToolResult.model_validate(detail.result)
            if detail.status in ("failed", "cancelled"):
                raise RuntimeError(f"task {detail.status}: {detail.error}")
            await anyio.sleep(0.02)
        raise AssertionError("the task did not finish")


async def test_the_sdk_client_resolves_tasks_by_polling():
    tasks = Tasks()
    with running_server("http") as server:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(server.mcp_url, mode="2026-07-28", extensions=[tasks], cache=None) as client:
                slow = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "sdk"})
                failing = await client.call_tool("failing_job", {})
                greeting = await client.call_tool("greet", {"name": "SDK"})
        server.assert_healthy()
        server.assert_clean_log()
    assert [block.text for block in slow.content] == ["Computed sdk in 0.3 s"]
    assert failing.is_error is True  # a tool error: the task completed with isError
    assert greeting.content[0].text == "Hello, SDK!"
    assert [created.status for created in tasks.created] == ["working", "working"]
    assert "working" in tasks.statuses and tasks.statuses.count("completed") == 2


async def test_the_sdk_client_cancels_a_task():
    seen: list[CreatedTask] = []

    class Cancelling(Tasks):
        async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
            seen.append(created)
            ack = await ctx.session.send_request(CancelTask(params=TaskParams(task_id=created.task_id)), Ack)
            detail = await ctx.session.send_request(GetTask(params=TaskParams(task_id=created.task_id)), DetailedTask)
            return types.CallToolResult(content=[types.TextContent(text=f"{ack.result_type} {detail.status}")])

    with running_server("http") as server:
        with anyio.fail_after(SESSION_TIMEOUT):
            async with Client(server.mcp_url, mode="2026-07-28", extensions=[Cancelling()], cache=None) as client:
                result = await client.call_tool("slow_compute", {"seconds": 60})
        server.assert_clean_log()
    assert result.content[0].text == "complete cancelled"
    assert len(seen) == 1
