"""The legacy session directory: the same behaviour in memory and on a real Redis, and Redis lost.

One replica over HTTP, on in-memory state or on Redis, must behave the same for what a client sees
(DELETE then 404, resumption with ``Last-Event-ID``, ``max_sessions``); the directory itself is
tested directly against both implementations. Redis stopped while serving gives each legacy request
a 503 with a JSON-RPC error (-32000) within a bounded time, and service comes back when Redis does.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from plainmcp.http.app import MCPApp
from plainmcp.state.redis_state import RedisState
from plainmcp.state.sessions import MemorySessions, RedisSessions, SessionRecord

from tests.e2e.http_server import (
    SSEReader,
    ThreadedApp,
    alegacy_session,
    app_in_thread,
    async_client,
    call_body,
    dumps,
    initialize_body,
    legacy_headers,
    open_stream,
    rpc,
)
from tests.redis_server import RedisServer
from tests.replicas.legacy_replicas import build_server, replicas

pytestmark = pytest.mark.anyio


@contextlib.contextmanager
def one_replica(kind: str, redis_url: str | None, **options: Any) -> Iterator[ThreadedApp]:
    if kind == "memory":
        with app_in_thread(MCPApp(build_server(), legacy_sse=False, **options)) as app:
            yield app
    else:
        assert redis_url is not None
        with replicas(redis_url, 1, **options) as (app,):
            yield app


@pytest.fixture(params=["memory", "redis"])
def kind(request) -> tuple[str, str | None]:
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    return request.param, url


async def test_delete_ends_the_session_in_both_stores(kind) -> None:
    with one_replica(*kind) as app:
        async with async_client() as client:
            session = await alegacy_session(client, app.url)
            assert (await client.delete(app.url, headers=legacy_headers(session))).status_code == 204
            reply = await client.post(app.url, content=dumps(rpc(1, "ping")), headers=legacy_headers(session))
            assert reply.status_code == 404


async def test_a_cut_stream_resumes_in_both_stores(kind) -> None:
    with one_replica(*kind) as app:
        async with async_client() as client:
            session = await alegacy_session(client, app.url)
            async with open_stream(
                client, "POST", app.url, content=dumps(call_body(3, "cut")), headers=legacy_headers(session)
            ) as response:
                first = await SSEReader(response).rest()
            resume = {**legacy_headers(session), "Accept": "text/event-stream", "Last-Event-ID": first[-1].id}
            async with open_stream(client, "GET", app.url, headers=resume) as response:
                rest = [event.json() for event in await SSEReader(response).rest() if event.data]
            assert [message.get("id") for message in rest] == [None, 3]
            assert rest[0]["params"]["data"] == "after the cut"


async def test_max_sessions_in_both_stores(kind) -> None:
    with one_replica(*kind, max_sessions=1) as app:
        async with async_client() as client:
            await alegacy_session(client, app.url)
            refused = await client.post(
                app.url, content=dumps(initialize_body(0)), headers=legacy_headers(version=None)
            )
            assert refused.status_code == 503


@pytest.fixture(params=["memory", "redis"])
def directory(request) -> Any:
    if request.param == "memory":
        return contextlib.nullcontext(MemorySessions(0.5))
    state = RedisState(request.getfixturevalue("redis_url"), prefix="dir:")

    @contextlib.asynccontextmanager
    async def opened():
        async with state.opened():
            yield RedisSessions(state, 0.5)

    return opened()


async def test_the_directory_keeps_touches_counts_and_ends_records(directory) -> None:
    async with directory as sessions:
        one = SessionRecord("a" * 32, "alice", "00ff")
        assert await sessions.create(one, max_sessions=2)
        assert await sessions.create(SessionRecord("b" * 32, None, "01"), max_sessions=2)
        assert not await sessions.create(SessionRecord("c" * 32, None, "02"), max_sessions=2)
        one.version, one.subscriptions = "2025-06-18", ["file:///x"]
        await sessions.save(one)
        found = await sessions.touch("a" * 32)
        assert found is not None and (found.owner, found.version, found.subscriptions) == (
            "alice",
            "2025-06-18",
            ["file:///x"],
        )
        await sessions.end("b" * 32)
        assert await sessions.touch("b" * 32) is None
        await sessions.save(SessionRecord("b" * 32, None, "01"))  # saving never brings an ended session back
        assert await sessions.touch("b" * 32) is None
        for _ in range(3):  # touched, it outlives its idle time
            await anyio.sleep(0.3)
            assert await sessions.touch("a" * 32) is not None
        await anyio.sleep(0.7)
        assert await sessions.touch("a" * 32) is None  # untouched, it expires
        assert await sessions.create(SessionRecord("d" * 32, None, "03"), max_sessions=1)  # and is not counted


async def test_redis_lost_is_a_503_json_rpc_error_then_service_recovers(tmp_path) -> None:
    redis = RedisServer(tmp_path)
    redis.start()
    try:
        with replicas(redis.url, 2) as apps:
            a, b = (app.url for app in apps)
            async with async_client() as client:
                session = await alegacy_session(client, a)
                redis.stop()
                started = time.monotonic()
                for url in (a, b):
                    lost = await client.post(url, content=dumps(rpc(7, "ping")), headers=legacy_headers(session))
                    assert lost.status_code == 503
                    assert lost.json() == {
                        "jsonrpc": "2.0",
                        "id": 7,
                        "error": {
                            "code": -32000,
                            "message": "The server's shared state store is unreachable (session directory); try again shortly",
                            "data": {"reason": "shared_state_unavailable"},
                        },
                    }
                    fresh = await client.post(
                        url, content=dumps(initialize_body(0)), headers=legacy_headers(version=None)
                    )
                    assert fresh.status_code == 503 and fresh.json()["error"]["code"] == -32000
                assert time.monotonic() - started < 10  # bounded: never a hang
                redis.start()  # empty again: sessions made before are gone, new ones work everywhere
                with anyio.fail_after(10):
                    while True:
                        made = await client.post(
                            a, content=dumps(initialize_body(0)), headers=legacy_headers(version=None)
                        )
                        if made.status_code == 200:
                            break
                        await anyio.sleep(0.1)
                again = made.headers["mcp-session-id"]
                reply = await client.post(b, content=dumps(rpc(8, "ping")), headers=legacy_headers(again))
                assert reply.status_code == 200 and reply.json()["result"] == {}
                gone = await client.post(b, content=dumps(rpc(9, "ping")), headers=legacy_headers(session))
                assert gone.status_code == 404
    finally:
        redis.stop()


async def test_a_session_in_use_past_its_idle_time_still_counts_in_both_stores(kind) -> None:
    with one_replica(*kind, max_sessions=1, session_idle_seconds=1.0) as app:
        async with async_client() as client:
            session = await alegacy_session(client, app.url)
            for index in range(5):  # 2 s of use: twice the idle time
                await anyio.sleep(0.4)
                reply = await client.post(app.url, content=dumps(rpc(index, "ping")), headers=legacy_headers(session))
                assert reply.status_code == 200
            refused = await client.post(
                app.url, content=dumps(initialize_body(0)), headers=legacy_headers(version=None)
            )
            assert refused.status_code == 503
