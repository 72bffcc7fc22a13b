"""The 2026-07-28 fixtures: multi-round-trip requests (SEP-2322), the missing-capability error, and
input on the call's own stream -- on the wire, round by round, as the conformance suite drives them;
then the same tools end to end in both eras, through the client's callbacks.
"""

from __future__ import annotations

import anyio
import pytest
from plainmcp import MCPError
from plainmcp_everything import Config, build_server

from .support import (
    ERAS,
    LEGACY,
    MODERN,
    QUICK,
    ROOTS,
    SAMPLING_ANSWER,
    SERVER_INFO,
    Recorder,
    connect,
    elicit_answer,
    envelope,
    fill_form,
    only_text,
    raw,
)

pytestmark = pytest.mark.anyio


def form(field, kind):
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


def elicitation(message, field, kind):
    return {
        "method": "elicitation/create",
        "params": {"mode": "form", "message": message, "requestedSchema": form(field, kind)},
    }


def sampling(text, max_tokens):
    return {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": max_tokens},
    }


ROOTS_REQUEST = {"method": "roots/list", "params": {}}
NAME_REQUEST = elicitation("What is your name?", "name", "string")
CONFIRM_REQUEST = elicitation("Please confirm", "ok", "boolean")


def assert_input_required(result, requests):
    """An input_required result asking exactly ``requests``, with a sealed state and no cache hints."""
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == requests
    assert isinstance(result["requestState"], str) and result["requestState"]
    assert "ttlMs" not in result and "cacheScope" not in result
    assert result["_meta"][SERVER_INFO]["name"] == "plainmcp-everything"


def assert_complete_text(result, text):
    assert result["resultType"] == "complete"
    assert "isError" not in result
    assert only_text(result) == text


async def two_rounds(client, tool, requests, responses, capabilities=None):
    """Round 1, checked against ``requests``; then round 2 with ``responses`` and the state. Returns round 2."""
    first = await raw(client, "tools/call", {"name": tool, "arguments": {}}, capabilities)
    assert_input_required(first, requests)
    return await raw(
        client,
        "tools/call",
        {"name": tool, "arguments": {}, "inputResponses": responses, "requestState": first["requestState"]},
        capabilities,
    )


@pytest.fixture
async def client():
    """A modern client whose requests the tests send raw, as the conformance harness does."""
    async with connect(MODERN) as client:
        yield client


# ------------------------------------------------------------------------------------- round by round


async def test_basic_elicitation(client):
    second = await two_rounds(
        client,
        "test_input_required_result_elicitation",
        {"user_name": NAME_REQUEST},
        {"user_name": elicit_answer(name="Alice")},
    )
    assert_complete_text(second, "Hello, Alice!")


async def test_basic_elicitation_declined(client):
    second = await two_rounds(
        client,
        "test_input_required_result_elicitation",
        {"user_name": NAME_REQUEST},
        {"user_name": {"action": "decline"}},
    )
    assert_complete_text(second, "No name given: action=decline, content={}")


async def test_basic_sampling(client):
    second = await two_rounds(
        client,
        "test_input_required_result_sampling",
        {"capital_question": sampling("What is the capital of France?", 100)},
        {"capital_question": SAMPLING_ANSWER},
    )
    assert_complete_text(second, "Sampling result: The capital of France is Paris.")


async def test_basic_list_roots(client):
    second = await two_rounds(
        client,
        "test_input_required_result_list_roots",
        {"client_roots": ROOTS_REQUEST},
        {"client_roots": {"roots": ROOTS}},
    )
    assert_complete_text(second, "Found 1 root(s): file:///test/root")


async def test_request_state_round_trips(client):
    second = await two_rounds(
        client,
        "test_input_required_result_request_state",
        {"confirm": CONFIRM_REQUEST},
        {"confirm": elicit_answer(ok=True)},
    )
    # "round 2": the counter the handler kept in ctx.state came back through the sealed requestState.
    assert_complete_text(second, "state-ok: requestState validated in round 2, ok=true")


