"""Tasks (the ``io.modelcontextprotocol/tasks`` extension, SEP-2663): a task-supporting tool's handler
awaits ``ctx.start_task()``; a 2026-07-28 client that declared the extension gets a CreateTaskResult and
polls, feeds and cancels the task. Bounded by count, TTL and result size; owned by its creator. Each
behaviour runs twice: with the task records in this process, and in a real Redis (``RedisState``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import Client, ErrorCode, MCPError, Server, ToolError, inputs
from plainmcp.inputs import InputRound
from plainmcp.state.redis_state import RedisState
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
TASKS = "io.modelcontextprotocol/tasks"
WITH_TASKS = {"elicitation": {}, "extensions": {TASKS: {}}}
#: Polling: a fixed number of short sleeps (a task that needs longer is a failure).
POLLS = 300
POLL_SECONDS = 0.01
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}


def envelope(capabilities: dict[str, Any]) -> dict[str, Any]:
    return {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        }
    }


class Fixture:
    """A server whose task tools the test drives: ``release`` lets ``work`` finish, ``stopped``
    counts handlers that were cancelled while they worked."""

    def __init__(self) -> None:
        self.release = anyio.Event()
        self.stopped = 0
        self.runs = 0
        self.server = Server("tasks", "1.0.0")
        self.server.tool(task_support="optional")(self.work)
        self.server.tool(task_support="required")(self.must)
        self.server.tool(task_support="optional")(self.ask_two)
        self.server.tool(task_support="optional")(self.big)
        self.server.tool(task_support="optional")(self.broken)
        self.server.tool()(self.plain)
        self.server.tool("plain_optional", task_support="optional")(self.plain)

    async def work(self, ctx, args):
        """Works until released."""
        self.runs += 1
        await ctx.start_task()
        try:
            await self.release.wait()
        except anyio.get_cancelled_exc_class():
            self.stopped += 1
            raise
        return "worked"

    async def must(self, ctx, args):
        """Always a task; fails as a tool."""
        await ctx.start_task()
        raise ToolError("no luck")

    async def ask_two(self, ctx, args):
        """Asks two questions inside the task."""
        await ctx.start_task()
        answers = await ctx.ask({"a": inputs.elicitation("A?", CONFIRM), "b": inputs.elicitation("B?", CONFIRM)})
        return f"a={answers['a']['content']['ok']} b={answers['b']['content']['ok']}"

    async def big(self, ctx, args):
        """A large result."""
        await ctx.start_task()
        return "x" * 5000

    async def broken(self, ctx, args):
        """A protocol error inside the task."""
        await ctx.start_task()
        raise MCPError(ErrorCode.INVALID_PARAMS, "bad state")

    async def plain(self, ctx, args):
        """Never a task."""
        await ctx.start_task()  # a tool without task support: a no-op
        return "plain"


def fixture_on(request: pytest.FixtureRequest) -> Fixture:
    """A Fixture whose task records are where ``request.param`` says: ``"memory"``, or a real Redis."""
    made = Fixture()
    if request.param == "redis":
        made.server.share(RedisState(request.getfixturevalue("redis_url"), prefix="tasks-test:"))
    return made


@pytest.fixture(params=["memory", "redis"])
def fixture(request: pytest.FixtureRequest) -> Fixture:
    return fixture_on(request)


@asynccontextmanager
async def client_of(fixture: Fixture, version: str = MODERN) -> AsyncIterator[Client]:
    async with connect_in_memory(fixture.server, protocol_version=version) as client:
        yield client


async def rpc(client: Client, method: str, params: dict[str, Any], capabilities: dict[str, Any] = WITH_TASKS) -> Any:
    return await client.session.request(method, {**params, **envelope(capabilities)})


async def call(client: Client, name: str, capabilities: dict[str, Any] = WITH_TASKS, **params: Any) -> dict[str, Any]:
    return await rpc(client, "tools/call", {"name": name, "arguments": {}, **params}, capabilities)


async def until(client: Client, task_id: str, *statuses: str) -> dict[str, Any]:
    for _ in range(POLLS):
        detail = await rpc(client, "tasks/get", {"taskId": task_id})
        if detail["status"] in statuses:
            return detail
        await anyio.sleep(POLL_SECONDS)
    raise AssertionError(f"task {task_id} stayed {detail['status']}")


async def test_a_call_becomes_a_task_that_completes_with_its_result_inlined(fixture):
    async with client_of(fixture) as client:
        created = await call(client, "work")
        assert created["resultType"] == "task"
        assert set(created) >= {"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
        assert created["status"] == "working" and created["ttlMs"] == 600_000 and "result" not in created
        assert created["createdAt"].endswith("Z") and "requestState" not in created
        working = await rpc(client, "tasks/get", {"taskId": created["taskId"]})
        assert working["resultType"] == "complete" and working["status"] == "working" and "result" not in working
        fixture.release.set()
        done = await until(client, created["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "worked"}]
    assert fixture.runs == 2  # once in the request, once as the task (from the top)


async def test_without_the_extension_calls_run_as_requests_and_required_ones_are_refused(fixture):
    fixture.release.set()
    async with client_of(fixture) as client:
        result = await call(client, "work", capabilities={})
        assert result["resultType"] == "complete" and result["content"][0]["text"] == "worked"
        with pytest.raises(MCPError) as refused:
            await call(client, "must", capabilities={})
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            with pytest.raises(MCPError) as gated:
                await rpc(client, method, {"taskId": "x", "inputResponses": {}}, capabilities={})
            assert gated.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY
    assert refused.value.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


async def test_the_legacy_era_runs_task_tools_as_ordinary_calls():
    fixture = Fixture()
    fixture.release.set()
    async with client_of(fixture, LEGACY) as client:
        result = await client.call_tool("work", {})
        tools, _ = await client.list_tools()
    assert result["content"][0]["text"] == "worked" and "taskId" not in result
    assert {tool["name"]: tool.get("execution") for tool in tools}["work"] == {"taskSupport": "optional"}
    assert "execution" not in {tool["name"]: tool for tool in tools}["plain"]


async def test_a_tool_without_task_support_never_becomes_a_task():
    async with client_of(Fixture()) as client:
        result = await call(client, "plain", task={"ttl": 1000})
    assert result["resultType"] == "complete" and result["content"][0]["text"] == "plain"


async def test_tool_errors_complete_and_protocol_errors_fail(fixture):
    async with client_of(fixture) as client:
        tool_error = await until(client, (await call(client, "must"))["taskId"], "completed", "failed")
        protocol_error = await until(client, (await call(client, "broken"))["taskId"], "completed", "failed")
    assert tool_error["status"] == "completed" and tool_error["result"]["isError"] is True
    assert protocol_error["status"] == "failed" and "result" not in protocol_error
    assert protocol_error["error"] == {"code": -32602, "message": "bad state"}


async def test_input_inside_a_task_waits_for_every_answer(fixture):
    async with client_of(fixture) as client:
        task_id = (await call(client, "ask_two"))["taskId"]
        parked = await until(client, task_id, "input_required")
        assert set(parked["inputRequests"]) == {"a", "b"}
        assert parked["inputRequests"]["a"]["method"] == "elicitation/create"
        ack = await rpc(
            client,
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"a": {"action": "accept", "content": {"ok": True}}, "zzz": {}}},
        )
        assert ack["resultType"] == "complete" and "status" not in ack
        still = await rpc(client, "tasks/get", {"taskId": task_id})
        assert still["status"] == "input_required" and set(still["inputRequests"]) == {"b"}
        await rpc(
            client,
            "tasks/update",
            {"taskId": task_id, "inputResponses": {"b": {"action": "accept", "content": {"ok": False}}}},
        )
        done = await until(client, task_id, "completed")
        with pytest.raises(MCPError) as bad:
            await rpc(client, "tasks/update", {"taskId": task_id, "inputResponses": []})
    assert done["result"]["content"][0]["text"] == "a=True b=False"
    assert bad.value.code == ErrorCode.INVALID_PARAMS


async def test_cancel_stops_the_handler_and_is_idempotent(fixture):
    async with client_of(fixture) as client:
        task_id = (await call(client, "work"))["taskId"]
        await until(client, task_id, "working")
        ack = await rpc(client, "tasks/cancel", {"taskId": task_id})
        assert ack["resultType"] == "complete" and set(ack) <= {"resultType", "_meta"}
        cancelled = await until(client, task_id, "cancelled")
        again = await rpc(client, "tasks/cancel", {"taskId": task_id})
        for _ in range(POLLS):
            if fixture.stopped:
                break
            await anyio.sleep(POLL_SECONDS)
        fixture.release.set()
        await anyio.sleep(0.05)
        after = await rpc(client, "tasks/get", {"taskId": task_id})
    assert cancelled["status"] == "cancelled" and again["resultType"] == "complete"
    assert fixture.stopped == 1  # the handler itself was cancelled, not only its status
    assert after["status"] == "cancelled" and "result" not in after


@pytest.mark.parametrize("method", ["tasks/get", "tasks/cancel", "tasks/update"])
async def test_unknown_task_ids_are_invalid_params(fixture, method):
    async with client_of(fixture) as client:
        with pytest.raises(MCPError) as unknown:
            await rpc(client, method, {"taskId": "nope", "inputResponses": {}})
    assert unknown.value.code == ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("method", ["tasks/result", "tasks/list"])
async def test_removed_v1_methods_are_method_not_found(method):
    async with client_of(Fixture()) as client:
        with pytest.raises(MCPError) as missing:
            await rpc(client, method, {"taskId": "nope"})
    assert missing.value.code == ErrorCode.METHOD_NOT_FOUND


async def test_discover_names_the_extension_only_when_a_tool_supports_tasks():
    fixture = Fixture()
    async with client_of(fixture) as client:
        with_tasks = await rpc(client, "server/discover", {})
    bare = Server("bare", "1")
    bare.tool()(Fixture().plain)
    async with connect_in_memory(bare, protocol_version=MODERN) as client:
        without = await rpc(client, "server/discover", {})
    assert with_tasks["capabilities"]["extensions"] == {TASKS: {}} and "tasks" not in with_tasks["capabilities"]
    assert "extensions" not in without["capabilities"]


async def test_the_result_size_is_bounded(fixture):
    fixture.server.tasks.max_result_bytes = 1000
    async with client_of(fixture) as client:
        failed = await until(client, (await call(client, "big"))["taskId"], "completed", "failed")
    assert failed["status"] == "failed" and "result" not in failed
    assert (
        failed["error"]["code"] == -32603 and "larger than this server keeps (1000 bytes)" in failed["error"]["message"]
    )


async def test_the_task_count_is_bounded_and_finished_tasks_make_room(fixture):
    fixture.server.tasks.max_tasks = 2
    async with client_of(fixture) as client:
        first = (await call(client, "work"))["taskId"]
        await call(client, "work")
        busy = await call(client, "work")
        assert busy["isError"] is True and "too many tasks" in busy["content"][0]["text"]
        fixture.release.set()
        await until(client, first, "completed")
        await anyio.sleep(0.05)  # the second one completes too
        room = await call(client, "must")
        assert room["resultType"] == "task"
        assert await fixture.server.tasks.count() == 2  # one finished task was dropped to make room


async def test_tasks_are_forgotten_after_their_ttl_and_a_running_one_is_cancelled(fixture):
    fixture.server.tasks.ttl_ms = 100
    async with client_of(fixture) as client:
        task_id = (await call(client, "work"))["taskId"]
        assert (await rpc(client, "tasks/get", {"taskId": task_id}))["ttlMs"] == 100
        await anyio.sleep(0.2)
        with pytest.raises(MCPError) as expired:
            await rpc(client, "tasks/get", {"taskId": task_id})
        for _ in range(POLLS):
            if fixture.stopped:
                break
            await anyio.sleep(POLL_SECONDS)
    assert expired.value.code == ErrorCode.INVALID_PARAMS
    assert fixture.stopped == 1


async def test_a_task_belongs_to_its_creator(fixture):
    """Another principal's task id is not found, exactly like an unknown one."""
    server = fixture.server
    async with server.running():

        async def answer(task_id: str, round_: InputRound) -> dict[str, Any]:
            return {"content": []}

        task = await server.tasks.create("alice", answer, InputRound({}, {}))
        assert (await server.tasks.find(task.id, "alice")).id == task.id
        for stranger in ("bob", None):
            with pytest.raises(MCPError) as foreign:
                await server.tasks.find(task.id, stranger)
            assert foreign.value.code == ErrorCode.INVALID_PARAMS
            assert foreign.value.data == {"taskId": task.id}


