"""Foreign clients across the load balancer (issue 25): the official Python SDK client (``mcp`` 2.3.0) and the
official TypeScript SDK client (``@modelcontextprotocol/client`` 2.4.0 with ``@modelcontextprotocol/ext-tasks``
0.2.2 for tasks), each in both eras, through a real nginx (round-robin, no stickiness) over three real
``plainmcp-everything`` processes sharing a real Redis.

Each does a whole session -- tools/list, several calls, a resource subscription hearing changes made through
other replicas, an elicitation its own callback answers, a task -- and the tests assert what the client got
back, then read each replica's /metrics to show the session's calls really were spread over the replicas.
(Issue 25 measured 0 of 15 legacy sessions completing through this proxy before state was shared.)
"""

from __future__ import annotations

import re
from typing import Any

import anyio
import httpx
import pytest

from tests.replicas import sdk_session
from tests.replicas.cluster import Cluster, cluster
from tests.replicas.ts_client import run_session
from tests.servers.everything.support import TOOLS

pytestmark = [pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning")]

SIMPLE_TEXT = "This is a simple text response for testing."
WATCHED = "test://watched-resource"
UPDATED = re.compile(r"Updated test://watched-resource to revision (\d+)")
ELICITED = 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
SCHEMA = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}


@pytest.fixture(scope="module")
def proxied(redis_server, tmp_path_factory):
    directory = tmp_path_factory.mktemp("foreign")
    with cluster(directory, redis_url=redis_server.url, extra_args=("--redis-prefix", "foreign:")) as running:
        yield running


def served(running: Cluster) -> list[dict[str, int]]:
    """Per replica: tools/call answered, by tool (from its own /metrics)."""
    pattern = re.compile(r"^mcp_call_total\{([^}]*)\} (\d+(?:\.\d+)?)$", re.MULTILINE)
    counts = []
    for replica in running.replicas:
        text = httpx.get(f"{replica.base_url}/metrics", timeout=5, trust_env=False).text
        tools: dict[str, int] = {}
        for labels, value in pattern.findall(text):
            fields = dict(re.findall(r'(\w+)="([^"]*)"', labels))
            if fields.get("method") == "tools/call":
                tools[fields["tool"]] = tools.get(fields["tool"], 0) + int(float(value))
        counts.append(tools)
    return counts


async def open_streams(running: Cluster) -> int:
    """The SSE streams open on all replicas (``mcp_active_streams``, every transport)."""
    pattern = re.compile(r"^mcp_active_streams\{[^}]*\} (\d+(?:\.\d+)?)$", re.MULTILINE)
    total = 0
    async with httpx.AsyncClient(timeout=5, trust_env=False) as client:
        for replica in running.replicas:
            text = (await client.get(f"{replica.base_url}/metrics")).text
            total += sum(int(float(value)) for value in pattern.findall(text))
    return total


def spread(before: list[dict[str, int]], after: list[dict[str, int]], tool: str) -> list[int]:
    return [a.get(tool, 0) - b.get(tool, 0) for b, a in zip(before, after, strict=True)]


def assert_session(report: dict[str, Any], version: str, before: list[dict[str, int]], running: Cluster) -> None:
    """What every session got, in either era and from either SDK."""
    assert report["protocolVersion"] == version
    assert sorted(report["tools"]) == sorted(TOOLS)
    assert report["calls"] == [SIMPLE_TEXT] * 5
    # (Each replica numbers the fixture's revisions itself, so only the form is checked.)
    assert all(UPDATED.fullmatch(text) for text in report["triggers"]) and len(report["triggers"]) == 3
    assert report["elicitation"] == ELICITED
    assert [e["message"] for e in report["elicited"]] == ["Who are you?"]
    assert report["elicited"][0]["schema"] == SCHEMA
    after = served(running)
    # Round-robin, no stickiness: the session's calls and its triggers were answered by several replicas.
    simple = spread(before, after, "test_simple_text")
    assert sum(simple) == 5 and sum(1 for n in simple if n) >= 2, simple
    triggers = spread(before, after, "test_trigger_resource_update")
    assert sum(triggers) == 3 and sum(1 for n in triggers if n) >= 2, triggers


def assert_heard(report: dict[str, Any], running: Cluster) -> None:
    """Checked last, so that a failure here says only this: each of the three changes (made one after the
    other through the proxy, so on different replicas) reached the subscriber once. A failure shows the
    replicas' logs (the access lines say which replica served what)."""
    assert report["updates"] == [WATCHED] * 3, (
        f"heard {len(report['updates'])} of 3 updates: {report['updates']}\n{running.logs()[-6000:]}"
    )


@pytest.mark.anyio
async def test_python_sdk_legacy_session_across_replicas(proxied) -> None:
    before = served(proxied)
    report = await sdk_session.legacy_session(proxied.url, streams_open=lambda: open_streams(proxied))
    assert_session(report, "2025-11-25", before, proxied)
    assert report["greeting"] == "Hello, SDK!"
    assert report["subscribed"] == {}
    task = report["task"]
    assert task["created"] == "working" and task["statuses"][-1] == "completed", task
    assert task["text"] == "Computed sdk in 0.3 s"
    assert_heard(report, proxied)


@pytest.mark.anyio
async def test_python_sdk_modern_session_across_replicas(proxied) -> None:
    before = served(proxied)
    report = await sdk_session.modern_session(proxied.url)
    assert_session(report, "2026-07-28", before, proxied)
    assert report["honored"] == [WATCHED]
    assert report["events"] == 3  # and nothing after the third
    task = report["task"]
    assert task["created"] == ["working"] and task["statuses"][-1] == "completed", task
    assert task["text"] == "Computed sdk in 0.3 s"
    assert_heard(report, proxied)
    # The elicitation went as input_required rounds: the retry verified on whichever replica it reached.
    assert sum(spread(before, served(proxied), "test_elicitation")) == 2


@pytest.mark.anyio
async def test_ts_sdk_legacy_session_across_replicas(proxied) -> None:
    before = served(proxied)
    report = await anyio.to_thread.run_sync(run_session, "legacy", proxied.url)
    assert report["era"] == "legacy" and report["server"] == "plainmcp-everything"
    assert report["sessionId"]
    assert_session(report, "2025-11-25", before, proxied)
    assert report["greeting"] == "Hello, TS!"
    assert report["subscribed"] == {}
    task = report["task"]
    assert task.get("error") is None, task
    assert (task["kind"], task["outcome"], task["text"]) == ("task", "completed", "Computed ts in 0.3 s"), task
    assert task["taskId"]
    assert_heard(report, proxied)


@pytest.mark.anyio
async def test_ts_sdk_modern_session_across_replicas(proxied) -> None:
    before = served(proxied)
    report = await anyio.to_thread.run_sync(run_session, "modern", proxied.url)
    assert report["era"] == "modern" and report["server"] == "plainmcp-everything"
    assert report["sessionId"] is None  # 2026-07-28: no session
    assert_session(report, "2026-07-28", before, proxied)
    assert report["honored"] == {"resourceSubscriptions": [WATCHED]}
    assert_heard(report, proxied)
    assert sum(spread(before, served(proxied), "test_elicitation")) == 2
    task = report["task"]
    assert task.get("error") is None, task
    assert (task["kind"], task["outcome"], task["text"]) == ("task", "completed", "Computed ts in 0.3 s"), task
    assert report["rawStatuses"] and set(report["rawStatuses"]) == {200}