async def test_answer_without_the_state_starts_over(client):
    """Answers alone are accepted (the suite's ignore-extra-params case), but the handler's own state
    is fresh: it is in round 1 again."""
    result = await raw(
        client,
        "tools/call",
        {
            "name": "test_input_required_result_request_state",
            "arguments": {},
            "inputResponses": {"confirm": elicit_answer(ok=False)},
        },
    )
    assert_complete_text(result, "state-ok: requestState validated in round 1, ok=false")


async def test_multiple_input_requests(client):
    second = await two_rounds(
        client,
        "test_input_required_result_multiple_inputs",
        {"user_name": NAME_REQUEST, "greeting": sampling("Generate a greeting", 50), "client_roots": ROOTS_REQUEST},
        {
            "user_name": elicit_answer(name="Alice"),
            "greeting": {**SAMPLING_ANSWER, "content": {"type": "text", "text": "Hello there!"}},
            "client_roots": {"roots": ROOTS},
        },
    )
    assert_complete_text(second, "Name: Alice; Greeting: Hello there!; Roots: 1")


async def test_multiple_input_requests_answered_in_part_asks_for_the_rest(client):
    first = await raw(client, "tools/call", {"name": "test_input_required_result_multiple_inputs", "arguments": {}})
    second = await raw(
        client,
        "tools/call",
        {
            "name": "test_input_required_result_multiple_inputs",
            "arguments": {},
            "inputResponses": {"user_name": elicit_answer(name="Bob")},
            "requestState": first["requestState"],
        },
    )
    assert_input_required(second, {"greeting": sampling("Generate a greeting", 50), "client_roots": ROOTS_REQUEST})
    third = await raw(
        client,
        "tools/call",
        {
            "name": "test_input_required_result_multiple_inputs",
            "arguments": {},
            "inputResponses": {"greeting": SAMPLING_ANSWER, "client_roots": {"roots": []}},
            "requestState": second["requestState"],
        },
    )
    # Bob's answer came back from round 2's state.
    assert_complete_text(third, "Name: Bob; Greeting: The capital of France is Paris.; Roots: 0")


async def test_multi_round(client):
    tool = "test_input_required_result_multi_round"
    first = await raw(client, "tools/call", {"name": tool, "arguments": {}})
    assert_input_required(first, {"step1": elicitation("Step 1: What is your name?", "name", "string")})
    second = await raw(
        client,
        "tools/call",
        {
            "name": tool,
            "arguments": {},
            "inputResponses": {"step1": elicit_answer(name="Alice")},
            "requestState": first["requestState"],
        },
    )
    assert_input_required(second, {"step2": elicitation("Step 2: What is your favorite color?", "color", "string")})
    assert second["requestState"] != first["requestState"]
    third = await raw(
        client,
        "tools/call",
        {
            "name": tool,
            "arguments": {},
            "inputResponses": {"step2": elicit_answer(color="blue")},
            "requestState": second["requestState"],
        },
    )
    assert_complete_text(third, "Multi-round complete for Alice who likes blue")


@pytest.mark.parametrize(
    "responses",
    [
        {"wrong_key": elicit_answer(data="wrong")},  # missing-input-response
        {"user_name": 12345},  # validate-input: not a result object
        {"user_name": {"action": "maybe"}},  # not an ElicitResult
        {"user_name": {"roots": []}},  # a result of another method
        None,  # validate-input: inputResponses null
    ],
)
async def test_missing_or_malformed_answers_are_asked_again(client, responses):
    result = await raw(
        client,
        "tools/call",
        {"name": "test_input_required_result_elicitation", "arguments": {}, "inputResponses": responses},
    )
    assert_input_required(result, {"user_name": NAME_REQUEST})


async def test_extra_answers_are_ignored(client):
    result = await raw(
        client,
        "tools/call",
        {
            "name": "test_input_required_result_elicitation",
            "arguments": {},
            "inputResponses": {
                "user_name": elicit_answer(name="Alice"),
                "unknown_extra_key": {"action": "accept", "content": {"foo": "bar"}},
                "another_unexpected": {"action": "accept", "content": {"baz": 123}},
            },
        },
    )
    assert_complete_text(result, "Hello, Alice!")


