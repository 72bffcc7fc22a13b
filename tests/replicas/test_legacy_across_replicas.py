"""Legacy Streamable HTTP sessions (2025-03-26 .. 2025-11-25) across replicas, with no stickiness.

Three replicas of one server definition share one real Redis, each served by a real uvicorn server on
127.0.0.1 (tests/replicas/legacy_replicas.py); the test itself sends each request to a different
replica, the worst a round-robin balancer can do.
"""

from __future__ import annotations

import itertools
from typing import Any

import anyio
import pytest

from tests.e2e.http_server import (
    SSEReader,
    alegacy_session,
    async_client,
    call_body,
    dumps,
    initialize_body,
    legacy_headers,
    open_stream,
    rpc,
)
from tests.replicas.legacy_replicas import CANCELLED, WATCHED, replicas

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def three(redis_server) -> Any:
    redis_server.flush()
    with replicas(redis_server.url, 3) as apps:
        yield [app.url for app in apps]


def turns(urls: list[str]) -> Any:
    """The replicas in turn, for ever (round-robin)."""
    return itertools.cycle(urls)


async def post(client: Any, url: str, body: Any, session_id: str | None, **headers: str) -> Any:
    return await client.post(url, content=dumps(body), headers=legacy_headers(session_id, **headers))


async def test_a_session_made_on_one_replica_is_served_by_every_replica(three) -> None:
    a, b, c = three
    async with async_client() as client:
        session = await alegacy_session(client, a)  # initialize on A ...
        for index, url in zip(range(6), turns([b, c, a]), strict=False):  # ... then every replica in turn
            reply = await post(client, url, call_body(index + 1, "echo", {"text": f"n{index}"}), session)
            assert reply.status_code == 200, reply.text
            assert reply.json()["result"]["content"] == [{"type": "text", "text": f"n{index}"}]
            assert reply.headers["mcp-session-id"] == session


async def test_an_unknown_session_is_404_on_every_replica(three) -> None:
    async with async_client() as client:
        for url in three:
            for unknown in ("x" * 32, "not-a-session", "a" * 300):
                reply = await post(client, url, rpc(1, "tools/list"), unknown)
                assert reply.status_code == 404, reply.text


