"""The model client against the stand-in over real HTTP: both APIs, streamed and not, retries (connection
errors, 429 with Retry-After, 5xx), the turn deadline, cancellation, and what the model is sent."""

from __future__ import annotations

import socket

import anyio
import pytest
from plainmcp_bridge.chat_apis import MAX_DESCRIPTION, ModelError, render_message, request_body
from plainmcp_bridge.models import MAX_ANSWER_BYTES, ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy, parse_retry_after
from plainmcp_bridge.standin import StandInModel

from .tools import FORECAST

pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "Weather in Paris?"}]
FAST = RetryPolicy(attempts=3, base=0.01)


def settings(model: StandInModel, api: str, stream: bool, **options: object) -> ModelSettings:
    base = model.url if api == "ollama" else model.url + "/v1"
    return ModelSettings(
        api=api, model="standin", base_url=base, stream=stream, retry=options.pop("retry", FAST), **options
    )  # type: ignore[arg-type]


BOTH = pytest.mark.parametrize(
    ("api", "stream"), [("ollama", True), ("ollama", False), ("openai", True), ("openai", False)]
)


@BOTH
async def test_text_and_calls_come_back(api: str, stream: bool) -> None:
    reply = {"text": "Checking the forecast now.", "calls": [{"name": "get_forecast", "arguments": {"city": "Paris"}}]}
    with StandInModel([reply]) as model:
        fragments: list[str] = []
        async with ChatModel(settings(model, api, stream)) as chat:
            turn = await chat.complete(USER, [FORECAST], on_text=fragments.append)
    assert turn.text == "Checking the forecast now."
    (call,) = turn.calls
    assert call.name == "get_forecast"
    # Ollama sends an object; OpenAI-compatible servers a string holding JSON: the interceptor parses it.
    assert call.arguments == ({"city": "Paris"} if api == "ollama" else '{"city": "Paris"}')
    assert call.id
    if stream:
        assert len(fragments) > 1 and "".join(fragments) == turn.text


@BOTH
async def test_the_tools_schema_reaches_the_model_verbatim(api: str, stream: bool) -> None:
    # The official ollama client would drop minimum/maximum/additionalProperties here (models.py says why).
    with StandInModel([{"text": "ok"}]) as model:
        async with ChatModel(settings(model, api, stream, options={"temperature": 0})) as chat:
            await chat.complete(USER, [FORECAST])
    (_, body) = model.requests[0]
    (tool,) = body["tools"]
    assert tool == {
        "type": "function",
        "function": {
            "name": "get_forecast",
            "description": FORECAST["description"],
            "parameters": FORECAST["inputSchema"],
        },
    }
    assert body["stream"] is stream and body["messages"] == USER
    assert (body["options"] if api == "ollama" else body)["temperature"] == 0


async def test_stringified_arguments_survive_streaming_fragments() -> None:
    broken = '{"city": "Paris", "days": "3"'  # cut short, as a small model ends it
    with StandInModel([{"calls": [{"name": "get_forecast", "arguments": broken}]}]) as model:
        async with ChatModel(settings(model, "openai", True)) as chat:
            turn = await chat.complete(USER, [FORECAST])
    assert [(call.name, call.arguments) for call in turn.calls] == [("get_forecast", broken)]


@pytest.mark.parametrize("api", ["ollama", "openai"])
async def test_429_waits_as_retry_after_says(api: str) -> None:
    with StandInModel([{"status": 429, "error": "busy", "retry_after": "1"}, {"text": "done"}]) as model:
        async with ChatModel(settings(model, api, True)) as chat:
            turn = await chat.complete(USER)
            assert turn.text == "done"
            assert (chat.last_attempts, chat.last_waits) == (2, [1.0])


