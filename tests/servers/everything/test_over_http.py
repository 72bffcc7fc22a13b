"""The everything server's exact outputs through OUR client over HTTP, three ways: Streamable HTTP in
2025-11-25 (a session, server->client requests, SSE resumption), Streamable HTTP in 2026-07-28
(stateless POSTs, ``input_required`` rounds) and the 2024-11-05 HTTP+SSE transport.

The in-memory tests of this package are the expectations. :func:`test_in_memory_expectation_over_http`
runs those very test functions again (their parametrizations included), with the module's ``connect``
pointed at :func:`plainmcp.http_client.connect_http` and a real ``python -m plainmcp_everything`` process,
so every tool, resource, template, prompt and completion is checked against the same literal values.
:func:`test_every_in_memory_test_is_rerun_or_excluded` keeps that list complete.

What cannot be re-run as it is gets its own test below: legacy list changes and resource updates travel on
the session's GET stream (or the SSE stream), concurrently with the responses, so those tests wait for them
(bounded) and use a later notification on the same stream as a barrier before asserting that something did
not arrive; a shared server is used only by tests that change nothing on it.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest
from plainmcp.http_client import connect_http

from tests.interop.http_server import ServerProcess, running_server

from . import test_changes as in_memory_changes
from . import test_input_required as in_memory_input_required
from . import test_listing as in_memory_listing
from . import test_resources_prompts as in_memory_resources_prompts
from . import test_tools as in_memory_tools
from .support import LEGACY, MODERN, QUICK, SUBSCRIPTION_ID, Recorder, only_text

pytestmark = pytest.mark.anyio

#: Bound for one whole client connection in a test (connect, the test's calls, close).
CONNECTION = 30.0


@dataclass(frozen=True)
class Way:
    """One way of talking HTTP to the server."""

    name: str
    era: str
    transport: str  # "streamable" or "sse": what the client must end up using
    server: str  # the --transport of the server process
    path: str

    def __str__(self) -> str:
        return self.name


STREAMABLE_LEGACY = Way("streamable-legacy", LEGACY, "streamable", "http", "/mcp")
STREAMABLE_MODERN = Way("streamable-modern", MODERN, "streamable", "http", "/mcp")
SSE = Way("sse", LEGACY, "sse", "sse", "/sse")
WAYS = (STREAMABLE_LEGACY, STREAMABLE_MODERN, SSE)
LEGACY_WAYS = (STREAMABLE_LEGACY, SSE)


def http_connect(way: Way, url: str) -> Any:
    """A drop-in for ``support.connect`` that connects over HTTP (``transport="auto"``, the default)
    and checks that the client really speaks the transport ``way`` names."""

    @asynccontextmanager
    async def connect(
        era: str, recorder: Recorder | None = None, server: Any = None, **options: Any
    ) -> AsyncIterator[Any]:
        assert server is None, "over HTTP the server is the running process"
        assert (era == MODERN) == (way.era == MODERN), f"a {era} client does not belong to {way}"
        recorder = recorder or Recorder()
        capabilities = {key: options.pop(key) for key in ("sampling", "elicitation", "roots") if key in options}
        client_options = {**recorder.client_options(**capabilities), **options}
        with anyio.fail_after(CONNECTION):
            async with connect_http(url, protocol_version=era, **client_options) as client:
                # "auto" did not fall back to SSE where Streamable HTTP is served.
                assert client.transport == ("streamable-http" if way.transport == "streamable" else "sse"), way
                assert client.protocol_version == era
                yield client

    return connect


class Servers:
    """The shared server processes of this module, started when first needed. Nothing run on them
    changes the fixture's state (tests that do get a fresh process)."""

    def __init__(self, stack: ExitStack) -> None:
        self._stack = stack
        self._running: dict[str, ServerProcess] = {}

    def get(self, kind: str) -> ServerProcess:
        if kind not in self._running:
            self._running[kind] = self._stack.enter_context(running_server(kind))
        return self._running[kind]


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    with ExitStack() as stack:
        yield Servers(stack)


