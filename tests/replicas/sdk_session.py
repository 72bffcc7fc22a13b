"""One whole session of the official Python SDK client (``mcp`` 2.3.0, ``mcp.Client``) through a proxy, in
one era, reported as a dict of what the SDK's typed API returned (the test asserts on it).

- legacy (2025-11-25): initialize, tools/list, calls, ``resources/subscribe`` with updates heard by the
  SDK's ``message_handler`` (they travel on its GET stream), an elicitation the SDK's callback answers (a
  server request on the call's SSE stream; the answer is a POST of its own), and a 2025-11-25 task: a
  ``tools/call`` with the ``task`` field, ``tasks/get`` polled, ``tasks/result`` read, through the SDK's own
  session (it has no tasks API for that era, so the requests are typed here), then DELETE on close;
- 2026-07-28: the same calls, ``subscriptions/listen`` through ``client.listen()``, the elicitation as
  ``input_required`` rounds the SDK fulfils itself, and a task through a ``ClientExtension`` that claims
  the ``resultType: "task"`` result and polls ``tasks/get`` (``Mcp-Name`` = taskId, mirrored by the SDK).

Every wait is bounded.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.subscriptions import ResourceUpdated

from tests.interop.test_sdk_tasks import Tasks

WATCHED = "test://watched-resource"
TRIGGERS = 3
QUICK = 15.0
SESSION_TIMEOUT = 90.0
ANSWER = {"username": "ada", "email": "ada@example.com"}


class TaskIdParams(types.RequestParams):
    task_id: str


class GetTask(types.Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"


class TaskResult(types.Request[TaskIdParams, Literal["tasks/result"]]):
    method: Literal["tasks/result"] = "tasks/result"
    name_param = "taskId"


class CreatedTaskV1(types.Result):
    task: dict[str, Any]


class TaskV1(types.Result):
    task_id: str
    status: str


def texts(result: types.CallToolResult) -> list[str]:
    return [block.text for block in result.content if isinstance(block, types.TextContent)]


class Session:
    """The callbacks of one SDK client and what they saw."""

    def __init__(self) -> None:
        self.elicited: list[dict[str, Any]] = []
        self.updates: list[str] = []
        self._heard = anyio.Event()

    async def elicitation(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(params, types.ElicitRequestFormParams)
        self.elicited.append({"message": params.message, "schema": params.requested_schema})
        return types.ElicitResult(action="accept", content=dict(ANSWER))

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updates.append(str(message.params.uri))
            if len(self.updates) >= TRIGGERS:
                self._heard.set()

    async def heard_all(self) -> None:
        """Wait (bounded) for every trigger's update; what was heard is asserted by the test, after the rest."""
        with anyio.move_on_after(QUICK):
            await self._heard.wait()


async def common_calls(client: Client, report: dict[str, Any]) -> None:
    with anyio.fail_after(QUICK):
        report["tools"] = sorted(tool.name for tool in (await client.list_tools()).tools)
        report["calls"] = [texts(await client.call_tool("test_simple_text", {}))[0] for _ in range(5)]
        report["greeting"] = texts(await client.call_tool("greet", {"name": "SDK"}))[0]


async def triggers(client: Client, report: dict[str, Any]) -> None:
    """The session itself changes the watched resource: round-robin sends each trigger to another replica."""
    with anyio.fail_after(QUICK):
        report["triggers"] = [
            texts(await client.call_tool("test_trigger_resource_update", {}))[0] for _ in range(TRIGGERS)
        ]


async def elicit(client: Client, session: Session, report: dict[str, Any]) -> None:
    with anyio.fail_after(QUICK):
        report["elicitation"] = texts(await client.call_tool("test_elicitation", {"message": "Who are you?"}))[0]
    report["elicited"] = session.elicited


async def legacy_session(url: str, streams_open: Callable[[], Awaitable[int]] | None = None) -> dict[str, Any]:
    """``streams_open``: the SSE streams the servers have open; the changes are made once it counts the
    SDK's GET stream (else after a fixed 0.3 s, which a loaded machine can outlast: nothing heard)."""
    session = Session()
    report: dict[str, Any] = {}
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(
            url, mode="legacy", elicitation_callback=session.elicitation, message_handler=session.on_message, cache=None
        ) as client:
            report["protocolVersion"] = client.protocol_version
            await common_calls(client, report)
            with anyio.fail_after(QUICK):
                report["subscribed"] = (await client.subscribe_resource(WATCHED)).model_dump(exclude_none=True)
            # The SDK opens its GET stream after notifications/initialized, in a task of its own.
            if streams_open is None:
                await anyio.sleep(0.3)
            else:
                with anyio.fail_after(QUICK):
                    while await streams_open() < 1:
                        await anyio.sleep(0.05)
            await triggers(client, report)
            await session.heard_all()
            await anyio.sleep(0.3)  # and nothing more after them
            report["updates"] = list(session.updates)
            with anyio.fail_after(QUICK):
                await client.unsubscribe_resource(WATCHED)
            await elicit(client, session, report)
            report["task"] = await legacy_task(client)
    return report


async def legacy_task(client: Client) -> dict[str, Any]:
    params = {"name": "slow_compute", "arguments": {"seconds": 0.3, "label": "sdk"}, "task": {"ttl": 60_000}}
    with anyio.fail_after(QUICK):
        # The SDK validates a tools/call result as a CallToolResult, so its typed path refuses the 2025-11-25
        # CreateTaskResult; the call goes through the same session's dispatcher (its session id, its transport).
        raw = await client.session._dispatcher.send_raw_request("tools/call", params, {})
        created = CreatedTaskV1.model_validate(raw)
        task_id = created.task["taskId"]
        statuses = []
        while not statuses or statuses[-1] == "working":
            detail = await client.session.send_request(GetTask(params=TaskIdParams(task_id=task_id)), TaskV1)
            statuses.append(detail.status)
            await anyio.sleep(0.02)
        result = await client.session.send_request(
            TaskResult(params=TaskIdParams(task_id=task_id)), types.CallToolResult
        )
    return {"created": created.task["status"], "statuses": statuses, "text": texts(result)[0]}


async def modern_session(url: str) -> dict[str, Any]:
    session = Session()
    tasks = Tasks()
    report: dict[str, Any] = {}
    with anyio.fail_after(SESSION_TIMEOUT):
        async with Client(
            url, mode="2026-07-28", elicitation_callback=session.elicitation, extensions=[tasks], cache=None
        ) as client:
            report["protocolVersion"] = client.protocol_version
            await common_calls(client, report)
            with anyio.fail_after(QUICK):
                async with client.listen(resource_subscriptions=[WATCHED]) as subscription:
                    report["honored"] = list(subscription.honored.resource_subscriptions)
                    # One trigger, then its event: the SDK coalesces identical events nobody has read yet.
                    report["triggers"], events = [], []
                    for _ in range(TRIGGERS):
                        report["triggers"] += texts(await client.call_tool("test_trigger_resource_update", {}))
                        events.append(await subscription.__anext__())
                    with anyio.move_on_after(0.3):
                        events.append(await subscription.__anext__())  # a duplicate would show here
            report["updates"] = [e.uri for e in events if isinstance(e, ResourceUpdated)]
            report["events"] = len(events)
            await elicit(client, session, report)
            with anyio.fail_after(QUICK):
                result = await client.call_tool("slow_compute", {"seconds": 0.3, "label": "sdk"})
            report["task"] = {
                "created": [c.status for c in tasks.created],
                "statuses": list(tasks.statuses),
                "text": texts(result)[0],
            }
    return report
