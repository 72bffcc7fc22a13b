"""Tasks across replicas: two ``Server`` objects built by one factory (two replicas), each sharing one real
Redis (``server.share(RedisState(...))``), each served to its own in-memory client. A task created through
one is read, fed, cancelled and reported through the other; the work itself runs on the replica that
created it. A replica that stops leaves its tasks ``failed``, not working forever; Redis lost is a clear
-32000, and service comes back with Redis."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest
from plainmcp import Client, ErrorCode, MCPError, inputs
from plainmcp.inputs import InputRound
from plainmcp.state.redis_state import RedisState
from plainmcp.testing import connect_in_memory

from tests.core.test_tasks import CONFIRM, MODERN, POLL_SECONDS, POLLS, Fixture, call, rpc, until

pytestmark = pytest.mark.anyio

PREFIX = "replicas-tasks:"
#: Long enough that only a fan-out message (not the runner's periodic re-read) can act within a test's polls.
NO_REREAD_SECONDS = 60.0


def replica(url: str, renew_seconds: float | None = None) -> Fixture:
    """One replica: the test server, sharing state in Redis under one prefix with its siblings."""
    made = Fixture()
    made.server.share(RedisState(url, prefix=PREFIX))
    if renew_seconds is not None:
        made.server.tasks.renew_seconds = renew_seconds
    return made


@asynccontextmanager
async def served(fixture: Fixture) -> AsyncIterator[Client]:
    async with connect_in_memory(fixture.server, protocol_version=MODERN) as client:
        yield client


async def eventually(check: Any) -> None:
    for _ in range(POLLS):
        if check():
            return
        await anyio.sleep(POLL_SECONDS)
    raise AssertionError("the condition did not hold in time")


async def test_a_task_created_on_one_replica_is_found_at_once_on_another(redis_url):
    a, b = replica(redis_url), replica(redis_url)
    async with served(a) as on_a, served(b) as on_b:
        created = await call(on_a, "work")
        seen = await rpc(on_b, "tasks/get", {"taskId": created["taskId"]})  # no wait: created durably first
        assert seen["status"] == "working" and seen["createdAt"] == created["createdAt"]
        a.release.set()
        done = await until(on_b, created["taskId"], "completed")
    assert done["result"]["content"] == [{"type": "text", "text": "worked"}]
    assert (a.runs, b.runs) == (2, 0)  # the work ran where it was created


async def test_cancel_on_another_replica_stops_the_work_where_it_runs(redis_url):
    a, b = replica(redis_url, renew_seconds=NO_REREAD_SECONDS), replica(redis_url)
    async with served(a) as on_a, served(b) as on_b:
        task_id = (await call(on_a, "work"))["taskId"]
        await anyio.sleep(0.2)  # A's subscription to the fan-out is made when the server starts
        ack = await rpc(on_b, "tasks/cancel", {"taskId": task_id})
        await eventually(lambda: a.stopped == 1)
        seen_on_a = await rpc(on_a, "tasks/get", {"taskId": task_id})
    assert ack["resultType"] == "complete"
    assert seen_on_a["status"] == "cancelled" and "result" not in seen_on_a
    assert b.stopped == 0


async def test_answers_given_to_another_replica_resume_the_parked_task(redis_url):
    a, b = replica(redis_url, renew_seconds=NO_REREAD_SECONDS), replica(redis_url)
    async with served(a) as on_a, served(b) as on_b:
        task_id = (await call(on_a, "ask_two"))["taskId"]
        parked = await until(on_b, task_id, "input_required")
        assert set(parked["inputRequests"]) == {"a", "b"}
        await anyio.sleep(0.2)
        answers = {
            "a": {"action": "accept", "content": {"ok": True}},
            "b": {"action": "accept", "content": {"ok": False}},
        }
        await rpc(on_b, "tasks/update", {"taskId": task_id, "inputResponses": answers})
        done = await until(on_a, task_id, "completed")
    assert done["result"]["content"][0]["text"] == "a=True b=False"


async def test_another_principal_is_refused_on_every_replica(redis_url):
    a, b = replica(redis_url), replica(redis_url)

    async def quick(task_id: str, round_: InputRound) -> dict[str, Any]:
        return {"content": []}

    async with a.server.running(), b.server.running():
        task = await a.server.tasks.create("alice", quick, InputRound({}, {}))
        assert (await b.server.tasks.find(task.id, "alice")).id == task.id
        for stranger in ("bob", None):
            with pytest.raises(MCPError) as foreign:
                await b.server.tasks.find(task.id, stranger)
            with pytest.raises(MCPError) as unknown:
                await b.server.tasks.find("no-such-task", stranger)
            assert foreign.value.code == unknown.value.code == ErrorCode.INVALID_PARAMS
            assert foreign.value.message == unknown.value.message


async def test_the_bounds_are_shared_by_every_replica(redis_url):
    """Two slots per caller, counted across replicas: A's two running tasks fill the caller's quota on B."""
    a, b = replica(redis_url), replica(redis_url)
    for made in (a, b):
        made.server.tasks.max_tasks_per_owner = 2
    release = anyio.Event()

    async def slow(task_id: str, round_: InputRound) -> dict[str, Any]:
        await release.wait()
        return {"content": []}

    async with a.server.running(), b.server.running():
        await a.server.tasks.create("alice", slow, InputRound({}, {}))
        await a.server.tasks.create("alice", slow, InputRound({}, {}))
        with pytest.raises(RuntimeError, match="of this caller"):
            await b.server.tasks.create("alice", slow, InputRound({}, {}))
        await b.server.tasks.create("bob", slow, InputRound({}, {}))
        assert await b.server.tasks.count() == 3
        release.set()


async def test_a_task_whose_replica_stopped_becomes_failed(redis_url):
    """A stops serving abruptly (its task group cancelled, as when its process ends): its lease is not
    renewed, and B, reading the task, marks it failed with a clear message."""
    a, b = replica(redis_url), replica(redis_url)
    a.server.tasks.lease_seconds, a.server.tasks.renew_seconds = 1.0, 0.25
    async with served(b) as on_b:
        async with served(a) as on_a:
            task_id = (await call(on_a, "work"))["taskId"]
            await anyio.sleep(0.6)  # past a renewal: the lease outlives its first term while A runs
            assert (await rpc(on_b, "tasks/get", {"taskId": task_id}))["status"] == "working"
        assert a.stopped == 1
        with anyio.fail_after(5):
            while (detail := await rpc(on_b, "tasks/get", {"taskId": task_id}))["status"] == "working":
                await anyio.sleep(0.05)
    assert detail["status"] == "failed"
    assert (
        detail["error"]["code"] == -32603 and "server instance running this task stopped" in detail["error"]["message"]
    )


async def test_redis_lost_is_a_clear_error_and_tasks_work_again_when_it_returns(redis_url, redis_server):
    a, b = replica(redis_url), replica(redis_url)
    async with served(a) as on_a, served(b) as on_b:
        task_id = (await call(on_a, "work"))["taskId"]
        redis_server.stop()
        try:
            for client, method, params in (
                (on_b, "tasks/get", {"taskId": task_id}),
                (on_b, "tasks/cancel", {"taskId": task_id}),
                (on_a, "tools/call", {"name": "work", "arguments": {}}),
            ):
                with anyio.fail_after(10), pytest.raises(MCPError) as lost:
                    await rpc(client, method, params)
                assert lost.value.code == ErrorCode.SERVER_ERROR, (method, lost.value)
                assert "shared state store is unreachable" in lost.value.message
        finally:
            redis_server.start()
        with anyio.fail_after(10):
            while True:
                try:
                    created = await call(on_a, "work")
                    break
                except MCPError as error:
                    assert error.code == ErrorCode.SERVER_ERROR
                    await anyio.sleep(0.1)
        assert (await rpc(on_b, "tasks/get", {"taskId": created["taskId"]}))["status"] == "working"
        a.release.set()
        await until(on_b, created["taskId"], "completed")


async def test_a_task_that_cannot_reach_redis_is_abandoned_and_the_replica_keeps_serving(redis_url, redis_server):
    """A task that asks for input while Redis is away cannot park: it is abandoned (its lease lapses), and
    the replica, which must not end with it, serves the next calls; once Redis is back, new tasks run."""
    a = replica(redis_url)
    gate = anyio.Event()

    @a.server.tool(task_support="optional")
    async def late_question(ctx, args):
        await ctx.start_task()
        await gate.wait()
        return str(await ctx.ask({"q": inputs.elicitation("Q?", CONFIRM)}))

    async with served(a) as on_a:
        await call(on_a, "late_question")
        redis_server.stop()
        try:
            gate.set()
            await anyio.sleep(0.5)  # the park fails at once: the connection is refused
            with anyio.fail_after(5):
                discovered = await rpc(on_a, "server/discover", {})
        finally:
            redis_server.start()
        assert discovered["resultType"] == "complete"
        with anyio.fail_after(10):
            while True:
                try:
                    created = await call(on_a, "work")
                    break
                except MCPError:
                    await anyio.sleep(0.1)
        a.release.set()
        await until(on_a, created["taskId"], "completed")


async def test_a_hung_redis_is_a_clear_error_within_the_command_timeout_not_a_hang(redis_url, redis_server):
    """Redis frozen (SIGSTOP: connections stay open, nothing answers): task methods answer -32000 within the
    state's command timeout (2 s), and work again once it thaws."""
    a = replica(redis_url)
    async with served(a) as on_a:
        task_id = (await call(on_a, "work"))["taskId"]
        redis_server.process.send_signal(signal.SIGSTOP)
        try:
            with anyio.fail_after(6), pytest.raises(MCPError) as hung:
                await rpc(on_a, "tasks/get", {"taskId": task_id})
        finally:
            redis_server.process.send_signal(signal.SIGCONT)
        assert hung.value.code == ErrorCode.SERVER_ERROR
        with anyio.fail_after(10):
            while True:
                try:
                    detail = await rpc(on_a, "tasks/get", {"taskId": task_id})
                    break
                except MCPError:
                    await anyio.sleep(0.1)
        assert detail["status"] == "working"


async def test_another_replica_waits_for_a_tasks_end_and_for_its_ttl(redis_url):
    """What legacy ``tasks/result`` waits on, asked on B for a task running on A: the final record once A
    finishes it; for a task that outlives its ttl, an error saying it expired (never a wait without end)."""
    a, b = replica(redis_url), replica(redis_url)
    release = anyio.Event()

    async def slow(task_id: str, round_: InputRound) -> dict[str, Any]:
        await release.wait()
        return {"content": [{"type": "text", "text": "done"}]}

    async with a.server.running(), b.server.running():
        finishing = await a.server.tasks.create("session:s", slow, InputRound({}, {}))
        expiring = await a.server.tasks.create("session:s", slow, InputRound({}, {}), ttl_ms=400)
        with anyio.fail_after(5), pytest.raises(MCPError) as expired:
            await b.server.tasks.finished(expiring, "session:s")
        release.set()
        with anyio.fail_after(5):
            final = await b.server.tasks.finished(finishing, "session:s")
    assert "expired" in expired.value.message and expired.value.code == ErrorCode.INVALID_PARAMS
    assert final.status == "completed" and final.result == {"content": [{"type": "text", "text": "done"}]}
