"""The 2024-11-05 HTTP+SSE transport across replicas: the session lives where its ``GET /sse`` stream is,
and POSTs that reach any other replica are forwarded there (three replicas on one real Redis, real
uvicorn servers on 127.0.0.1, the test sending each POST to another replica)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from tests.e2e.http_server import SSEReader, async_client, call_body, dumps, initialize_body, open_stream, rpc
from tests.replicas.legacy_replicas import replicas

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def three(redis_server) -> Any:
    redis_server.flush()
    with replicas(redis_server.url, 3) as apps:
        yield [app.base_url for app in apps]


async def test_posts_to_every_replica_reach_the_stream_on_one(three) -> None:
    a, b, c = three
    async with async_client() as client:
        async with open_stream(client, "GET", f"{a}/sse", headers={"Accept": "text/event-stream"}) as response:
            events = SSEReader(response)
            endpoint = await events.next()
            assert endpoint.event == "endpoint"
            path = endpoint.data
            made = await client.post(f"{b}{path}", content=dumps(initialize_body(0, "2024-11-05")), headers=JSON)
            assert made.status_code == 202
            assert (await events.next()).json()["result"]["protocolVersion"] == "2024-11-05"
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await client.post(f"{c}{path}", content=dumps(initialized), headers=JSON)).status_code == 202
            for index, base in enumerate((c, a, b), start=1):
                reply = await client.post(
                    f"{base}{path}", content=dumps(call_body(index, "echo", {"text": base})), headers=JSON
                )
                assert reply.status_code == 202
                answer = (await events.next()).json()
                assert answer == {
                    "jsonrpc": "2.0",
                    "id": index,
                    "result": {"content": [{"type": "text", "text": base}]},
                }
        # The stream closed: the session is gone everywhere (once A has seen the disconnect).
        with anyio.fail_after(5):
            while (await client.post(f"{a}{path}", content=dumps(rpc(8, "ping")), headers=JSON)).status_code != 404:
                await anyio.sleep(0.05)
        for base in (a, b, c):
            gone = await client.post(f"{base}{path}", content=dumps(rpc(9, "ping")), headers=JSON)
            assert gone.status_code == 404


async def test_an_unknown_sse_session_is_404_on_every_replica(three) -> None:
    async with async_client() as client:
        for base in three:
            for query in ("session_id=" + "x" * 32, "session_id=nope", ""):
                reply = await client.post(f"{base}/messages?{query}", content=dumps(rpc(1, "ping")), headers=JSON)
                assert reply.status_code == 404


async def test_redis_lost_ends_sse_sessions_cleanly_and_new_ones_work_when_it_returns(tmp_path) -> None:
    from tests.e2e.http_server import StreamEnded
    from tests.redis_server import RedisServer

    redis = RedisServer(tmp_path)
    redis.start()
    try:
        with replicas(redis.url, 2) as apps:
            a, b = (app.base_url for app in apps)
            async with async_client() as client:
                async with open_stream(client, "GET", f"{a}/sse", headers={"Accept": "text/event-stream"}) as response:
                    events = SSEReader(response)
                    path = (await events.next()).data
                    redis.stop()
                    with pytest.raises(StreamEnded):  # the stream closes: no half-working session
                        await events.next(timeout=10)
                lost = await client.post(f"{b}{path}", content=dumps(rpc(1, "ping")), headers=JSON)
                assert lost.status_code == 503 and lost.json()["error"]["code"] == -32000
                redis.start()
                with anyio.fail_after(15):
                    while True:
                        async with open_stream(
                            client, "GET", f"{a}/sse", headers={"Accept": "text/event-stream"}
                        ) as response:
                            if response.status_code == 200:
                                events = SSEReader(response)
                                path = (await events.next()).data
                                made = await client.post(
                                    f"{b}{path}", content=dumps(initialize_body(0, "2024-11-05")), headers=JSON
                                )
                                assert made.status_code == 202
                                assert (await events.next()).json()["id"] == 0
                                break
                        await anyio.sleep(0.2)
    finally:
        redis.stop()