def test_task_support_must_be_a_known_value():
    async def handler(ctx, args):
        return "x"

    with pytest.raises(ValueError, match="task_support"):
        Server("s", "1").tool("t", task_support="sometimes")(handler)


async def test_the_readme_example_runs_as_a_task():
    """The core README's tasks example: a large report becomes a task the client polls to the end; a
    small one is an ordinary answer."""
    from tests.docs.readme import blocks

    readme = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"  # the core README links it
    (block,) = [b for b in blocks(readme) if "start_task" in b.text]
    namespace: dict[str, Any] = {}
    exec(compile(block.text, "README.md", "exec"), namespace)
    async with connect_in_memory(namespace["server"], protocol_version=MODERN) as client:
        small = await call(client, "build_report", arguments={"rows": 10})
        created = await call(client, "build_report", arguments={"rows": 20_000})
        done = await until(client, created["taskId"], "completed")
    assert small["resultType"] == "complete" and small["content"][0]["text"] == "report of 10 rows"
    assert created["resultType"] == "task"
    assert done["result"]["content"][0]["text"] == "report of 20000 rows"


async def test_one_caller_cannot_take_every_slot(fixture):
    """With two slots per owner, a third running task of one caller is refused while another caller
    still gets one; a finished task of the first caller makes room for it again."""
    server = fixture.server
    server.tasks.max_tasks_per_owner = 2
    release = anyio.Event()

    async def slow(task_id: str, round_: InputRound) -> dict[str, Any]:
        await release.wait()
        return {"content": []}

    async def quick(task_id: str, round_: InputRound) -> dict[str, Any]:
        return {"content": []}

    async with server.running():
        await server.tasks.create("alice", slow, InputRound({}, {}))
        done = await server.tasks.create("alice", quick, InputRound({}, {}))
        for _ in range(POLLS):
            if (await server.tasks.find(done.id, "alice")).status == "completed":
                break
            await anyio.sleep(POLL_SECONDS)
        await server.tasks.create("alice", slow, InputRound({}, {}))  # takes the finished task's slot
        with pytest.raises(RuntimeError, match="of this caller"):
            await server.tasks.create("alice", slow, InputRound({}, {}))
        assert (await server.tasks.create("bob", slow, InputRound({}, {}))).owner == "bob"
        with pytest.raises(MCPError):
            await server.tasks.find(done.id, "alice")  # dropped to make room
        release.set()
