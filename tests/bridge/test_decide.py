"""The constrained modes' requests and the decision step (issue 28.2), through the stand-in model and the real
sqlite server. The model turns are the shapes SmolLM2-135M wrote against llama-server (recorded with --log):
a decision ``{ "tool": "answer in words" }`` with llama.cpp's whitespace, a compact call under the GBNF grammar.
What each request carries is read back from the stand-in (what a vLLM or llama.cpp server would be sent);
vLLM's named ``tool_choice`` is untested against a real vLLM (there is none here)."""

from __future__ import annotations

import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from plainmcp_bridge.agent import ANSWERED, Bridge, BridgeOptions, decided_tool
from plainmcp_bridge.constrain import (
    CALL,
    DECIDE,
    DECISION,
    GRAMMAR,
    IN_WORDS,
    TOOL_CHOICE,
    grammar_safe,
    request_fields,
)
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.standin import StandInModel
from plainmcp_bridge.toolbox import open_toolbox

from .test_agent import SAMPLE, Recorder

pytestmark = pytest.mark.anyio

#: Recorded (SmolLM2-135M, llama-server 11434.0.0, --constrain decide / grammar, 2026-12-02).
DECIDED_IN_WORDS = '{ "tool": "answer in words" }'
COMPACT_CALL = '{"name":"describe_table","arguments":{"table":"books"}}'
DESCRIBE = {
    "name": "describe_table",
    "description": "Describe a table",
    "inputSchema": {
        "type": "object",
        "properties": {"table": {"type": "string", "minLength": 1, "pattern": "^[A-Za-z_]+$"}},
        "required": ["table"],
        "additionalProperties": False,
    },
}


@asynccontextmanager
async def constrained(tmp_path: Path, script: list[dict[str, Any]], mode: str) -> AsyncIterator[tuple[Bridge, Any]]:
    database = tmp_path / "shop.db"
    shutil.copy(SAMPLE, database)
    spec = ServerSpec("sqlite", command=(sys.executable, "-m", "plainmcp_sqlite", "--db", str(database)))
    with StandInModel(script) as model:
        settings = ModelSettings(
            api="openai", model="standin", base_url=model.url + "/v1", constrain=mode, retry=RetryPolicy(base=0.01)
        )
        async with open_toolbox([spec], stderr="discard") as toolbox, ChatModel(settings) as chat:
            yield Bridge(toolbox, chat, BridgeOptions(), Recorder()), model


