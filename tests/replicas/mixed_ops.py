"""The mixed operations of the issue-25 load tests, spoken on the wire through a proxy, each checked.

One *operation* is what one client does for one purpose; it makes one or more HTTP requests (*calls*, each
counted in :class:`Tally`), and it succeeds only when every answer is the expected one:

- 2026-07-28: a tool call; a multi-round-trip call (``input_required``, then the retry carrying the answer
  and the sealed ``requestState``, which lands on another replica); ``subscriptions/listen`` hearing a change
  triggered by a second client (so through another replica); a task created, polled with ``tasks/get``
  (``Mcp-Name`` = taskId) until completed and its result read;
- legacy (2025-11-25): each operation is its own session (initialize, initialized, ..., DELETE), whose
  requests the proxy spreads over the replicas: calls; an elicitation whose answer is a POST of its own;
  SSE resumption (``test_reconnection`` ends its stream after the priming event; the GET with
  ``Last-Event-ID`` picks the result up); a subscription heard on the session's GET stream; a 2025-11-25
  task (``task`` field, ``tasks/get``, ``tasks/result``).

Every wait is bounded. A failed operation raises :class:`OperationFailed` saying which step got what.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx

from tests.e2e.http_server import (
    LATEST_LEGACY,
    SSEReader,
    StreamEnded,
    call_body,
    dumps,
    legacy_headers,
    modern_body,
    modern_headers,
    open_stream,
    rpc,
)

SIMPLE = {"name": "test_simple_text", "arguments": {}}
SIMPLE_TEXT = "This is a simple text response for testing."
WATCHED = "test://watched-resource"
TRIGGER = {"name": "test_trigger_resource_update", "arguments": {}}
ELICIT = {"name": "test_elicitation", "arguments": {"message": "Who are you?"}}
ANSWER = {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}
ELICITED = 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
TASK_SECONDS = 0.05
TASK_TEXT = f"Computed result in {TASK_SECONDS} s"
RECONNECTED = "Reconnection test completed successfully."
ELICITATION = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
TASKS = {"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}}
#: Bound for one notification to arrive, and for a task to finish (a task whose replica died turns failed
#: within its lease, ~7 s).
HEAR_SECONDS = 5.0
TASK_DEADLINE = 15.0


class OperationFailed(Exception):
    """An operation got something else than the protocol promises."""


@dataclass
class Tally:
    """Calls (HTTP requests) made, and which of them timed out waiting for an answer."""

    calls: int = 0
    timeouts: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    bodies_500: list[str] = field(default_factory=list)

    def saw(self, response: httpx.Response) -> None:
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        if response.status_code >= 500 and response.status_code != 503 and len(self.bodies_500) < 5:
            self.bodies_500.append(response.text[:300] if not response.is_stream_consumed else "")


class Wire:
    """One client's calls through ``url``, counted in ``tally``."""

    def __init__(self, client: httpx.AsyncClient, url: str, tally: Tally, hear: float = HEAR_SECONDS) -> None:
        self.client = client
        self.url = url
        self.tally = tally
        #: How long to wait for one event on a stream (a probe waits less, to measure a recovery finely).
        self.hear = hear

    async def post(self, body: dict[str, Any], headers: dict[str, str]) -> httpx.Response:
        self.tally.calls += 1
        try:
            response = await self.client.post(self.url, content=dumps(body), headers=headers)
        except httpx.TimeoutException:
            self.tally.timeouts += 1
            raise
        self.tally.saw(response)
        return response

    def stream(self, method: str, body: dict[str, Any] | None, headers: dict[str, str]) -> Any:
        self.tally.calls += 1
        content = dumps(body) if body is not None else None
        return open_stream(self.client, method, self.url, content=content, headers=headers)


def check(condition: bool, step: str, got: Any) -> None:
    if not condition:
        raise OperationFailed(f"{step}: {str(got)[:400]}")


def result_of(step: str, response: httpx.Response) -> dict[str, Any]:
    check(response.status_code == 200, step, f"HTTP {response.status_code} {response.text[:300]}")
    payload: dict[str, Any] = response.json()
    check("result" in payload, step, payload)
    result: dict[str, Any] = payload["result"]
    return result


# ------------------------------------------------------------------------------------------ 2026-07-28


async def modern_post(wire: Wire, body: dict[str, Any], **override: str) -> httpx.Response:
    return await wire.post(body, modern_headers(body, **override))


async def modern_tool(wire: Wire, other: Wire) -> None:
    result = result_of("tools/call", await modern_post(wire, modern_body(1, "tools/call", SIMPLE)))
    check(result.get("resultType") == "complete" and result["content"][0]["text"] == SIMPLE_TEXT, "tools/call", result)