async def test_retry_after_longer_than_allowed_is_reported_not_waited() -> None:
    with StandInModel([{"status": 503, "error": "overloaded", "retry_after": "3600"}]) as model:
        async with ChatModel(settings(model, "openai", False)) as chat:
            with pytest.raises(ModelError, match=r"busy \(HTTP 503: overloaded\) and asks to wait longer than 30 s"):
                await chat.complete(USER)
            assert chat.last_waits == []


@pytest.mark.parametrize("api", ["ollama", "openai"])
async def test_5xx_is_retried_with_backoff_then_reported(api: str) -> None:
    failing = {"status": 500, "error": "model crashed"}
    with StandInModel([failing, {"text": "recovered"}, failing, failing, failing]) as model:
        async with ChatModel(settings(model, api, True)) as chat:
            assert (await chat.complete(USER)).text == "recovered"
            assert chat.last_attempts == 2 and 0.005 <= chat.last_waits[0] <= 0.01
            with pytest.raises(ModelError, match=r"failed after 3 tries: HTTP 500: model crashed") as raised:
                await chat.complete(USER)
            assert raised.value.status == 500
            # Exponential: the second wait is three times the first's range.
            assert 0.015 <= chat.last_waits[1] <= 0.03


async def test_client_errors_are_not_retried() -> None:
    with StandInModel([{"status": 404, "error": "model 'nope' not found"}]) as model:
        async with ChatModel(settings(model, "ollama", False)) as chat:
            with pytest.raises(ModelError, match=r"^the model endpoint answered HTTP 404: model 'nope' not found$"):
                await chat.complete(USER)
            assert chat.last_attempts == 1


async def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # nothing listens once the socket closes
    chat_settings = ModelSettings(api="ollama", model="m", base_url=f"http://127.0.0.1:{port}", retry=FAST)
    async with ChatModel(chat_settings) as chat:
        with pytest.raises(ModelError, match="failed after 3 tries: cannot connect"):
            await chat.complete(USER)
        assert len(chat.last_waits) == 2


async def test_a_dropped_connection_is_retried() -> None:
    with StandInModel([{"drop": True}, {"text": "second try"}]) as model:
        async with ChatModel(settings(model, "openai", True)) as chat:
            assert (await chat.complete(USER)).text == "second try"
            assert chat.last_attempts == 2


async def test_a_stream_cut_after_text_reached_the_user_is_not_replayed() -> None:
    with StandInModel([{"text": "a long answer that is cut", "cut_after": 2}, {"text": "never asked"}]) as model:
        shown: list[str] = []
        async with ChatModel(settings(model, "ollama", True)) as chat:
            with pytest.raises(ModelError, match="broke off: the stream ended before its end marker"):
                await chat.complete(USER, on_text=shown.append)
        assert shown and len(model.requests) == 1


async def test_an_error_inside_the_stream_is_reported() -> None:
    with StandInModel([{"status": 400, "error": "context too long"}]) as model:
        async with ChatModel(settings(model, "openai", True)) as chat:
            with pytest.raises(ModelError, match="HTTP 400: context too long"):
                await chat.complete(USER)


async def _wait_for_disconnect(model: StandInModel) -> None:
    for _ in range(100):
        if model.disconnects:
            return
        await anyio.sleep(0.02)


async def test_the_turn_deadline_covers_a_slow_stream_and_closes_it() -> None:
    slow = {"text": "word " * 40, "chunk_delay": 0.2}
    with StandInModel([slow]) as model:
        async with ChatModel(settings(model, "ollama", True, turn_timeout=0.5)) as chat:
            with pytest.raises(ModelError, match=r"^the model did not answer within 0.5 s$"):
                await chat.complete(USER)
        await _wait_for_disconnect(model)
        assert model.disconnects == 1


