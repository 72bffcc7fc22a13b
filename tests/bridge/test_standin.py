"""The stand-in model speaks both APIs as the official clients read them: their own types parse every shape
it sends (streamed and not, text and tool calls, errors), so it cannot drift from the real APIs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import ollama
import openai
import pytest
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from plainmcp_bridge.standin import StandInModel, stream_lines, whole_answer

ANSWER = {"text": "Let me look that up for you.", "calls": [{"name": "get_forecast", "arguments": {"city": "Paris"}}]}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]


def test_ollama_client_reads_whole_and_streamed_answers() -> None:
    with StandInModel([ANSWER, ANSWER]) as model:
        client = ollama.Client(host=model.url)
        whole = client.chat(model="standin", messages=MESSAGES, stream=False)
        assert whole.message.content == ANSWER["text"] and whole.done
        (call,) = whole.message.tool_calls or []
        assert (call.function.name, dict(call.function.arguments)) == ("get_forecast", {"city": "Paris"})
        chunks = list(client.chat(model="standin", messages=MESSAGES, stream=True))
        assert "".join(chunk.message.content or "" for chunk in chunks) == ANSWER["text"]
        assert chunks[-1].done and not any(chunk.done for chunk in chunks[:-1])
        assert [c.function.name for chunk in chunks for c in chunk.message.tool_calls or []] == ["get_forecast"]
        assert [path for path, _ in model.requests] == ["/api/chat", "/api/chat"]


def test_openai_client_reads_whole_and_streamed_answers() -> None:
    with StandInModel([ANSWER, ANSWER]) as model:
        client = openai.OpenAI(base_url=model.url + "/v1", api_key="unused", max_retries=0)
        whole = client.chat.completions.create(model="standin", messages=MESSAGES)  # type: ignore[arg-type]
        message = whole.choices[0].message
        assert message.content == ANSWER["text"] and whole.choices[0].finish_reason == "tool_calls"
        (call,) = message.tool_calls or []
        assert call.function.name == "get_forecast"  # type: ignore[union-attr]
        assert json.loads(call.function.arguments) == {"city": "Paris"}  # type: ignore[union-attr]
        stream = client.chat.completions.create(model="standin", messages=MESSAGES, stream=True)  # type: ignore[arg-type]
        text, arguments = "", ""
        for chunk in stream:
            delta = chunk.choices[0].delta
            text += delta.content or ""
            arguments += "".join(c.function.arguments or "" for c in delta.tool_calls or [] if c.function)
        assert text == ANSWER["text"] and json.loads(arguments) == {"city": "Paris"}


def test_error_answers_are_the_apis_error_shapes() -> None:
    error = {"status": 429, "error": "slow down", "retry_after": "7"}
    with StandInModel([error, error]) as model:
        with pytest.raises(ollama.ResponseError) as raised:
            ollama.Client(host=model.url).chat(model="standin", messages=MESSAGES, stream=False)
        assert (raised.value.error, raised.value.status_code) == ("slow down", 429)
        client = openai.OpenAI(base_url=model.url + "/v1", api_key="unused", max_retries=0)
        with pytest.raises(openai.RateLimitError) as limited:
            client.chat.completions.create(model="standin", messages=MESSAGES)  # type: ignore[arg-type]
        assert limited.value.response.headers["retry-after"] == "7"
        assert limited.value.body == {"message": "slow down", "type": "server_error", "code": 429}


@pytest.mark.parametrize(
    "reply",
    [
        {"text": "plain"},
        {"calls": [{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"x": [1, 2]}}]},
        {
            "text": "",
            "calls": [{"name": "a", "arguments": '{"city": "Par'}],
        },  # a truncated string, as small models send
    ],
)
def test_every_shape_validates_against_the_official_types(reply: dict) -> None:
    ChatCompletion.model_validate(whole_answer("openai", reply))
    for line in stream_lines("openai", reply):
        payload = line.removeprefix("data: ").strip()
        if payload != "[DONE]":
            ChatCompletionChunk.model_validate_json(payload)
    if not any(isinstance(call.get("arguments"), str) for call in reply.get("calls", [])):
        # Ollama itself always sends an object (it parses the model's output): strings are OpenAI-only.
        ollama.ChatResponse.model_validate(whole_answer("ollama", reply))
        for line in stream_lines("ollama", reply):
            ollama.ChatResponse.model_validate_json(line)


def test_an_exhausted_script_is_a_client_error_nobody_retries() -> None:
    with StandInModel([]) as model:
        with pytest.raises(ollama.ResponseError) as raised:
            ollama.Client(host=model.url).chat(model="standin", messages=MESSAGES, stream=False)
        assert raised.value.status_code == 400 and "script is exhausted" in raised.value.error


def test_the_standin_runs_as_a_command(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hello from the script"}]), encoding="utf-8")
    process = subprocess.Popen(
        [sys.executable, "-m", "plainmcp_bridge.standin", str(script)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        answer = ollama.Client(host=url).chat(model="standin", messages=MESSAGES, stream=False)
        assert answer.message.content == "hello from the script"
    finally:
        process.terminate()
        process.wait(10)