@contextmanager
def clean_log(server: ServerProcess) -> Iterator[None]:
    """The server logs no error and no traceback while the block runs (and stays up)."""
    before = len(server.stderr().splitlines())
    yield
    server.assert_healthy()
    new = server.stderr().splitlines()[before:]
    bad = [line for line in new if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")]
    assert not bad, "the server logged errors:\n" + "\n".join(bad) + f"\n{server.describe()}"


# ------------------------------------------------------------------------------ the re-run expectations

ERA = "era"  # parametrized (or a fixture) by era: every way of that era
ONLY_LEGACY = "legacy"  # hard-codes a legacy revision
ONLY_MODERN = "modern"  # hard-codes 2026-07-28 (or takes the modern `client` fixture)

#: module -> {test function: (which ways, needs a fresh server)}
RERUN: dict[Any, dict[str, tuple[str, bool]]] = {
    in_memory_tools: {
        "test_simple_text": (ERA, False),
        "test_image_content_is_a_1x1_png": (ERA, False),
        "test_audio_content_is_a_wav": (ERA, False),
        "test_embedded_resource": (ERA, False),
        "test_multiple_content_types": (ERA, False),
        "test_error_handling_is_an_is_error_result": (ERA, False),
        "test_reconnection_completes_after_a_short_wait": (ERA, False),
        "test_dynamic_tool": (ERA, False),
        "test_tool_with_logging_sends_three_info_messages_50_ms_apart": (ONLY_LEGACY, False),
        "test_tool_with_logging_in_2026_needs_a_log_level": (ONLY_MODERN, False),
        "test_logging_tool_respects_set_level": (ONLY_LEGACY, False),
        "test_logging_tool_respects_the_request_log_level": (ONLY_MODERN, False),
        "test_logging_tool_sends_nothing_without_a_log_level": (ONLY_MODERN, False),
        "test_tool_with_progress_reports_0_50_100_of_100": (ERA, False),
        "test_tool_with_progress_sends_nothing_without_a_token": (ERA, False),
        "test_sampling_asks_the_clients_model": (ERA, False),
        "test_sampling_reads_a_list_of_content_blocks": (ERA, False),
        "test_sampling_needs_its_argument": (ERA, False),
        "test_elicitation_asks_for_username_and_email": (ERA, False),
        "test_elicitation_leaves_mode_out_before_2025_11_25": (ONLY_LEGACY, False),
        "test_elicitation_sep1034_defaults": (ERA, False),
        "test_elicitation_sep1330_enums": (ERA, False),
        "test_legacy_client_refusing_elicitation_is_a_tool_error": (ONLY_LEGACY, False),
        "test_json_schema_2020_12_tool_accepts_valid_arguments": (ERA, False),
        "test_json_schema_2020_12_tool_enforces_its_schema": (ERA, False),
        "test_no_arguments_tools_reject_unknown_arguments": (ERA, False),
        "test_unknown_tool_is_invalid_params": (ERA, False),
    },
    in_memory_listing: {
        "test_identity_and_capabilities": (ERA, False),
        "test_tools_list_is_exact_and_meets_the_suites_rules": (ERA, False),
        "test_tool_input_schemas": (ERA, False),
        "test_resources_list": (ERA, False),
        "test_resource_templates_list": (ERA, False),
        "test_prompts_list": (ERA, False),
        "test_completion": (ERA, False),
        "test_legacy_initialize_names_the_negotiated_revision": (ONLY_LEGACY, False),
    },
    in_memory_resources_prompts: {
        "test_static_text": (ERA, False),
        "test_static_binary_is_a_png_blob": (ERA, False),
        "test_template_substitutes_the_id": (ERA, False),
        "test_watched_resource": (ERA, False),
        "test_unknown_resource_is_an_error_naming_the_uri": (ERA, False),
        "test_subscribe_and_unsubscribe_return_empty_results": (ONLY_LEGACY, False),
        "test_subscribing_to_an_unknown_resource_is_an_error": (ONLY_LEGACY, False),
        "test_simple_prompt": (ERA, False),
        "test_prompt_with_arguments": (ERA, False),
        "test_prompt_with_arguments_rejects_missing_or_bad_ones": (ERA, False),
        "test_prompt_with_embedded_resource": (ERA, False),
        "test_prompt_with_image": (ERA, False),
        "test_dynamic_prompt": (ERA, False),
        "test_unknown_prompt_is_invalid_params": (ERA, False),
    },
    in_memory_input_required: {
        "test_basic_elicitation": (ONLY_MODERN, False),
        "test_basic_elicitation_declined": (ONLY_MODERN, False),
        "test_basic_sampling": (ONLY_MODERN, False),
        "test_basic_list_roots": (ONLY_MODERN, False),
        "test_request_state_round_trips": (ONLY_MODERN, False),
        "test_answer_without_the_state_starts_over": (ONLY_MODERN, False),
        "test_multiple_input_requests": (ONLY_MODERN, False),
        "test_multiple_input_requests_answered_in_part_asks_for_the_rest": (ONLY_MODERN, False),
        "test_multi_round": (ONLY_MODERN, False),
        "test_missing_or_malformed_answers_are_asked_again": (ONLY_MODERN, False),
        "test_extra_answers_are_ignored": (ONLY_MODERN, False),
        "test_input_responses_of_the_wrong_type_are_invalid_params": (ONLY_MODERN, False),
        "test_prompt_asks_for_its_context": (ONLY_MODERN, False),
        "test_lists_never_ask_for_input": (ONLY_MODERN, False),
        "test_tampered_state_is_rejected": (ONLY_MODERN, False),
        "test_intact_state_verifies": (ONLY_MODERN, False),
        "test_state_is_bound_to_its_request": (ONLY_MODERN, False),
        "test_state_is_bound_to_the_arguments": (ONLY_MODERN, False),
        "test_missing_capability_is_32021": (ONLY_MODERN, False),
        "test_multiple_inputs_name_every_missing_capability": (ONLY_MODERN, False),
        "test_missing_capability_succeeds_with_sampling": (ONLY_MODERN, False),
        "test_capabilities_asks_only_for_what_was_declared": (ONLY_MODERN, False),
        "test_capabilities_without_any_completes_at_once": (ONLY_MODERN, False),
        "test_streaming_elicitation_sends_progress_then_input_required_and_no_request": (ONLY_MODERN, False),
        "test_input_tools_end_to_end": (ERA, False),
        "test_input_prompt_end_to_end": (ERA, False),
        "test_legacy_missing_capability_is_an_error_naming_it": (ONLY_LEGACY, False),
    },
    in_memory_changes: {
        # These change the fixture's state: each runs on a server process of its own.
        "test_a_removed_tool_cannot_be_called": (ERA, True),
        "test_modern_listen_gets_tools_list_changed_tagged_with_its_id": (ONLY_MODERN, True),
        "test_modern_listen_filters_by_type": (ONLY_MODERN, True),
        "test_modern_listen_for_a_resource_gets_its_updates": (ONLY_MODERN, True),
        "test_modern_client_without_a_listen_gets_no_change_notifications": (ONLY_MODERN, True),
    },
}

#: The in-memory tests that are not re-run, and why (each has an HTTP counterpart here or is about memory).
EXCLUDED = {
    in_memory_input_required: {
        "test_state_of_another_server_is_rejected": "needs two servers behind one client setup: in memory only",
        "test_a_shared_state_key_lets_another_process_continue": "builds servers with a state key: in memory only",
    },
    in_memory_changes: {
        "test_legacy_trigger_removes_then_restores_and_notifies": "list_changed travels on another stream: "
        "see test_legacy_trigger_notifies_over_http",
        "test_legacy_resource_update_reaches_only_subscribers": "updates travel on another stream: "
        "see test_legacy_resource_update_reaches_only_subscribers_over_http",
        "test_changes_reach_other_clients_of_the_same_server": "connects in memory: "
        "see test_changes_reach_clients_of_every_transport",
        "test_each_server_has_its_own_state": "about build_server() in memory",
    },
}


def _param_id(name: str, value: Any, index: int) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = str(value)
        if len(text) <= 40 and re.fullmatch(r"[\w./:@ -]*", text):
            return text
    return f"{name}{index}"


def _expand(function: Any) -> list[tuple[str, dict[str, Any]]]:
    """(id, arguments) for every combination of the function's parametrize marks."""
    combinations: list[tuple[str, dict[str, Any]]] = [("", {})]
    for mark in getattr(function, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names, values = mark.args[0], mark.args[1]
        single = isinstance(names, str) and "," not in names
        names = [names] if single else [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        expanded = []
        for index, value in enumerate(values):
            assert type(value).__name__ != "ParameterSet", "pytest.param in a re-run test: teach _expand about it"
            row = (value,) if single else tuple(value)
            part = "-".join(_param_id(name, item, index) for name, item in zip(names, row, strict=True))
            for prefix, arguments in combinations:
                expanded.append(
                    (f"{prefix}-{part}" if prefix else part, {**arguments, **dict(zip(names, row, strict=True))})
                )
        combinations = expanded
    return combinations


def _cases() -> list[Any]:
    cases = []
    for module, functions in RERUN.items():
        short = module.__name__.rsplit(".", 1)[-1]
        for name, (eras, fresh) in functions.items():
            function = getattr(module, name)
            parameters = inspect.signature(function).parameters
            for way in WAYS:
                if eras == ONLY_LEGACY and way.era != LEGACY or eras == ONLY_MODERN and way.era != MODERN:
                    continue
                for suffix, arguments in _expand(function):
                    if eras == ERA:
                        if arguments.setdefault("era", way.era) != way.era:
                            continue  # parametrized by era: the other era's cases belong to other ways
                        assert "era" in parameters, name
                    case_id = f"{way}-{short}::{name}" + (f"[{suffix}]" if suffix else "")
                    cases.append(pytest.param(way, function, arguments, fresh, id=case_id))
    return cases


@pytest.mark.parametrize(("way", "function", "arguments", "fresh"), _cases())
async def test_in_memory_expectation_over_http(way, function, arguments, fresh, servers, monkeypatch):
    module = sys.modules[function.__module__]
    if "client" in inspect.signature(function).parameters:
        assert way.era == MODERN  # the modern `client` fixture of test_input_required

    async def run(server: ServerProcess) -> None:
        connect = http_connect(way, server.url(way.path))
        monkeypatch.setattr(module, "connect", connect)
        with clean_log(server):
            if "client" in inspect.signature(function).parameters:
                async with connect(MODERN) as client:
                    await function(client=client, **arguments)
            else:
                await function(**arguments)

    if fresh:
        with running_server(way.server) as server:
            await run(server)
    else:
        await run(servers.get(way.server))


def test_every_in_memory_test_is_rerun_or_excluded():
    """A test added to the in-memory modules must be re-run here, or excluded with a reason."""
    for module in (*RERUN, *EXCLUDED):
        names = {name for name, value in vars(module).items() if name.startswith("test_") and inspect.isfunction(value)}
        listed = set(RERUN.get(module, {})) | set(EXCLUDED.get(module, {}))
        assert names == listed, (
            f"{module.__name__}: not classified {sorted(names - listed)}, gone {sorted(listed - names)}"
        )
    for module, functions in RERUN.items():
        for name, (eras, _) in functions.items():
            parameters = inspect.signature(getattr(module, name)).parameters
            assert (eras == ERA) == ("era" in parameters), f"{name}: era rule {eras!r} vs its parameters"


# ------------------------------------------------------------------------------- what the client sent


@dataclass
class Sent:
    method: str
    url: httpx.URL
    headers: httpx.Headers
    body: bytes
    status: int


@pytest.fixture
def sent(monkeypatch) -> list[Sent]:
    """Every request our client's httpx sends during the test, with the status it got."""
    requests: list[Sent] = []
    original = httpx.AsyncClient.send

    async def send(self, request, **options):
        response = await original(self, request, **options)
        requests.append(Sent(request.method, request.url, request.headers, request.content, response.status_code))
        return response

    monkeypatch.setattr(httpx.AsyncClient, "send", send)
    return requests


def posted_json(requests: list[Sent]) -> list[Any]:
    return [json.loads(request.body) for request in requests if request.method == "POST"]


RECONNECTED = (
    "Reconnection test completed successfully. If you received this, "
    "the client properly reconnected after stream closure."
)


@pytest.mark.parametrize("way", WAYS, ids=str)
async def test_reconnection_resumes_the_closed_stream_with_last_event_id(way, servers, sent):
    """Legacy Streamable HTTP: the server ends the call's SSE stream after its priming event; our client
    comes back with GET + Last-Event-ID and gets the result there. Elsewhere nothing is closed or resumed."""
    server = servers.get(way.server)
    with clean_log(server):
        async with http_connect(way, server.url(way.path))(way.era) as client:
            with anyio.fail_after(QUICK):
                result = await client.call_tool("test_reconnection", {})
    assert only_text(result) == RECONNECTED
    resumed = [request for request in sent if "last-event-id" in request.headers]
    if way is STREAMABLE_LEGACY:
        (resume,) = resumed
        assert (resume.method, resume.url.path, resume.status) == ("GET", "/mcp", 200)
        assert re.fullmatch(r"[0-9a-f]+-\d+", resume.headers["last-event-id"])
        assert resume.headers["mcp-session-id"] and resume.headers["accept"] == "text/event-stream"
    else:
        assert resumed == []


@pytest.mark.parametrize("way", WAYS, ids=str)
async def test_input_travels_as_server_requests_or_as_rounds(way, servers, sent):
    """Legacy: the server asks with a request of its own and our client POSTs the answer (a JSON-RPC
    response); 2026-07-28: the call comes back input_required and our client calls again with the answer."""
    server = servers.get(way.server)
    recorder = Recorder()
    with clean_log(server):
        async with http_connect(way, server.url(way.path))(way.era, recorder) as client:
            with anyio.fail_after(QUICK):
                result = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
    assert only_text(result) == "LLM response: The capital of France is Paris."
    assert [method for method, _ in recorder.asked] == ["sampling/createMessage"]
    bodies = posted_json(sent)
    calls = [body for body in bodies if body.get("method") == "tools/call"]
    answers = [body for body in bodies if "method" not in body]
    if way.era == LEGACY:
        assert len(calls) == 1
        (answer,) = answers
        assert answer["result"]["content"] == {"type": "text", "text": "The capital of France is Paris."}
    else:
        first, second = calls
        assert "inputResponses" not in first["params"]
        assert list(second["params"]["inputResponses"].values()) == [recorder.sampling_answer]
        assert second["params"]["requestState"]
        assert answers == []


# -------------------------------------------------------------------------------- changes, per transport


async def listed(client, method, key, field):
    return await in_memory_changes.listed(client, method, key, field)


async def call(client, name):
    return await in_memory_changes.call(client, name)


@pytest.mark.parametrize("way", LEGACY_WAYS, ids=str)
@pytest.mark.parametrize(("tool", "toggled", "method", "key", "field", "notification"), in_memory_changes.TRIGGERS)
async def test_legacy_trigger_notifies_over_http(way, tool, toggled, method, key, field, notification):
    recorder = Recorder()
    target = toggled.split(" ", 1)[1]
    with running_server(way.server) as server, clean_log(server):
        async with http_connect(way, server.url(way.path))(LEGACY, recorder) as client:
            assert target in await listed(client, method, key, field)
            assert await call(client, tool) == f"Removed {toggled}"
            assert target not in await listed(client, method, key, field)
            assert await recorder.wait_for(notification) == [{}]
            assert await call(client, tool) == f"Added {toggled}"
            assert (await listed(client, method, key, field))[-1] == target
            await recorder.wait_for(notification, count=2)
    assert recorder.methods() == [notification, notification]


@pytest.mark.parametrize("way", LEGACY_WAYS, ids=str)
async def test_legacy_resource_update_reaches_only_subscribers_over_http(way):
    recorder = Recorder()
    with running_server(way.server) as server, clean_log(server):
        async with http_connect(way, server.url(way.path))(LEGACY, recorder) as client:
            assert await call(client, "test_trigger_resource_update") == "Updated test://watched-resource to revision 1"
            await client.subscribe("test://watched-resource")
            assert await call(client, "test_trigger_resource_update") == "Updated test://watched-resource to revision 2"
            assert await recorder.wait_for("notifications/resources/updated") == [{"uri": "test://watched-resource"}]
            with anyio.fail_after(QUICK):
                contents = (await client.read_resource("test://watched-resource"))["contents"]
            assert contents == [
                {
                    "uri": "test://watched-resource",
                    "mimeType": "text/plain",
                    "text": "Watched resource content (revision 2)",
                }
            ]
            await client.unsubscribe("test://watched-resource")
            assert await call(client, "test_trigger_resource_update") == "Updated test://watched-resource to revision 3"
            # A barrier: a list change on the same stream, after revision 3 was published.
            assert await call(client, "test_trigger_tool_change") == "Removed tool test_dynamic_tool"
            await recorder.wait_for("notifications/tools/list_changed")
    # Revisions 1 (before subscribing) and 3 (after unsubscribing) were never sent.
    assert recorder.methods() == ["notifications/resources/updated", "notifications/tools/list_changed"]


async def test_changes_reach_clients_of_every_transport():
    """One server, three clients (Streamable HTTP legacy and modern, HTTP+SSE): a change any of them makes
    is published to the others, each on its own transport."""
    streamable_recorder, sse_recorder = Recorder(), Recorder()
    with running_server("http") as server, clean_log(server):
        async with (
            http_connect(STREAMABLE_LEGACY, server.mcp_url)(LEGACY, streamable_recorder) as streamable,
            http_connect(SSE, server.sse_url)(LEGACY, sse_recorder) as sse,
            http_connect(STREAMABLE_MODERN, server.mcp_url)(MODERN) as modern,
        ):
            async with modern.listen(prompts=True, uris=["test://watched-resource"]) as subscription:
                await sse.subscribe("test://watched-resource")
                assert await call(streamable, "test_trigger_prompt_change") == "Removed prompt test_dynamic_prompt"
                first = await subscription.next(timeout=QUICK)
                await sse_recorder.wait_for("notifications/prompts/list_changed")
                assert await call(sse, "test_trigger_prompt_change") == "Added prompt test_dynamic_prompt"
                await streamable_recorder.wait_for("notifications/prompts/list_changed", count=2)
                second = await subscription.next(timeout=QUICK)
                assert (
                    await call(modern, "test_trigger_resource_update")
                    == "Updated test://watched-resource to revision 1"
                )
                update = await subscription.next(timeout=QUICK)
                await sse_recorder.wait_for("notifications/resources/updated")
                # A barrier for the streamable client, which did not subscribe to the resource.
                assert await call(modern, "test_trigger_tool_change") == "Removed tool test_dynamic_tool"
                await streamable_recorder.wait_for("notifications/tools/list_changed")
                await sse_recorder.wait_for("notifications/tools/list_changed")
    tag = {"_meta": {SUBSCRIPTION_ID: subscription.id}}
    assert (first.method, first.params) == ("notifications/prompts/list_changed", tag)
    assert (second.method, second.params) == ("notifications/prompts/list_changed", tag)
    assert (update.method, update.params) == (
        "notifications/resources/updated",
        {"uri": "test://watched-resource", **tag},
    )
    assert streamable_recorder.methods() == ["notifications/prompts/list_changed"] * 2 + [
        "notifications/tools/list_changed"
    ]
    assert sse_recorder.methods() == [
        "notifications/prompts/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/updated",
        "notifications/tools/list_changed",
    ]


@pytest.mark.parametrize("way", WAYS, ids=str)
async def test_progress_and_logs_arrive_in_order_before_the_result(way, servers):
    """Within one call: the progress reports and the log messages come in order, and all of them before
    the result (they ride the call's own stream, as they are sent)."""
    server = servers.get(way.server)
    events: list[Any] = []
    options = {"log_level": "info"} if way.era == MODERN else {}
    with clean_log(server):
        async with http_connect(way, server.url(way.path))(
            way.era, on_notification=lambda n: events.append(n.method), **options
        ) as client:
            with anyio.fail_after(QUICK):
                if way.era == LEGACY:
                    await client.set_logging_level("info")
                started = time.monotonic()
                await client.call_tool(
                    "test_tool_with_progress", {}, on_progress=lambda value, *_: events.append(value)
                )
                events.append("progress result")
                await client.call_tool("test_tool_with_logging", {})
                events.append("logging result")
                elapsed = time.monotonic() - started
    assert events == [0, 50, 100, "progress result", *["notifications/message"] * 3, "logging result"]
    assert elapsed >= 0.19  # four pauses of 50 ms