async def test_cancelling_the_turn_closes_the_request() -> None:
    slow = {"text": "word " * 40, "chunk_delay": 0.2}
    with StandInModel([slow]) as model:
        async with ChatModel(settings(model, "openai", True)) as chat:
            with anyio.move_on_after(0.3) as scope:
                await chat.complete(USER)
            assert scope.cancelled_caught
        await _wait_for_disconnect(model)
        assert model.disconnects == 1


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="one of ollama, openai"):
        ModelSettings(api="anthropic")
    with pytest.raises(ValueError):
        ModelSettings(turn_timeout=0)
    assert ModelSettings().url == "http://127.0.0.1:11434/api/chat"
    assert ModelSettings(api="openai").url == "http://127.0.0.1:11434/v1/chat/completions"


def test_history_is_rendered_for_each_api() -> None:
    assistant = {
        "role": "assistant",
        "content": "",
        "calls": [{"id": "c1", "name": "get_forecast", "arguments": '{"city": "Paris"}'}],
    }
    result = {"role": "tool", "call_id": "c1", "name": "get_forecast", "content": "21 C"}
    assert render_message("ollama", assistant) == {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": "get_forecast", "arguments": {"city": "Paris"}}}],
    }
    assert render_message("openai", assistant) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_forecast", "arguments": '{"city": "Paris"}'}}
        ],
    }
    assert render_message("ollama", result) == {"role": "tool", "content": "21 C", "tool_name": "get_forecast"}
    assert render_message("openai", result) == {"role": "tool", "content": "21 C", "tool_call_id": "c1"}
    # Ollama takes only an object: arguments that were not one are replayed empty.
    broken = {**assistant, "calls": [{"id": "c1", "name": "x", "arguments": '{"city": '}]}
    assert render_message("ollama", broken)["tool_calls"][0]["function"]["arguments"] == {}


def test_retry_after_and_backoff() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None
    policy = RetryPolicy(attempts=3, base=0.1, factor=3.0)
    assert 0.05 <= policy.backoff(1) <= 0.1 and 0.15 <= policy.backoff(2) <= 0.3
    assert policy.delay(3, None) is None  # three tries spent
    assert policy.delay(1, "2") == 2.0 and policy.delay(1, "31") is None


@BOTH
async def test_an_endless_answer_is_cut_off_at_the_bound_not_held(api: str, stream: bool) -> None:
    # One 64 MiB line with no end: refused once 4 MiB arrived, and the connection is closed, so the
    # endpoint could send little more than that (the rest of what it wrote sat in socket buffers).
    with StandInModel([{"flood": 64 * 1024 * 1024}]) as model:
        async with ChatModel(settings(model, api, stream)) as chat:
            with pytest.raises(ModelError, match=f"exceeded {MAX_ANSWER_BYTES} bytes"):
                await chat.complete(USER)
        sent = -1
        for _ in range(100):  # until the endpoint's writing stopped (it sees the closed connection)
            if model.flood_sent == sent:
                break
            sent = model.flood_sent
            await anyio.sleep(0.05)
    assert MAX_ANSWER_BYTES < model.flood_sent < 4 * MAX_ANSWER_BYTES


def test_a_servers_long_description_is_cut_in_the_request() -> None:
    tool = {**FORECAST, "description": "d" * 5000}
    (function,) = request_body("openai", "m", USER, [tool], stream=False)["tools"]
    assert function["function"]["description"] == "d" * MAX_DESCRIPTION
    assert function["function"]["parameters"] == FORECAST["inputSchema"]


def test_ollama_request_fields_and_model_options_go_where_the_api_wants_them() -> None:
    options = {"temperature": 0, "num_ctx": 8192, "keep_alive": "10m", "think": False}
    ollama_body = request_body("ollama", "m", USER, [], stream=True, options=options)
    assert ollama_body["options"] == {"temperature": 0, "num_ctx": 8192}
    assert (ollama_body["keep_alive"], ollama_body["think"]) == ("10m", False)
    assert "tools" not in ollama_body  # no tools: no empty list a server might refuse
    openai_body = request_body("openai", "m", USER, [], stream=False, options={"temperature": 0, "max_tokens": 50})
    assert (openai_body["temperature"], openai_body["max_tokens"]) == (0, 50) and "options" not in openai_body