async def test_input_responses_of_the_wrong_type_are_invalid_params(client):
    with pytest.raises(MCPError) as caught:
        await raw(
            client,
            "tools/call",
            {"name": "test_input_required_result_elicitation", "arguments": {}, "inputResponses": [1]},
        )
    assert caught.value.code == -32602


async def test_prompt_asks_for_its_context(client):
    first = await raw(client, "prompts/get", {"name": "test_input_required_result_prompt"})
    assert_input_required(
        first, {"user_context": elicitation("What context should the prompt use?", "context", "string")}
    )
    second = await raw(
        client,
        "prompts/get",
        {
            "name": "test_input_required_result_prompt",
            "inputResponses": {"user_context": elicit_answer(context="test context")},
            "requestState": first["requestState"],
        },
    )
    assert second["resultType"] == "complete"
    assert second["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Prompt with context: test context"}}
    ]


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/list", "resources/templates/list"])
async def test_lists_never_ask_for_input(client, method):
    assert (await raw(client, method, {}))["resultType"] == "complete"


# ----------------------------------------------------------------------------------- state integrity


@pytest.mark.parametrize(
    "tamper",
    [
        lambda state: state + "-TAMPERED",  # what the suite sends
        lambda state: state[:-2] + ("AA" if not state.endswith("AA") else "BB"),  # a changed signature
        lambda state: "A" + state[1:] if not state.startswith("A") else "B" + state[1:],  # a changed payload
        lambda state: "not a state",
        lambda state: "",
    ],
)
async def test_tampered_state_is_rejected(client, tamper):
    first = await raw(client, "tools/call", {"name": "test_input_required_result_tampered_state", "arguments": {}})
    assert_input_required(first, {"confirm": CONFIRM_REQUEST})
    with pytest.raises(MCPError) as caught:
        await raw(
            client,
            "tools/call",
            {
                "name": "test_input_required_result_tampered_state",
                "arguments": {},
                "inputResponses": {"confirm": elicit_answer(ok=True)},
                "requestState": tamper(first["requestState"]),
            },
        )
    assert (caught.value.code, caught.value.data) == (-32602, {"reason": "invalid_request_state"})


async def test_intact_state_verifies(client):
    second = await two_rounds(
        client,
        "test_input_required_result_tampered_state",
        {"confirm": CONFIRM_REQUEST},
        {"confirm": elicit_answer(ok=True)},
    )
    assert_complete_text(second, "integrity-ok: state verified")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/call", {"name": "test_input_required_result_elicitation", "arguments": {}}),  # another tool
        ("prompts/get", {"name": "test_input_required_result_prompt"}),  # another method
    ],
)
async def test_state_is_bound_to_its_request(client, method, params):
    first = await raw(client, "tools/call", {"name": "test_input_required_result_tampered_state", "arguments": {}})
    with pytest.raises(MCPError) as caught:
        await raw(client, method, {**params, "requestState": first["requestState"]})
    assert caught.value.code == -32602


async def test_state_is_bound_to_the_arguments(client):
    """A state issued for one call of test_elicitation is no good for a call with another message."""
    first = await raw(client, "tools/call", {"name": "test_elicitation", "arguments": {"message": "a"}})
    assert list(first["inputRequests"]) == ["elicitation-1"]
    answer = {"elicitation-1": elicit_answer(username="u", email="e")}
    retry = {"name": "test_elicitation", "inputResponses": answer, "requestState": first["requestState"]}
    with pytest.raises(MCPError) as caught:
        await raw(client, "tools/call", {**retry, "arguments": {"message": "b"}})
    assert caught.value.code == -32602
    done = await raw(client, "tools/call", {**retry, "arguments": {"message": "a"}})
    assert_complete_text(done, 'User response: action=accept, content={"username":"u","email":"e"}')


async def test_state_of_another_server_is_rejected():
    """Each build_server() seals with its own random key unless given one."""
    async with connect(MODERN) as one, connect(MODERN) as other:
        first = await raw(one, "tools/call", {"name": "test_input_required_result_tampered_state", "arguments": {}})
        params = {
            "name": "test_input_required_result_tampered_state",
            "arguments": {},
            "inputResponses": {"confirm": elicit_answer(ok=True)},
            "requestState": first["requestState"],
        }
        with pytest.raises(MCPError) as caught:
            await raw(other, "tools/call", params)
        assert caught.value.code == -32602
        assert_complete_text(await raw(one, "tools/call", params), "integrity-ok: state verified")


