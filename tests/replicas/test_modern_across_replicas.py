"""2026-07-28 across replicas: three real ``plainmcp-everything`` processes sharing a real Redis, behind a
real nginx (round-robin, no stickiness). A client sees one server: stateless calls, multi-round-trip
retries that land on another replica, and ``subscriptions/listen`` hearing changes made through every
replica."""

from __future__ import annotations

import re

import anyio
import httpx
import pytest

from tests.e2e.http_server import SSEReader, async_client, dumps, modern_body, modern_headers, open_stream
from tests.replicas.cluster import cluster

ELICIT = {"name": "test_elicitation", "arguments": {"message": "Who are you?"}}
ANSWER = {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}


@pytest.fixture(scope="module")
def nginx_cluster(redis_server, tmp_path_factory):
    with cluster(tmp_path_factory.mktemp("modern"), redis_url=redis_server.url, proxy="nginx") as running:
        yield running


def calls_served(base_url: str) -> int:
    """tools/call answered by one replica, from its own /metrics."""
    text = httpx.get(f"{base_url}/metrics", timeout=5, trust_env=False).text
    pattern = r'^mcp_call_total\{method="tools/call"[^}]*\} (\d+(?:\.\d+)?)$'
    return int(sum(float(value) for value in re.findall(pattern, text, re.MULTILINE)))


async def post(client: httpx.AsyncClient, url: str, body: dict) -> dict:
    response = await client.post(url, content=dumps(body), headers=modern_headers(body))
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.anyio
async def test_stateless_calls_spread_over_every_replica_and_all_succeed(nginx_cluster) -> None:
    before = [calls_served(r.base_url) for r in nginx_cluster.replicas]
    async with async_client() as client:
        for n in range(200):
            body = modern_body(n, "tools/call", {"name": "test_simple_text", "arguments": {}})
            reply = await post(client, nginx_cluster.url, body)
            assert reply["result"]["resultType"] == "complete", reply
    served = [calls_served(r.base_url) - b for r, b in zip(nginx_cluster.replicas, before, strict=True)]
    assert sum(served) == 200
    assert all(count > 0 for count in served), served  # no stickiness: every replica took its share


@pytest.mark.anyio
async def test_a_multi_round_retry_verifies_on_whichever_replica_it_lands(nginx_cluster) -> None:
    capable = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    async with async_client() as client:
        for n in range(6):
            first = await post(client, nginx_cluster.url, modern_body(f"a{n}", "tools/call", ELICIT, meta=capable))
            result = first["result"]
            assert result["resultType"] == "input_required"
            (key,) = result["inputRequests"]
            retry = {**ELICIT, "inputResponses": {key: ANSWER}, "requestState": result["requestState"]}
            second = await post(client, nginx_cluster.url, modern_body(f"b{n}", "tools/call", retry, meta=capable))
            assert second["result"]["resultType"] == "complete", second
            assert "ada@example.com" in second["result"]["content"][0]["text"]


@pytest.mark.anyio
async def test_a_tampered_request_state_is_refused_on_every_replica(nginx_cluster) -> None:
    capable = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
    async with async_client() as client:
        first = await post(client, nginx_cluster.url, modern_body("t0", "tools/call", ELICIT, meta=capable))
        state = first["result"]["requestState"]
        forged = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
        for n in range(3):  # round-robin: each replica in turn
            retry = {**ELICIT, "inputResponses": {"x": ANSWER}, "requestState": forged}
            body = modern_body(f"t{n + 1}", "tools/call", retry, meta=capable)
            response = await client.post(nginx_cluster.url, content=dumps(body), headers=modern_headers(body))
            assert response.json()["error"]["code"] == -32602


@pytest.mark.anyio
async def test_listen_hears_changes_made_through_every_replica(nginx_cluster) -> None:
    async with async_client() as client, async_client() as other:
        body = modern_body(
            "L", "subscriptions/listen", {"notifications": {"resourceSubscriptions": ["test://watched-resource"]}}
        )
        async with open_stream(
            client, "POST", nginx_cluster.url, content=dumps(body), headers=modern_headers(body)
        ) as listen:
            reader = SSEReader(listen)
            assert (await reader.next()).json()["method"] == "notifications/subscriptions/acknowledged"
            for n in range(6):  # six triggers: two through each replica, round-robin
                trigger = modern_body(f"u{n}", "tools/call", {"name": "test_trigger_resource_update", "arguments": {}})
                assert (await post(other, nginx_cluster.url, trigger))["result"]["resultType"] == "complete"
            heard = []
            with anyio.fail_after(10):
                while len(heard) < 6:
                    heard.append((await reader.next()).json())
            assert {m["method"] for m in heard} == {"notifications/resources/updated"}
            assert all(m["params"]["uri"] == "test://watched-resource" for m in heard)
            await reader.assert_quiet(0.5)  # each change once, not once per replica