async def test_the_get_stream_on_one_replica_hears_a_change_made_through_another(three) -> None:
    a, b, c = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        assert (await post(client, b, rpc(1, "resources/subscribe", {"uri": WATCHED}), session)).status_code == 200
        get_headers = {k: v for k, v in legacy_headers(session).items() if k != "Content-Type"}
        async with open_stream(client, "GET", c, headers={**get_headers, "Accept": "text/event-stream"}) as response:
            assert response.status_code == 200
            events = SSEReader(response)
            assert (await events.next()).data == ""  # the priming event
            await anyio.sleep(0.3)  # the stream is being read on C
            assert (await post(client, a, call_body(2, "change"), session)).status_code == 200
            heard = (await events.next()).json()
            assert heard == {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": WATCHED}}
            await events.assert_quiet(1.0)  # once, though three replicas hold the session


async def test_a_stream_cut_on_one_replica_resumes_on_another(three) -> None:
    a, b, _ = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        async with open_stream(
            client, "POST", a, content=dumps(call_body(5, "cut")), headers=legacy_headers(session)
        ) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            first = await SSEReader(response).rest()
        assert first[0].data == ""
        assert first[1].json()["params"]["data"] == "before the cut"
        last_id = first[-1].id
        assert last_id is not None
        resume = {**legacy_headers(session), "Accept": "text/event-stream", "Last-Event-ID": last_id}
        async with open_stream(client, "GET", b, headers=resume) as response:
            assert response.status_code == 200
            rest = [event for event in await SSEReader(response).rest() if event.data]
        messages = [event.json() for event in rest]
        assert messages[0]["params"]["data"] == "after the cut"
        assert messages[-1] == {
            "jsonrpc": "2.0",
            "id": 5,
            "result": {"content": [{"type": "text", "text": "cut done"}]},
        }
        assert len(messages) == 2  # nothing twice, nothing lost


@pytest.mark.parametrize("wait", [0.0, 1.0], ids=["while-running", "after-the-answer"])
async def test_a_stream_the_client_dropped_on_one_replica_resumes_on_another(three, wait: float) -> None:
    a, b, _ = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        async with open_stream(
            client, "POST", a, content=dumps(call_body(6, "two_logs")), headers=legacy_headers(session)
        ) as response:
            events = SSEReader(response)
            assert (await events.next()).data == ""
            first = await events.next()
            assert first.json()["params"]["data"] == "one"
        await anyio.sleep(wait)  # the client has gone; the call goes on (and with 1 s, it has answered)
        resume = {**legacy_headers(session), "Accept": "text/event-stream", "Last-Event-ID": first.id}
        async with open_stream(client, "GET", b, headers=resume) as response:
            assert response.status_code == 200
            rest = [event.json() for event in await SSEReader(response).rest() if event.data]
        assert [message.get("params", {}).get("data") for message in rest] == ["two", None]
        assert rest[-1] == {
            "jsonrpc": "2.0",
            "id": 6,
            "result": {"content": [{"type": "text", "text": "logged twice"}]},
        }


async def test_an_unknown_last_event_id_is_404_on_another_replica(three) -> None:
    a, b, _ = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        resume = {**legacy_headers(session), "Accept": "text/event-stream", "Last-Event-ID": "abcdef12-3"}
        reply = await client.get(b, headers=resume)
        assert reply.status_code == 404
        assert reply.json()["error"]["message"] == "Unknown or expired Last-Event-ID"


async def test_an_elicitation_answered_through_another_replica_completes_the_call(three) -> None:
    a, b, c = three
    init = initialize_body(0)
    init["params"]["capabilities"] = {"elicitation": {}}
    async with async_client() as client:
        made = await client.post(a, content=dumps(init), headers=legacy_headers(version=None))
        session = made.headers["mcp-session-id"]
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert (await post(client, c, initialized, session)).status_code == 202
        async with open_stream(
            client, "POST", a, content=dumps(call_body(9, "ask")), headers=legacy_headers(session)
        ) as response:
            events = SSEReader(response)
            assert (await events.next()).data == ""
            question = (await events.next()).json()
            assert question["method"] == "elicitation/create"
            answer = {
                "jsonrpc": "2.0",
                "id": question["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
            assert (await post(client, b, answer, session)).status_code == 202  # lands on B
            result = (await events.next()).json()
        assert result == {"jsonrpc": "2.0", "id": 9, "result": {"content": [{"type": "text", "text": "accept: Ada"}]}}


async def test_a_cancellation_posted_to_another_replica_stops_the_work(three) -> None:
    a, b, _ = three
    async with async_client() as client:
        session = await alegacy_session(client, a)

        async def call_slowly() -> None:
            await post(client, a, call_body("slow-1", "slow"), session)

        async with anyio.create_task_group() as group:
            group.start_soon(call_slowly)
            await anyio.sleep(0.5)  # running on A
            cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow-1"}}
            assert (await post(client, b, cancel, session)).status_code == 202
            with anyio.fail_after(5):
                while "slow-1" not in CANCELLED:
                    await anyio.sleep(0.05)
            group.cancel_scope.cancel()  # no answer comes for a cancelled request: stop waiting


async def test_a_task_made_on_one_replica_is_polled_and_read_on_the_others(three) -> None:
    a, b, c = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        call = call_body(1, "brew")
        call["params"]["task"] = {"ttl": 60000}
        made = (await post(client, a, call, session)).json()["result"]["task"]
        polled = (await post(client, b, rpc(2, "tasks/get", {"taskId": made["taskId"]}), session)).json()
        assert polled["result"]["taskId"] == made["taskId"]
        result = (await post(client, c, rpc(3, "tasks/result", {"taskId": made["taskId"]}), session)).json()
        assert result["result"]["content"] == [{"type": "text", "text": "brewed"}]
        listed = (await post(client, b, rpc(4, "tasks/list"), session)).json()["result"]["tasks"]
        assert [task["taskId"] for task in listed] == [made["taskId"]]
        other = await alegacy_session(client, c)  # another session sees none of them
        assert (await post(client, b, rpc(5, "tasks/list"), other)).json()["result"]["tasks"] == []


async def test_a_log_level_set_on_one_replica_holds_on_another(three) -> None:
    a, b, c = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        chatty = await post(client, c, call_body(1, "chatty"), session)
        assert chatty.headers["content-type"].startswith("text/event-stream")  # the info log, then the answer
        assert (await post(client, b, rpc(2, "logging/setLevel", {"level": "error"}), session)).status_code == 200
        for index, url in enumerate((c, a, b), start=3):  # C held a copy before the change
            quiet = await post(client, url, call_body(index, "chatty"), session)
            assert quiet.headers["content-type"] == "application/json"  # the log was filtered out
            assert quiet.json()["result"]["content"] == [{"type": "text", "text": "said it"}]


async def test_delete_on_one_replica_ends_the_session_on_every_replica(three) -> None:
    a, b, c = three
    async with async_client() as client:
        session = await alegacy_session(client, a)
        assert (await post(client, c, rpc(1, "tools/list"), session)).status_code == 200  # C holds a copy
        assert (await client.delete(b, headers=legacy_headers(session))).status_code == 204
        for url in (a, c, b):
            assert (await post(client, url, rpc(2, "tools/list"), session)).status_code == 404
        assert (
            await client.get(c, headers={**legacy_headers(session), "Accept": "text/event-stream"})
        ).status_code == 404


async def test_max_sessions_counts_the_sessions_of_every_replica(redis_url) -> None:
    with replicas(redis_url, 2, max_sessions=2) as apps:
        a, b = (app.url for app in apps)
        async with async_client() as client:
            await alegacy_session(client, a)
            second = await alegacy_session(client, b)
            refused = await client.post(b, content=dumps(initialize_body(0)), headers=legacy_headers(version=None))
            assert refused.status_code == 503
            assert "Too many sessions" in refused.json()["error"]["message"]
            assert (await client.delete(a, headers=legacy_headers(second))).status_code == 204
            again = await client.post(a, content=dumps(initialize_body(0)), headers=legacy_headers(version=None))
            assert again.status_code == 200


async def test_an_idle_session_expires_on_every_replica(redis_url) -> None:
    with replicas(redis_url, 2, session_idle_seconds=1.0) as apps:
        a, b = (app.url for app in apps)
        async with async_client() as client:
            session = await alegacy_session(client, a)
            assert (await post(client, b, rpc(1, "ping"), session)).status_code == 200
            await anyio.sleep(1.6)
            for url in (a, b):
                assert (await post(client, url, rpc(2, "ping"), session)).status_code == 404