async def test_a_shared_state_key_lets_another_process_continue():
    config = Config(state_key=b"k" * 32)
    async with connect(MODERN, server=build_server(config)) as one:
        async with connect(MODERN, server=build_server(config)) as other:
            first = await raw(one, "tools/call", {"name": "test_input_required_result_request_state", "arguments": {}})
            params = {
                "name": "test_input_required_result_request_state",
                "arguments": {},
                "inputResponses": {"confirm": elicit_answer(ok=True)},
                "requestState": first["requestState"],
            }
            assert_complete_text(
                await raw(other, "tools/call", params), "state-ok: requestState validated in round 2, ok=true"
            )


# ----------------------------------------------------------------------------------------- capabilities


@pytest.mark.parametrize(
    ("tool", "needed"),
    [
        ("test_missing_capability", "sampling"),
        ("test_input_required_result_elicitation", "elicitation"),
        ("test_input_required_result_sampling", "sampling"),
        ("test_input_required_result_list_roots", "roots"),
        ("test_sampling", "sampling"),
        ("test_elicitation", "elicitation"),
    ],
)
async def test_missing_capability_is_32021(client, tool, needed):
    arguments = {"prompt": "p"} if tool == "test_sampling" else {"message": "m"} if tool == "test_elicitation" else {}
    with pytest.raises(MCPError) as caught:
        await raw(client, "tools/call", {"name": tool, "arguments": arguments}, capabilities={})
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {needed: {}}}


async def test_multiple_inputs_name_every_missing_capability(client):
    with pytest.raises(MCPError) as caught:
        await raw(
            client, "tools/call", {"name": "test_input_required_result_multiple_inputs", "arguments": {}}, {"roots": {}}
        )
    assert caught.value.code == -32021
    assert caught.value.data == {"requiredCapabilities": {"elicitation": {}, "sampling": {}}}


async def test_missing_capability_succeeds_with_sampling(client):
    second = await two_rounds(
        client,
        "test_missing_capability",
        {"sampling-1": sampling("Say hello.", 20)},
        {"sampling-1": SAMPLING_ANSWER},
        capabilities={"sampling": {}},
    )
    assert_complete_text(second, "Success: The capital of France is Paris.")


@pytest.mark.parametrize(
    ("capabilities", "keys"),
    [
        ({"sampling": {}}, ["sample_input"]),  # the suite's capability-check
        ({"elicitation": {}}, ["elicit_input"]),
        ({"roots": {}}, ["roots_input"]),
        (
            {"sampling": {}, "elicitation": {}, "roots": {"listChanged": True}},
            ["elicit_input", "sample_input", "roots_input"],
        ),
    ],
)
async def test_capabilities_asks_only_for_what_was_declared(client, capabilities, keys):
    every = {
        "elicit_input": elicitation("Elicitation input", "value", "string"),
        "sample_input": sampling("Sample request", 50),
        "roots_input": ROOTS_REQUEST,
    }
    answers = {"elicit_input": elicit_answer(value="v"), "sample_input": SAMPLING_ANSWER, "roots_input": {"roots": []}}
    second = await two_rounds(
        client,
        "test_input_required_result_capabilities",
        {key: every[key] for key in keys},
        {key: answers[key] for key in keys},
        capabilities=capabilities,
    )
    assert_complete_text(second, f"capabilities-ok: received {','.join(keys)}")


async def test_capabilities_without_any_completes_at_once(client):
    result = await raw(client, "tools/call", {"name": "test_input_required_result_capabilities", "arguments": {}}, {})
    assert_complete_text(result, "No supported capabilities declared")


# ------------------------------------------------------------------------------- streaming elicitation


