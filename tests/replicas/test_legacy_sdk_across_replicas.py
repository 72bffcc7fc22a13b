"""The official Python SDK client (``mcp``, legacy mode) through a real nginx (round-robin, no stickiness)
over three ``plainmcp-everything`` processes sharing a real Redis: whole legacy sessions complete.

Each session is several HTTP requests (initialize, initialized, the GET stream, calls, an elicitation
whose answer is a POST of its own, DELETE), spread by nginx over the three replicas.
"""

from __future__ import annotations

import re

import anyio
import httpx
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.client.streamable_http import streamable_http_client

from tests.replicas.cluster import cluster

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.interop,
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

SESSIONS = 5


@pytest.fixture(scope="module")
def nginx_cluster(redis_server, tmp_path_factory):
    with cluster(tmp_path_factory.mktemp("legacy"), redis_url=redis_server.url, proxy="nginx") as running:
        yield running


def legacy_calls(base_url: str) -> int:
    """Legacy requests one replica answered, from its own /metrics."""
    text = httpx.get(f"{base_url}/metrics", timeout=5, trust_env=False).text
    pattern = r'^mcp_call_total\{method="(?:tools/call|tools/list|initialize)"[^}]*\} (\d+(?:\.\d+)?)$'
    return int(sum(float(value) for value in re.findall(pattern, text, re.MULTILINE)))


async def elicitation(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


def only_text(result: types.CallToolResult) -> str:
    (block,) = result.content
    assert isinstance(block, types.TextContent), block
    return block.text


async def test_sdk_legacy_sessions_complete_through_round_robin(nginx_cluster) -> None:
    before = [legacy_calls(replica.base_url) for replica in nginx_cluster.replicas]
    for _ in range(SESSIONS):
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), trust_env=False) as http:
            transport = streamable_http_client(nginx_cluster.url, http_client=http)
            with anyio.fail_after(60):
                async with Client(transport, mode="legacy", elicitation_callback=elicitation) as client:
                    tools = await client.list_tools()
                    assert "test_simple_text" in {tool.name for tool in tools.tools}
                    for _ in range(3):
                        result = await client.call_tool("test_simple_text", {})
                        assert result.is_error is False and only_text(result)
                    asked = await client.call_tool("test_elicitation", {"message": "Who are you?"})
                    assert only_text(asked) == (
                        'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
                    )
    served = [legacy_calls(r.base_url) - b for r, b in zip(nginx_cluster.replicas, before, strict=True)]
    assert sum(served) == SESSIONS * 6  # initialize, tools/list, 3 + 1 calls per session
    assert all(count > 0 for count in served), served  # every replica took part


async def test_sessions_outlive_a_replica_killed_with_sigkill(redis_url, tmp_path) -> None:
    """A session's record is in Redis, not in a replica: SIGKILL one, the session goes on through the others."""
    with cluster(tmp_path, redis_url=redis_url, proxy="nginx") as running:
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(30.0), trust_env=False) as http:
            transport = streamable_http_client(running.url, http_client=http)
            with anyio.fail_after(60):
                async with Client(transport, mode="legacy", elicitation_callback=elicitation) as client:
                    for _ in range(3):  # every replica has served the session once
                        assert only_text(await client.call_tool("test_simple_text", {}))
                    running.replicas[0].kill()
                    for _ in range(6):
                        result = await client.call_tool("test_simple_text", {})
                        assert result.is_error is False and only_text(result)
                    asked = await client.call_tool("test_elicitation", {"message": "Still there?"})
                    assert "action=accept" in only_text(asked)
