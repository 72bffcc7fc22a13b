"""The 2026-07-28 era: the per-request envelope, discover, results, errors, input rounds, listen.

Requests are sent raw through the client's session where a test needs a malformed envelope, and
through the client's modern API elsewhere.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from plainmcp import Client, ErrorCode, MCPError, Server, inputs
from plainmcp.jsonrpc import Notification
from plainmcp.testing import connect_in_memory

from tests.fixtures.feature_server import build_server

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
SERVER_INFO = {
    "name": "feature-server",
    "version": "1.2.3",
    "title": "Feature server",
    "description": "One of everything",
    "websiteUrl": "https://example.invalid/feature-server",
}
# Every result but server/discover's names the server by its Implementation's required fields only.
CALL_SERVER_INFO = {"name": "feature-server", "version": "1.2.3"}


def envelope(capabilities: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": capabilities or {},
    }
    meta.update(extra)
    return {"_meta": meta}


@asynccontextmanager
async def modern_client(
    server: Server | None = None, **options: Any
) -> AsyncIterator[tuple[Client, list[Notification]]]:
    seen: list[Notification] = []
    async with connect_in_memory(
        server or build_server(), protocol_version=MODERN, on_notification=seen.append, **options
    ) as client:
        yield client, seen


async def raw(client: Client, method: str, params: dict[str, Any] | None) -> Any:
    return await client.session.request(method, params)


async def raw_error(client: Client, method: str, params: dict[str, Any] | None) -> MCPError:
    with pytest.raises(MCPError) as raised:
        await raw(client, method, params)
    return raised.value


# -------------------------------------------------------------------------------------- envelope


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"_meta": {}},
        {"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}},
        {"_meta": {"io.modelcontextprotocol/protocolVersion": MODERN}},
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": 20260728,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
        {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": [],
            }
        },
        envelope(**{"io.modelcontextprotocol/clientInfo": "me"}),
        envelope(**{"io.modelcontextprotocol/logLevel": "loud"}),
    ],
)
async def test_malformed_envelope_is_invalid_params(params: dict[str, Any]) -> None:
    async with modern_client() as (client, _):
        assert (await raw_error(client, "server/discover", params)).code == ErrorCode.INVALID_PARAMS


async def test_unsupported_version_names_supported_and_requested() -> None:
    async with modern_client() as (client, _):
        params = envelope()
        params["_meta"]["io.modelcontextprotocol/protocolVersion"] = "v999.0.0"
        error = await raw_error(client, "tools/list", params)
        discover = await client.discover()
    assert error.code == ErrorCode.UNSUPPORTED_PROTOCOL_VERSION == -32022
    assert error.data == {"supported": discover["supportedVersions"], "requested": "v999.0.0"}


async def test_client_info_is_optional() -> None:
    async with modern_client() as (client, _):
        assert (await raw(client, "server/discover", envelope()))["resultType"] == "complete"


async def test_discover_result_fields() -> None:
    async with modern_client() as (client, _):
        result = await raw(client, "server/discover", envelope())
    assert result == {
        "supportedVersions": ["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"],
        "capabilities": {
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": True},
            "resources": {"listChanged": True, "subscribe": True},
            "tools": {"listChanged": True},
        },
        "instructions": "Use echo to test.",
        "resultType": "complete",
        "ttlMs": 60000,
        "cacheScope": "private",
        "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
    }


@pytest.mark.parametrize(
    "method",
    ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe", "unknown/method"],
)
async def test_removed_methods_are_not_found(method: str) -> None:
    async with modern_client() as (client, _):
        params = envelope()
        params.update(
            {
                "uri": "test://static",
                "level": "info",
                "protocolVersion": MODERN,
                "capabilities": {},
                "clientInfo": {"name": "c", "version": "1"},
            }
        )
        assert (await raw_error(client, method, params)).code == ErrorCode.METHOD_NOT_FOUND


# --------------------------------------------------------------------------------------- results


async def test_every_result_is_stamped_and_lists_and_reads_carry_cache_hints() -> None:
    async with modern_client() as (client, _):
        cacheable = {
            "tools/list": await client.request("tools/list"),
            "prompts/list": await client.request("prompts/list"),
            "resources/list": await client.request("resources/list"),
            "resources/templates/list": await client.request("resources/templates/list"),
            "resources/read": await client.read_resource("test://static"),
        }
        others = {
            "tools/call": await client.call_tool("echo", {"text": "x"}),
            "prompts/get": await client.get_prompt("simple"),
            "completion/complete": await client.request(
                "completion/complete",
                {"ref": {"type": "ref/prompt", "name": "write"}, "argument": {"name": "topic", "value": "p"}},
            ),
        }
    for method, result in cacheable.items():
        assert result["resultType"] == "complete", method
        assert result["cacheScope"] == "private", method
        assert result["ttlMs"] == (0 if method == "resources/read" else 60000), method
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == CALL_SERVER_INFO, method
    for method, result in others.items():
        assert result["resultType"] == "complete" and "ttlMs" not in result and "cacheScope" not in result, method
        assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == CALL_SERVER_INFO, method


async def test_results_carry_name_and_version_and_discover_the_whole_server_info() -> None:
    async with modern_client() as (client, _):
        called = await client.call_tool("echo", {"text": "x"})
        discovered = await raw(client, "server/discover", envelope())
        meta = called["_meta"]
    assert meta == {"io.modelcontextprotocol/serverInfo": CALL_SERVER_INFO}
    assert discovered["_meta"] == {"io.modelcontextprotocol/serverInfo": SERVER_INFO}
    assert client.server_info == SERVER_INFO  # what the client learned of the server, from discover


async def test_every_page_of_a_list_has_the_same_cache_scope() -> None:
    async with modern_client(build_server(page_size=5)) as (client, _):
        first = await client.request("tools/list")
        second = await client.request("tools/list", {"cursor": first["nextCursor"]})
    assert first["cacheScope"] == second["cacheScope"] == "private"


async def test_tool_order_is_deterministic() -> None:
    async with modern_client() as (client, _):
        first = [t["name"] for t in await client.list_all_tools()]
        second = [t["name"] for t in await client.list_all_tools()]
    assert first == second and first[:3] == ["echo", "add", "broken_output"]


async def test_unknown_resource_is_invalid_params_with_uri() -> None:
    async with modern_client() as (client, _):
        for uri in ("test://nothing", "test://items/missing"):
            with pytest.raises(MCPError) as raised:
                await client.read_resource(uri)
            assert (raised.value.code, raised.value.data) == (-32602, {"uri": uri})


async def test_structured_content_may_be_any_json_in_the_modern_era_only() -> None:
    server = Server("s", "1")

    @server.tool(output_schema={"type": "array", "items": {"type": "integer"}})
    async def numbers(ctx: Any, args: Any) -> list[int]:
        return [1, 2, 3]

    async with modern_client(server) as (client, _):
        assert (await client.call_tool("numbers"))["structuredContent"] == [1, 2, 3]
    async with connect_in_memory(server) as legacy:
        result = await legacy.call_tool("numbers")
    assert "structuredContent" not in result and result["content"][0]["text"] == "[1,2,3]"


# ----------------------------------------------------------------------------------- capabilities


async def test_missing_client_capability_is_32021_with_capabilities_object() -> None:
    async with modern_client() as (client, _):
        with pytest.raises(MCPError) as raised:
            await client.call_tool("ask_model", {"prompt": "?"})
    assert raised.value.code == ErrorCode.MISSING_REQUIRED_CLIENT_CAPABILITY == -32021
    assert raised.value.data == {"requiredCapabilities": {"sampling": {}}}


# ------------------------------------------------------------------------------------ input rounds


async def test_input_required_round_trip_by_hand() -> None:
    async with modern_client() as (client, _):
        params = {"name": "ask_user", "arguments": {}, **envelope({"elicitation": {}})}
        first = await raw(client, "tools/call", params)
        assert first["resultType"] == "input_required"
        assert first["inputRequests"] == {
            "elicitation-1": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            }
        }
        assert isinstance(first["requestState"], str) and "ttlMs" not in first
        answer = {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}
        second = await raw(
            client, "tools/call", {**params, "inputResponses": answer, "requestState": first["requestState"]}
        )
        assert second["resultType"] == "complete"
        assert second["content"] == [{"type": "text", "text": "accept: {'name': 'Ada'}"}]


async def test_tampered_or_foreign_request_state_is_rejected() -> None:
    async with modern_client() as (client, _):
        params = {"name": "ask_user", "arguments": {}, **envelope({"elicitation": {}})}
        state = (await raw(client, "tools/call", params))["requestState"]
        answer = {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}
        for bad in (state + "-TAMPERED", state[:-2] + ("AA" if not state.endswith("AA") else "BB"), "garbage", 42):
            error = await raw_error(client, "tools/call", {**params, "inputResponses": answer, "requestState": bad})
            assert (error.code, error.data) == (-32602, {"reason": "invalid_request_state"})
        # A state is bound to its request: the same state on another tool is refused.
        other = {"name": "roots", "arguments": {}, **envelope({"roots": {}})}
        error = await raw_error(client, "tools/call", {**other, "requestState": state})
        assert error.code == -32602
    # And a state sealed by another server (another key) is refused.
    async with modern_client() as (client, _):
        error = await raw_error(client, "tools/call", {**params, "inputResponses": answer, "requestState": state})
        assert error.code == -32602


async def test_answers_without_state_are_accepted_and_bad_answers_are_asked_again() -> None:
    async with modern_client() as (client, _):
        params = {"name": "ask_user", "arguments": {}, **envelope({"elicitation": {}})}
        direct = await raw(
            client,
            "tools/call",
            {**params, "inputResponses": {"elicitation-1": {"action": "decline"}, "unrelated": {"x": 1}}},
        )
        assert direct["content"][0]["text"] == "decline: None"
        for responses in ({"elicitation-1": 12345}, {"wrong_key": {"action": "accept"}}):
            again = await raw(client, "tools/call", {**params, "inputResponses": responses})
            assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["elicitation-1"]
        error = await raw_error(client, "tools/call", {**params, "inputResponses": [1]})
        assert error.code == -32602


async def test_multi_round_keeps_earlier_answers_and_handler_state() -> None:
    server = Server("s", "1")
    runs: list[int] = []

    @server.tool()
    async def two_questions(ctx: Any, args: Any) -> str:
        ctx.state.setdefault("runs", 0)
        ctx.state["runs"] += 1
        runs.append(ctx.state["runs"])
        first = await ctx.ask({"name": inputs.elicitation("Name?", {"type": "object"})})
        second = await ctx.ask({"color": inputs.elicitation("Color?", {"type": "object"})})
        return f"{first['name']['content']['v']} likes {second['color']['content']['v']}"

    async with modern_client(server) as (client, _):
        params = {"name": "two_questions", "arguments": {}, **envelope({"elicitation": {}})}
        r1 = await raw(client, "tools/call", params)
        assert list(r1["inputRequests"]) == ["name"]
        r2 = await raw(
            client,
            "tools/call",
            {
                **params,
                "requestState": r1["requestState"],
                "inputResponses": {"name": {"action": "accept", "content": {"v": "Ada"}}},
            },
        )
        assert list(r2["inputRequests"]) == ["color"] and r2["requestState"] != r1["requestState"]
        r3 = await raw(
            client,
            "tools/call",
            {
                **params,
                "requestState": r2["requestState"],
                "inputResponses": {"color": {"action": "accept", "content": {"v": "teal"}}},
            },
        )
    assert r3["content"][0]["text"] == "Ada likes teal"
    assert runs == [1, 2, 3]  # the handler's own state travelled through both rounds


async def test_client_answers_input_rounds_through_its_callbacks() -> None:
    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "m"}

    async with modern_client(sampling=sampling, roots=[{"uri": "file:///tmp/a"}]) as (client, _):
        assert (await client.call_tool("ask_model", {"prompt": "?"}))["content"][0]["text"] == "model said: 42"
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///tmp/a"


async def test_input_only_in_multi_round_methods() -> None:
    server = Server("s", "1")

    @server.prompt()
    async def asks(ctx: Any, args: Any) -> str:
        result = await ctx.elicit("ok?", {"type": "object"})
        return f"answer {result['action']}"

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {}}

    async with modern_client(server, elicitation=elicitation) as (client, _):
        result = await client.get_prompt("asks")
    assert result["messages"][0]["content"]["text"] == "answer accept"


# ---------------------------------------------------------------------------------------- logging


async def test_logs_only_with_a_log_level_and_at_or_above_it() -> None:
    async with modern_client() as (client, seen):
        await client.call_tool("log")
        await client.call_tool("echo", {"text": "sync"})
        assert [n for n in seen if n.method == "notifications/message"] == []
    async with modern_client(log_level="warning") as (client, seen):
        await client.call_tool("log")
        levels = [n.params["level"] for n in seen if n.method == "notifications/message"]
    assert levels == ["warning", "error"]


# ----------------------------------------------------------------------------------------- listen


async def test_listen_acknowledges_the_agreed_subset_and_tags_notifications() -> None:
    server = Server("tools-only", "1")

    @server.tool()
    async def change(ctx: Any, args: Any) -> str:
        await ctx.notify_tools_changed()
        await ctx.notify_prompts_changed()
        return "ok"

    async with modern_client(server) as (client, _):
        async with client.listen(tools=True, prompts=True, uris=["test://x"]) as subscription:
            assert subscription.agreed == {"toolsListChanged": True}  # no prompts, no subscriptions here
            await client.call_tool("change")
            notification = await subscription.next(2)
            assert notification.method == "notifications/tools/list_changed"
            assert notification.params == {"_meta": {"io.modelcontextprotocol/subscriptionId": subscription.id}}
            with pytest.raises(TimeoutError):
                await subscription.next(0.2)  # prompts changed was not agreed, so not sent


async def test_listen_filters_by_type_and_uri() -> None:
    async with modern_client() as (client, _):
        async with client.listen(prompts=True, uris=["test://static", "file:///dir"]) as subscription:
            await client.call_tool("add_tool")  # tools changed: not asked for
            await client.call_tool("touch", {"uri": "test://binary"})  # not subscribed
            await client.call_tool("touch", {"uri": "file:///dir/inner.txt"})  # under a subscribed URI
            await client.call_tool("touch", {"uri": "test://static"})
            first, second = await subscription.next(2), await subscription.next(2)
            assert [first.params["uri"], second.params["uri"]] == ["file:///dir/inner.txt", "test://static"]
            with pytest.raises(TimeoutError):
                await subscription.next(0.2)


async def test_listen_streams_are_independent() -> None:
    async with modern_client() as (client, _):
        async with client.listen(tools=True) as a, client.listen(tools=True) as b:
            await client.call_tool("add_tool")
            got_a, got_b = await a.next(2), await b.next(2)
    assert got_a.params["_meta"]["io.modelcontextprotocol/subscriptionId"] == a.id
    assert got_b.params["_meta"]["io.modelcontextprotocol/subscriptionId"] == b.id != a.id


async def test_listen_with_malformed_filter_is_invalid_params() -> None:
    async with modern_client() as (client, _):
        for notifications in (None, {"toolsListChanged": "yes"}, {"resourceSubscriptions": "test://static"}):
            error = await raw_error(client, "subscriptions/listen", {"notifications": notifications, **envelope()})
            assert error.code == -32602


# ------------------------------------------------------------------------------------------- eras


async def test_both_eras_on_one_connection_keep_their_own_rules() -> None:
    async with connect_in_memory(build_server(), initialize=False) as client:
        # A modern request needs no handshake, and does not make the legacy era usable...
        assert (await raw(client, "tools/list", envelope()))["resultType"] == "complete"
        error = await raw_error(client, "tools/list", None)
        assert error.code == ErrorCode.INVALID_REQUEST
        # ...and after a legacy handshake, modern requests are still served statelessly.
        await client.initialize()
        legacy = await raw(client, "tools/list", None)
        modern = await raw(client, "tools/list", envelope())
    assert "resultType" not in legacy and modern["resultType"] == "complete"
    assert [t["name"] for t in legacy["tools"]] == [t["name"] for t in modern["tools"]]


async def test_auto_client_picks_modern_and_falls_back_to_legacy() -> None:
    async with connect_in_memory(build_server(), protocol_version="auto") as client:
        assert client.protocol_version == MODERN and client.server_info == SERVER_INFO


async def test_request_state_carries_only_answers_the_handler_used() -> None:
    import base64
    import json

    server = Server("s", "1")

    @server.tool()
    async def two_questions(ctx: Any, args: Any) -> str:
        await ctx.ask({"first": inputs.elicitation("1?", {"type": "object"})})
        await ctx.ask({"second": inputs.elicitation("2?", {"type": "object"})})
        return "done"

    async with modern_client(server) as (client, _):
        params = {"name": "two_questions", "arguments": {}, **envelope({"elicitation": {}})}
        padded = {"first": {"action": "accept", "content": {}}, "junk": {"x": "y" * 100}}
        result = await client.request("tools/call", {**params, "inputResponses": padded}, answer_inputs=False)
    payload = result["requestState"].split(".")[0]
    sealed = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert list(result["inputRequests"]) == ["second"]
    assert sealed["a"] == {"first": {"action": "accept", "content": {}}}