async def modern_mrtr(wire: Wire, other: Wire) -> None:
    first = result_of("first round", await modern_post(wire, modern_body(1, "tools/call", ELICIT, meta=ELICITATION)))
    check(first.get("resultType") == "input_required", "first round", first)
    (key,) = first["inputRequests"]
    retry = {**ELICIT, "inputResponses": {key: ANSWER}, "requestState": first["requestState"]}
    second = result_of("retry", await modern_post(wire, modern_body(2, "tools/call", retry, meta=ELICITATION)))
    check(second.get("resultType") == "complete" and second["content"][0]["text"] == ELICITED, "retry", second)


async def modern_listen(wire: Wire, other: Wire) -> None:
    body = modern_body("L", "subscriptions/listen", {"notifications": {"resourceSubscriptions": [WATCHED]}})
    async with wire.stream("POST", body, modern_headers(body)) as response:
        check(response.status_code == 200, "listen", response.status_code)
        reader = SSEReader(response, timeout=wire.hear)
        ack = (await reader.next()).json()
        check(ack.get("method") == "notifications/subscriptions/acknowledged", "listen ack", ack)
        trigger = result_of("trigger", await modern_post(other, modern_body(2, "tools/call", TRIGGER)))
        check(trigger.get("resultType") == "complete", "trigger", trigger)
        heard = (await reader.next()).json()  # any update of the watched resource (others trigger it too)
        check(heard.get("method") == "notifications/resources/updated", "listen update", heard)
        check(heard["params"]["uri"] == WATCHED, "listen update", heard)


async def modern_task(wire: Wire, other: Wire) -> None:
    call = {"name": "slow_compute", "arguments": {"seconds": TASK_SECONDS}}
    created = result_of("task call", await modern_post(wire, modern_body(1, "tools/call", call, meta=TASKS)))
    check(created.get("resultType") == "task", "task call", created)
    task_id = created["taskId"]
    with anyio.fail_after(TASK_DEADLINE):
        while True:
            body = modern_body(2, "tasks/get", {"taskId": task_id}, meta=TASKS)
            detail = result_of("tasks/get", await modern_post(wire, body, Mcp_Name=task_id))
            if detail.get("status") != "working":
                break
            await anyio.sleep(0.05)
    check(detail.get("status") == "completed", "tasks/get", detail)
    check(detail["result"]["content"][0]["text"] == TASK_TEXT, "task result", detail)


MODERN: dict[str, Callable[[Wire, Wire], Awaitable[None]]] = {
    "tool": modern_tool,
    "mrtr": modern_mrtr,
    "listen": modern_listen,
    "task": modern_task,
}


# ------------------------------------------------------------------------------------------ legacy


class LegacySession:
    """One 2025-11-25 session, made by :meth:`open` and ended (DELETE) by :meth:`close`."""

    def __init__(self, wire: Wire) -> None:
        self.wire = wire
        self.id = ""
        self._ids = 0

    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def headers(self, **extra: str) -> dict[str, str]:
        return legacy_headers(self.id, LATEST_LEGACY, **extra)

    async def open(self) -> LegacySession:
        init = rpc(0, "initialize", {
            "protocolVersion": LATEST_LEGACY, "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "mixed-load", "version": "0"},
        })  # fmt: skip
        response = await self.wire.post(init, legacy_headers(version=None))
        result_of("initialize", response)
        self.id = response.headers["mcp-session-id"]
        note = await self.wire.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, self.headers())
        check(note.status_code == 202, "initialized", f"HTTP {note.status_code} {note.text[:200]}")
        return self

    async def close(self) -> None:
        self.wire.tally.calls += 1
        response = await self.wire.client.delete(self.wire.url, headers=self.headers())
        self.wire.tally.saw(response)
        check(response.status_code in (200, 202, 204), "DELETE", f"HTTP {response.status_code} {response.text[:200]}")

    async def call(self, body: dict[str, Any], answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None):
        """A request's response, from a JSON body or its SSE stream; server requests on the stream are
        answered by ``answer`` with a POST of their own (which the proxy sends to any replica)."""
        async with self.wire.stream("POST", body, self.headers()) as response:
            check(response.status_code == 200, body["method"], f"HTTP {response.status_code}")
            if not response.headers["content-type"].startswith("text/event-stream"):
                await response.aread()
                payload: dict[str, Any] = json.loads(response.content)
                return payload
            reader = SSEReader(response, timeout=self.wire.hear)
            while True:
                event = await reader.next()
                if not event.data:
                    continue
                message = event.json()
                if message.get("id") == body["id"] and "method" not in message:
                    return message
                if "method" in message and "id" in message:  # a server request
                    check(answer is not None, "server request", message)
                    assert answer is not None
                    reply = {"jsonrpc": "2.0", "id": message["id"], "result": answer(message)}
                    posted = await self.wire.post(reply, self.headers())
                    check(posted.status_code == 202, "answer", f"HTTP {posted.status_code} {posted.text[:200]}")

    async def tool(self, params: dict[str, Any], **more: Any) -> dict[str, Any]:
        message = await self.call(rpc(self.next_id(), "tools/call", params), **more)
        check("result" in message, f"tools/call {params['name']}", message)
        result: dict[str, Any] = message["result"]
        return result


