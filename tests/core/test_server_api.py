"""The server API through the in-memory pair: lifecycle, features and their exact errors."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from plainmcp import ErrorCode, MCPError, PromptArgument, Server, ToolAnnotations
from plainmcp.testing import connect_in_memory

from tests.fixtures.feature_server import build_server

pytestmark = pytest.mark.anyio


async def _error(awaitable: Any) -> MCPError:
    with pytest.raises(MCPError) as raised:
        await awaitable
    return raised.value


# ------------------------------------------------------------------------------------- lifecycle


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"])
async def test_initialize_echoes_a_supported_version(version: str) -> None:
    async with connect_in_memory(build_server(), protocol_version=version) as client:
        assert client.protocol_version == version


@pytest.mark.parametrize("version", ["1999-01-01", "2026-07-28", "latest"])
async def test_initialize_answers_latest_legacy_for_other_versions(version: str) -> None:
    # 2026-07-28 has no initialize: a client asking for it in a handshake gets the legacy answer.
    async with connect_in_memory(build_server(), initialize=False) as client:
        result = await client.request(
            "initialize", {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
        )
        assert result["protocolVersion"] == "2025-11-25"


async def test_initialize_reports_server_info_and_instructions() -> None:
    async with connect_in_memory(build_server()) as client:
        assert client.server_info == {
            "name": "feature-server",
            "version": "1.2.3",
            "title": "Feature server",
            "description": "One of everything",
            "websiteUrl": "https://example.invalid/feature-server",
        }
        assert client.instructions == "Use echo to test."


async def test_capabilities_are_derived_from_registrations() -> None:
    server = Server("s", "1")
    async with connect_in_memory(server) as client:
        assert client.server_capabilities == {"logging": {}}

    @server.tool()
    async def noop(ctx, args):
        return "ok"

    async with connect_in_memory(server) as client:
        assert client.server_capabilities == {"logging": {}, "tools": {"listChanged": True}}
    async with connect_in_memory(build_server()) as client:
        assert client.server_capabilities == {
            "logging": {},
            "completions": {},
            "prompts": {"listChanged": True},
            "resources": {"listChanged": True, "subscribe": True},
            "tools": {"listChanged": True},
        }


def _shapes() -> list[Server]:
    """Servers of every registration shape that changes the capabilities."""
    bare = Server("bare", "1")
    quiet = Server("quiet", "1", logging=False)
    declared = Server("declared", "1", declare=("tools", "prompts", "resources"))
    templated = Server("templated", "1")

    @templated.resource_template("note:///{name}")
    async def note(ctx, uri, variables):
        return "text"

    extended = Server("extended", "1")
    extended.declare_extension("io.example/thing", {"a": 1})
    return [bare, quiet, declared, templated, extended, build_server()]


@pytest.mark.parametrize("server", _shapes(), ids=lambda server: server.name)
def test_offers_agrees_with_the_capabilities_object(server: Server) -> None:
    names = ("logging", "completions", "prompts", "resources", "tools", "extensions", "sampling", "")
    assert {name for name in names if server.offers(name)} == set(server.capabilities())


async def test_methods_of_absent_capabilities_are_not_found() -> None:
    server = Server("s", "1")

    @server.tool()
    async def noop(ctx, args):
        return "ok"

    async with connect_in_memory(server) as client:
        for method in ("prompts/list", "resources/list", "completion/complete", "resources/subscribe"):
            assert (await _error(client.request(method, {}))).code == ErrorCode.METHOD_NOT_FOUND


async def test_requests_before_initialize_are_refused_but_ping_works() -> None:
    async with connect_in_memory(build_server(), initialize=False) as client:
        await client.ping()
        error = await _error(client.request("tools/list"))
        assert error.code == ErrorCode.INVALID_REQUEST
        await client.initialize()
        assert (await client.list_tools())[0]


async def test_second_initialize_is_refused() -> None:
    async with connect_in_memory(build_server()) as client:
        assert (await _error(client.initialize())).code == ErrorCode.INVALID_REQUEST


# ------------------------------------------------------------------------------------------ tools


async def test_tools_list_fields_follow_the_negotiated_version() -> None:
    by_version = {}
    for version in ("2024-11-05", "2025-03-26", "2025-06-18"):
        async with connect_in_memory(build_server(), protocol_version=version) as client:
            by_version[version] = {t["name"]: t for t in await client.list_all_tools()}
    assert set(by_version["2024-11-05"]["add"]) == {"name", "description", "inputSchema"}
    assert "annotations" not in by_version["2024-11-05"]["echo"]
    assert by_version["2025-03-26"]["echo"]["annotations"] == {"readOnlyHint": True}
    assert "outputSchema" not in by_version["2025-03-26"]["add"]
    assert by_version["2025-06-18"]["add"]["title"] == "Add two numbers"
    assert by_version["2025-06-18"]["add"]["outputSchema"]["required"] == ["sum"]


async def test_structured_content_is_mirrored_and_dropped_before_2025_06_18() -> None:
    async with connect_in_memory(build_server()) as client:
        assert await client.call_tool("add", {"a": 1, "b": 2.5}) == {
            "content": [{"type": "text", "text": '{"sum":3.5}'}],
            "structuredContent": {"sum": 3.5},
        }
    async with connect_in_memory(build_server(), protocol_version="2025-03-26") as client:
        assert await client.call_tool("add", {"a": 1, "b": 2}) == {"content": [{"type": "text", "text": '{"sum":3}'}]}


async def test_tool_argument_errors_are_is_error_results_naming_the_problem() -> None:
    async with connect_in_memory(build_server()) as client:
        result = await client.call_tool("echo", {"text": "", "extra": 1})
        assert result["isError"] is True
        text = result["content"][0]["text"]
        assert text.startswith('Invalid arguments for tool "echo":')
        assert '"extra" was unexpected' in text and "text:" in text
        missing = await client.call_tool("add", {"a": 1})
        assert missing["isError"] is True and '"b" is a required property' in missing["content"][0]["text"]


async def test_tool_error_becomes_is_error_result_with_its_message() -> None:
    async with connect_in_memory(build_server()) as client:
        assert await client.call_tool("fail") == {
            "content": [{"type": "text", "text": "The widget is out of stock; try another widget."}],
            "isError": True,
        }


async def test_unknown_tool_and_malformed_call_are_invalid_params() -> None:
    async with connect_in_memory(build_server()) as client:
        error = await _error(client.call_tool("nope"))
        assert (error.code, error.message) == (ErrorCode.INVALID_PARAMS, "Unknown tool: nope")
        error = await _error(client.request("tools/call", {"name": "echo", "arguments": ["x"]}))
        assert error.code == ErrorCode.INVALID_PARAMS
        error = await _error(client.request("tools/call", {"name": 5}))
        assert error.code == ErrorCode.INVALID_PARAMS


async def test_unexpected_tool_exception_is_a_generic_internal_error(caplog: pytest.LogCaptureFixture) -> None:
    async with connect_in_memory(build_server()) as client:
        error = await _error(client.call_tool("crash"))
    assert (error.code, error.message, error.data) == (ErrorCode.INTERNAL_ERROR, "Internal error", None)
    assert "secret /home/alice" in caplog.text  # the traceback went to the log, not to the client


async def test_output_schema_violation_is_an_internal_error() -> None:
    async with connect_in_memory(build_server()) as client:
        assert (await _error(client.call_tool("broken_output"))).code == ErrorCode.INTERNAL_ERROR


async def test_tools_paginate_with_opaque_cursors() -> None:
    async with connect_in_memory(build_server(page_size=4)) as client:
        first, cursor = await client.list_tools()
        assert len(first) == 4 and isinstance(cursor, str)
        everything = await client.list_all_tools()
        assert [t["name"] for t in everything][:4] == [t["name"] for t in first]
        assert len(everything) == len({t["name"] for t in everything}) == 14
        error = await _error(client.list_tools("bogus"))
        assert error.code == ErrorCode.INVALID_PARAMS


async def test_tool_registration_rejects_bad_definitions() -> None:
    server = Server("s", "1")
    with pytest.raises(ValueError):
        server.tool(name="has space")(_noop)
    with pytest.raises(ValueError):
        server.tool(name="t", input_schema={"type": "array"})(_noop)
    server.tool(name="t")(_noop)
    with pytest.raises(ValueError):
        server.tool(name="t")(_noop)


async def _noop(ctx: Any, args: Any) -> str:
    return "ok"


async def test_tool_list_changed_reaches_initialized_clients() -> None:
    seen: list[str] = []
    async with connect_in_memory(build_server(), on_notification=lambda n: seen.append(n.method)) as client:
        await client.call_tool("add_tool")
        with anyio.fail_after(2):
            while "notifications/tools/list_changed" not in seen:
                await anyio.sleep(0.01)
        assert "late" in {t["name"] for t in await client.list_all_tools()}


# -------------------------------------------------------------------------------------- resources


async def test_resources_read_text_blob_and_template() -> None:
    async with connect_in_memory(build_server()) as client:
        assert await client.read_resource("test://static") == {
            "contents": [{"uri": "test://static", "text": "static text", "mimeType": "text/plain"}]
        }
        blob = (await client.read_resource("test://binary"))["contents"][0]
        assert blob["mimeType"] == "image/png" and blob["blob"].startswith("iVBORw0KGgo")
        assert (await client.read_resource("test://items/abc"))["contents"][0]["text"] == '{"id": "abc"}'
        templates = await client.list_all_resource_templates()
        assert templates == [
            {
                "uriTemplate": "test://items/{id}",
                "name": "item",
                "description": "An item by id.",
                "mimeType": "application/json",
            }
        ]


@pytest.mark.parametrize("uri", ["test://nothing", "test://items/missing"])
async def test_unknown_resource_is_32002_with_uri(uri: str) -> None:
    async with connect_in_memory(build_server()) as client:
        error = await _error(client.read_resource(uri))
        assert (error.code, error.data) == (-32002, {"uri": uri})


async def test_resource_updates_reach_only_subscribers_even_from_outside_requests() -> None:
    server = build_server()
    updates: list[str] = []

    def on_notification(notification: Any) -> None:
        if notification.method == "notifications/resources/updated":
            updates.append(notification.params["uri"])

    async with connect_in_memory(server, on_notification=on_notification) as client:
        await client.subscribe("test://static")
        await server.notify_resource_updated("test://binary")  # not subscribed
        await server.notify_resource_updated("test://static")  # published outside any request
        await client.call_tool("touch", {"uri": "test://static"})
        await client.unsubscribe("test://static")
        await server.notify_resource_updated("test://static")
        await client.ping()
        assert updates == ["test://static", "test://static"]
        error = await _error(client.subscribe("test://nothing"))
        assert error.code == -32002


async def test_subscribed_uris_and_subscriptions_changed_follow_the_clients() -> None:
    """The public interest API a watcher uses: what is subscribed now, and a wait for the next change."""
    server = build_server()
    woke: list[set[str]] = []

    async def watcher() -> None:
        while True:
            await server.subscriptions_changed()
            woke.append(server.subscribed_uris())

    async with anyio.create_task_group() as group:
        group.start_soon(watcher)
        async with connect_in_memory(server) as client:
            await anyio.sleep(0)
            assert server.subscribed_uris() == set()
            await client.subscribe("test://static")
            assert server.subscribed_uris() == {"test://static"}
            await client.unsubscribe("test://static")
            await client.ping()
            assert server.subscribed_uris() == set()
        await anyio.sleep(0.01)
        group.cancel_scope.cancel()
    assert {"test://static"} in woke and woke[-1] == set()


# ---------------------------------------------------------------------------------------- prompts


async def test_prompt_get_and_argument_errors() -> None:
    async with connect_in_memory(build_server()) as client:
        result = await client.get_prompt("write", {"topic": "tests", "tone": "dry"})
        assert result == {
            "description": "Write about a topic.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Write about tests in a dry tone."}},
                {"role": "assistant", "content": {"type": "text", "text": "Sure."}},
            ],
        }
        error = await _error(client.get_prompt("write", {"tone": "dry"}))
        assert error.code == ErrorCode.INVALID_PARAMS and "topic" in error.message
        assert error.data == {"missing": ["topic"]}
        error = await _error(client.request("prompts/get", {"name": "write", "arguments": {"topic": 3}}))
        assert error.code == ErrorCode.INVALID_PARAMS
        assert (await _error(client.get_prompt("nope"))).code == ErrorCode.INVALID_PARAMS


async def test_prompts_list_shows_arguments() -> None:
    async with connect_in_memory(build_server()) as client:
        prompts = {p["name"]: p for p in await client.list_all_prompts()}
        assert prompts["write"]["arguments"] == [
            {"name": "topic", "description": "What to write about", "required": True},
            {"name": "tone", "description": "How to sound"},
        ]
        assert "arguments" not in prompts["simple"]


# ------------------------------------------------------------------------------------- completion


async def test_completion_for_prompt_arguments_and_template_variables() -> None:
    async with connect_in_memory(build_server()) as client:
        assert await client.complete({"type": "ref/prompt", "name": "write"}, "topic", "PY") == {
            "values": ["python", "pytest"]
        }
        assert await client.complete({"type": "ref/prompt", "name": "write"}, "tone", "x") == {"values": []}
        assert await client.complete({"type": "ref/resource", "uri": "test://items/{id}"}, "id", "ap") == {
            "values": ["apple", "apricot"]
        }
        for ref, argument in (
            ({"type": "ref/prompt", "name": "nope"}, "topic"),
            ({"type": "ref/prompt", "name": "write"}, "nope"),
            ({"type": "ref/resource", "uri": "test://nope/{x}"}, "x"),
            ({"type": "ref/other"}, "x"),
        ):
            assert (await _error(client.complete(ref, argument, ""))).code == ErrorCode.INVALID_PARAMS


async def test_completion_caps_values_at_100_with_total() -> None:
    server = Server("s", "1")
    server.prompt(arguments=[PromptArgument("n", complete=[f"v{i}" for i in range(250)])])(_noop)
    async with connect_in_memory(server) as client:
        completion = await client.complete({"type": "ref/prompt", "name": "_noop"}, "n", "v")
        assert len(completion["values"]) == 100 and completion["total"] == 250 and completion["hasMore"] is True


# ---------------------------------------------------------------------------------------- logging


async def test_logging_set_level_filters_messages() -> None:
    messages: list[dict[str, Any]] = []

    def on_notification(notification: Any) -> None:
        if notification.method == "notifications/message":
            messages.append(notification.params)

    async with connect_in_memory(build_server(), on_notification=on_notification) as client:
        await client.call_tool("log")
        await client.set_logging_level("warning")
        await client.call_tool("log")
        assert [m["level"] for m in messages] == ["debug", "info", "warning", "error", "warning", "error"]
        assert messages[-1] == {"level": "error", "data": {"level": "error"}, "logger": "feature"}
        assert (await _error(client.set_logging_level("loud"))).code == ErrorCode.INVALID_PARAMS


# ------------------------------------------------------------------------- server -> client requests


async def test_sampling_elicitation_and_roots_round_trip() -> None:
    async def sampling(params: dict[str, Any]) -> dict[str, Any]:
        assert params["maxTokens"] == 50
        return {"role": "assistant", "content": {"type": "text", "text": "42"}, "model": "test"}

    async def elicitation(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    async with connect_in_memory(
        build_server(), sampling=sampling, elicitation=elicitation, roots=[{"uri": "file:///tmp/a"}]
    ) as client:
        assert (await client.call_tool("ask_model", {"prompt": "?"}))["content"][0]["text"] == "model said: 42"
        assert (await client.call_tool("ask_user"))["content"][0]["text"] == "accept: {'name': 'Ada'}"
        assert (await client.call_tool("roots"))["content"][0]["text"] == "file:///tmp/a"


async def test_server_requests_need_the_client_capability() -> None:
    async with connect_in_memory(build_server()) as client:
        error = await _error(client.call_tool("ask_model", {"prompt": "?"}))
        assert error.code == ErrorCode.INVALID_REQUEST
        assert error.data == {"requiredCapabilities": {"sampling": {}}}


async def test_annotations_serialize_with_spec_names() -> None:
    hints = ToolAnnotations(title="T", read_only=False, destructive=True, idempotent=True, open_world=False)
    assert hints.to_dict() == {
        "title": "T",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def test_env_list_option_takes_the_environment_then_the_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from plainmcp.command_line import env_list_option

    monkeypatch.setenv("TEST_DIRS", "/a,/b")
    parser = argparse.ArgumentParser()
    env_list_option(parser, "--dir", "TEST_DIRS", dest="dirs")
    assert parser.parse_args([]).dirs == ["/a", "/b"]
    assert parser.parse_args(["--dir", "/c", "--dir", "/d"]).dirs == ["/c", "/d"]  # flags replace the env
    monkeypatch.delenv("TEST_DIRS")
    parser = argparse.ArgumentParser()
    env_list_option(parser, "--dir", "TEST_DIRS", dest="dirs")
    assert parser.parse_args([]).dirs == []


def test_env_list_option_splits_paths_at_the_separator_given(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse
    import os

    from plainmcp.command_line import env_list_option

    monkeypatch.setenv("TEST_DIRS", os.pathsep.join(["/a,b", "/c"]))  # a comma is part of a path
    monkeypatch.setenv("COLUMNS", "200")  # the help on one line
    parser = argparse.ArgumentParser()
    env_list_option(parser, "--dir", "TEST_DIRS", separator=os.pathsep, dest="dirs")
    assert parser.parse_args([]).dirs == ["/a,b", "/c"]
    assert f"[env: TEST_DIRS, {os.pathsep}-separated]" in parser.format_help()


async def test_resource_list_hook_lists_computed_resources_after_registered_ones_paginated() -> None:
    from plainmcp import Resource
    from plainmcp.testing import connect_in_memory

    server = Server("dynamic", "0", page_size=2)
    files = ["a.txt", "b.txt", "c.txt"]

    async def read(ctx: Any, uri: str) -> str:
        return uri

    server.add_resource(Resource("mem://fixed", "fixed", read))

    @server.resource_list
    async def list_files(ctx: Any) -> list[Resource]:
        assert ctx.server is server  # the request's context
        return [Resource(f"mem://files/{name}", name, read) for name in files]

    assert "resources" in server.capabilities()
    async with connect_in_memory(server) as client:
        first, cursor = await client.list_resources()
        assert [r["uri"] for r in first] == ["mem://fixed", "mem://files/a.txt"]
        assert [r["uri"] for r in await client.list_all_resources()] == [
            "mem://fixed",
            "mem://files/a.txt",
            "mem://files/b.txt",
            "mem://files/c.txt",
        ]
        files.remove("b.txt")  # computed per request: a file that went is gone from the next list
        assert [r["uri"] for r in await client.list_all_resources()] == [
            "mem://fixed",
            "mem://files/a.txt",
            "mem://files/c.txt",
        ]


def test_resource_list_hook_alone_declares_resources() -> None:
    server = Server("dynamic", "0")

    @server.resource_list
    async def nothing(ctx: Any) -> list[Any]:
        return []

    assert server.capabilities()["resources"] == {"listChanged": True}


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_extensions_are_declared_and_seen_in_both_eras(version: str) -> None:
    server = Server("s", "1")
    server.declare_extension("io.example/charts", {"kinds": ["line"]})
    seen: list[Any] = []

    @server.tool()
    async def probe(ctx, args):
        seen.append((ctx.client_extension("io.example/charts"), ctx.client_extension("io.example/other")))
        return "ok"

    async with connect_in_memory(
        server, protocol_version=version, extensions={"io.example/charts": {"v": 1}}
    ) as client:
        assert client.server_capabilities["extensions"] == {"io.example/charts": {"kinds": ["line"]}}
        await client.call_tool("probe", {})
    async with connect_in_memory(server, protocol_version=version) as client:
        await client.call_tool("probe", {})
    assert seen == [({"v": 1}, None), (None, None)]


def test_extension_identifiers_need_a_vendor_prefix() -> None:
    with pytest.raises(ValueError):
        Server("s", "1").declare_extension("charts")