def schema_of(body: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = body["response_format"]["json_schema"]["schema"]
    return schema


async def test_decide_asks_the_choice_then_holds_the_turn_to_the_chosen_tool(tmp_path: Path) -> None:
    script = [
        {"text": '{ "tool": "describe_table" }'},
        {"text": COMPACT_CALL},
        {"text": DECIDED_IN_WORDS},
        {"text": '{"answer": "The books table has columns: id, title, author_id."}'},
    ]
    async with constrained(tmp_path, script, DECIDE) as (conversation, model):
        outcome = await conversation.ask("What columns does the books table have?")
        history = conversation.messages
    assert (outcome.status, outcome.tool_results) == (ANSWERED, 1)
    assert outcome.answer == "The books table has columns: id, title, author_id."
    bodies = [body for _, body in model.requests]
    assert len(bodies) == 4
    # 1: the choice, asked after the conversation: every tool's name and the answer in words, nothing else.
    choice = schema_of(bodies[0])
    names = choice["properties"]["tool"]["enum"]
    assert names[-1] == IN_WORDS and "describe_table" in names and len(names) == 7
    assert bodies[0]["messages"][-1] == {"role": "user", "content": DECISION}
    # 2: the call of the chosen tool alone (no answer branch, no other tool), without the decision question.
    call = schema_of(bodies[1])
    assert [branch["properties"]["name"] for branch in call["anyOf"]] == [{"const": "describe_table"}]
    assert all(message["content"] != DECISION for message in bodies[1]["messages"])
    # 4: after the decision for words, the answer branch alone.
    assert schema_of(bodies[3]) == {"anyOf": [schema_of(bodies[3])["anyOf"][0]]}
    assert list(schema_of(bodies[3])["anyOf"][0]["properties"]) == ["answer"]
    # The decision question is never kept in the conversation.
    assert all(message.get("content") != DECISION for message in history)
    assert [e["tool"] for e in conversation.hooks.events if e["type"] == "decision"] == ["describe_table", IN_WORDS]  # type: ignore[attr-defined]


async def test_decide_falls_back_to_one_turn_when_the_choice_is_unreadable(tmp_path: Path) -> None:
    script = [{"text": "describe_table please"}, {"text": '{"answer": "No idea."}'}]
    async with constrained(tmp_path, script, DECIDE) as (conversation, model):
        outcome = await conversation.ask("What columns does the books table have?")
    assert outcome.status == ANSWERED and outcome.answer == "No idea."
    fallback = schema_of(model.requests[1][1])
    assert len(fallback["anyOf"]) == 7  # six tools and the answer: the undivided turn


def test_decided_tool_reads_recorded_choices_and_refuses_others() -> None:
    names = ["describe_table", "list_tables"]
    assert decided_tool(DECIDED_IN_WORDS, names) == IN_WORDS
    assert decided_tool('{"tool":"list_tables"}', names) == "list_tables"
    assert decided_tool('{"tool":"drop_table"}', names) is None
    assert decided_tool('{"tool": ["list_tables"]}', names) is None
    assert decided_tool("[" * 100000, names) is None


async def test_grammar_mode_sends_a_gbnf_grammar_and_reads_a_compact_call(tmp_path: Path) -> None:
    script = [{"text": COMPACT_CALL}, {"text": '{"answer":"The books table has columns "}'}]
    async with constrained(tmp_path, script, GRAMMAR) as (conversation, model):
        outcome = await conversation.ask("What columns does the books table have?")
    assert (outcome.status, outcome.tool_results) == (ANSWERED, 1)
    body = model.requests[0][1]
    assert body["grammar"].startswith("root ::= ") and '"\\"describe_table\\""' in body["grammar"]
    # No JSON Schema, no whitespace biases (the grammar has no whitespace), no API tools.
    assert "response_format" not in body and "logit_bias" not in body and "tools" not in body


def test_tool_choice_sends_vllms_named_function_call() -> None:
    # vLLM documents a named tool_choice as held to the tool's parameter schema by structured outputs.
    fields = request_fields("openai", [DESCRIBE], shape=CALL, mode=TOOL_CHOICE)
    assert fields == {
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "describe_table",
                    "description": "Describe a table",
                    "parameters": grammar_safe(DESCRIBE["inputSchema"]),
                },
            }
        ],
        "tool_choice": {"type": "function", "function": {"name": "describe_table"}},
    }
    assert "pattern" not in str(fields["tools"]) and "required" in fields["tools"][0]["function"]["parameters"]
    # Several tools to choose among: "required" (at least one call, each held to its schema).
    assert (
        request_fields("openai", [DESCRIBE, {**DESCRIBE, "name": "other"}], shape=CALL, mode=TOOL_CHOICE)["tool_choice"]
        == "required"
    )


async def test_tool_choice_runs_the_structured_call_of_the_decided_tool(tmp_path: Path) -> None:
    script: list[dict[str, Any]] = [
        {"text": '{"tool":"describe_table"}'},
        {"calls": [{"name": "describe_table", "arguments": '{"table": "books"}'}]},
        {"text": DECIDED_IN_WORDS},
        {"text": '{"answer": "id, title and author_id, among others."}'},
    ]
    async with constrained(tmp_path, script, TOOL_CHOICE) as (conversation, model):
        outcome = await conversation.ask("What columns does the books table have?")
    assert (outcome.status, outcome.tool_results) == (ANSWERED, 1)
    decision, call, _, answer = (body for _, body in model.requests)
    assert "tools" not in decision and "tool_choice" not in decision
    assert call["tool_choice"] == {"type": "function", "function": {"name": "describe_table"}}
    assert [tool["function"]["name"] for tool in call["tools"]] == ["describe_table"]
    assert "response_format" not in call
    # The structured call's result goes back with its id, as the API wants.
    assert answer["messages"][-1]["role"] == "tool" and "tool_call_id" in answer["messages"][-1]