async def legacy_op(wire: Wire, body: Callable[[LegacySession], Awaitable[None]]) -> None:
    session = await LegacySession(wire).open()
    await body(session)
    await session.close()


async def legacy_calls(wire: Wire, other: Wire) -> None:
    async def body(session: LegacySession) -> None:
        for _ in range(2):
            result = await session.tool(SIMPLE)
            check(result["content"][0]["text"] == SIMPLE_TEXT, "tools/call", result)

    await legacy_op(wire, body)


async def legacy_elicit(wire: Wire, other: Wire) -> None:
    async def body(session: LegacySession) -> None:
        def answer(request: dict[str, Any]) -> dict[str, Any]:
            check(request["method"] == "elicitation/create", "server request", request)
            check(request["params"]["message"] == "Who are you?", "elicitation", request)
            return ANSWER

        result = await session.tool(ELICIT, answer=answer)
        check(result["content"][0]["text"] == ELICITED, "elicitation result", result)

    await legacy_op(wire, body)


async def legacy_resume(wire: Wire, other: Wire) -> None:
    """The server ends the call's stream after its priming event; the result comes on the GET that
    resumes it with Last-Event-ID, wherever that lands."""

    async def body(session: LegacySession) -> None:
        call = call_body(session.next_id(), "test_reconnection")
        async with wire.stream("POST", call, session.headers()) as response:
            check(response.status_code == 200, "reconnection call", response.status_code)
            events = await SSEReader(response, timeout=wire.hear).rest()
        check(len(events) >= 1 and events[0].id is not None, "priming event", events)
        check(not any(e.data and "result" in e.json() for e in events), "stream cut", events)
        resume = {k: v for k, v in session.headers(**{"Last-Event-ID": events[-1].id or ""}).items()}
        resume["Accept"] = "text/event-stream"
        resume.pop("Content-Type", None)
        async with wire.stream("GET", None, resume) as response:
            check(response.status_code == 200, "resume GET", response.status_code)
            reader = SSEReader(response, timeout=wire.hear)
            message: dict[str, Any] = {}
            while message.get("id") != call["id"]:
                event = await reader.next()
                message = event.json() if event.data else {}
        check(message["result"]["content"][0]["text"].startswith(RECONNECTED), "resumed result", message)

    await legacy_op(wire, body)


async def legacy_subscribe(wire: Wire, other: Wire) -> None:
    async def body(session: LegacySession) -> None:
        subscribed = await session.call(rpc(session.next_id(), "resources/subscribe", {"uri": WATCHED}))
        check(subscribed.get("result") == {}, "resources/subscribe", subscribed)
        get = {k: v for k, v in session.headers().items() if k != "Content-Type"}
        async with wire.stream("GET", None, {**get, "Accept": "text/event-stream"}) as response:
            check(response.status_code == 200, "GET stream", response.status_code)
            reader = SSEReader(response, timeout=wire.hear)
            check((await reader.next()).data == "", "GET priming", "")
            await session.tool(TRIGGER)
            heard: dict[str, Any] = {}
            while heard.get("method") != "notifications/resources/updated":
                event = await reader.next()
                heard = event.json() if event.data else {}
            check(heard["params"]["uri"] == WATCHED, "update", heard)

    await legacy_op(wire, body)


async def legacy_task(wire: Wire, other: Wire) -> None:
    async def body(session: LegacySession) -> None:
        call = {"name": "slow_compute", "arguments": {"seconds": TASK_SECONDS}, "task": {"ttl": 60_000}}
        created = await session.tool(call)
        check("task" in created, "task call", created)
        task_id = created["task"]["taskId"]
        with anyio.fail_after(TASK_DEADLINE):
            while True:
                got = await session.call(rpc(session.next_id(), "tasks/get", {"taskId": task_id}))
                check("result" in got, "tasks/get", got)
                if got["result"]["status"] != "working":
                    break
                await anyio.sleep(0.05)
        check(got["result"]["status"] == "completed", "tasks/get", got)
        result = await session.call(rpc(session.next_id(), "tasks/result", {"taskId": task_id}))
        check(result.get("result", {}).get("content", [{}])[0].get("text") == TASK_TEXT, "tasks/result", result)

    await legacy_op(wire, body)


LEGACY: dict[str, Callable[[Wire, Wire], Awaitable[None]]] = {
    "calls": legacy_calls,
    "elicit": legacy_elicit,
    "resume": legacy_resume,
    "subscribe": legacy_subscribe,
    "task": legacy_task,
}

OPERATIONS = {"modern": MODERN, "legacy": LEGACY}
#: The errors an operation may end with when a replica or Redis goes away (anything else is a test bug).
FAILURES = (OperationFailed, httpx.HTTPError, StreamEnded, TimeoutError, KeyError, ValueError)