async def test_streaming_elicitation_sends_progress_then_input_required_and_no_request():
    recorder = Recorder()
    progress = []
    async with connect(MODERN, recorder) as client:
        meta = envelope({"elicitation": {}})
        with anyio.fail_after(QUICK):
            first = await client.session.request(
                "tools/call",
                {"name": "test_streaming_elicitation", "arguments": {}, "_meta": meta},
                on_progress=lambda *report: progress.append(report),
            )
            assert_input_required(first, {"continue": elicitation("Continue streaming?", "continue", "boolean")})
            assert progress == [(50, 100, "Waiting for the user")]
            second = await client.session.request(
                "tools/call",
                {
                    "name": "test_streaming_elicitation",
                    "arguments": {},
                    "inputResponses": {"continue": elicit_answer(**{"continue": True})},
                    "requestState": first["requestState"],
                    "_meta": meta,
                },
                on_progress=lambda *report: progress.append(report),
            )
    assert_complete_text(second, 'Streaming complete: action=accept, content={"continue":true}')
    assert progress[1:] == [(50, 100, "Waiting for the user"), (100, 100, "Answer received")]
    assert recorder.asked == []  # the server never sent a request of its own
    assert recorder.notifications == []  # nor any notification but the progress reports


# ---------------------------------------------------------------------------- end to end, both eras

E2E = [
    ("test_input_required_result_elicitation", "Hello, Alice!", [NAME_REQUEST]),
    (
        "test_input_required_result_sampling",
        "Sampling result: The capital of France is Paris.",
        [sampling("What is the capital of France?", 100)],
    ),
    ("test_input_required_result_list_roots", "Found 1 root(s): file:///test/root", []),
    ("test_input_required_result_request_state", None, [CONFIRM_REQUEST]),
    (
        "test_input_required_result_multiple_inputs",
        "Name: Alice; Greeting: The capital of France is Paris.; Roots: 1",
        None,
    ),
    (
        "test_input_required_result_multi_round",
        "Multi-round complete for Alice who likes blue",
        [
            elicitation("Step 1: What is your name?", "name", "string"),
            elicitation("Step 2: What is your favorite color?", "color", "string"),
        ],
    ),
    ("test_input_required_result_tampered_state", "integrity-ok: state verified", [CONFIRM_REQUEST]),
    (
        "test_input_required_result_capabilities",
        "capabilities-ok: received elicit_input,sample_input,roots_input",
        None,
    ),
    ("test_missing_capability", "Success: The capital of France is Paris.", [sampling("Say hello.", 20)]),
    (
        "test_streaming_elicitation",
        'Streaming complete: action=accept, content={"continue":true}',
        [elicitation("Continue streaming?", "continue", "boolean")],
    ),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("tool", "text", "asked"), E2E)
async def test_input_tools_end_to_end(era, tool, text, asked):
    """The same handler in both eras: legacy sends requests, 2026-07-28 answers input_required; the
    client's callbacks see the same questions and the tool gives the same answer."""
    recorder = Recorder()
    recorder.elicitation_answer = fill_form
    async with connect(era, recorder) as client:
        with anyio.fail_after(QUICK):
            result = await client.call_tool(tool, {})
    if text is None:  # the round counter differs: one round in legacy, two in 2026-07-28
        text = f"state-ok: requestState validated in round {1 if era == LEGACY else 2}, ok=true"
    assert only_text(result) == text
    if asked is not None:
        assert [{"method": method, "params": params} for method, params in recorder.asked] == asked


@pytest.mark.parametrize("era", ERAS)
async def test_input_prompt_end_to_end(era):
    recorder = Recorder()
    recorder.elicitation_answer = fill_form
    async with connect(era, recorder) as client:
        with anyio.fail_after(QUICK):
            result = await client.get_prompt("test_input_required_result_prompt")
    assert result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Prompt with context: test context"}}
    ]
    assert recorder.asked == [
        ("elicitation/create", elicitation("What context should the prompt use?", "context", "string")["params"])
    ]


async def test_legacy_missing_capability_is_an_error_naming_it():
    """Legacy has no -32021; the core answers -32600 with the same requiredCapabilities data."""
    async with connect(LEGACY, sampling=False) as client:
        with pytest.raises(MCPError) as caught, anyio.fail_after(QUICK):
            await client.call_tool("test_missing_capability", {})
    assert caught.value.code == -32600
    assert caught.value.data == {"requiredCapabilities": {"sampling": {}}}
