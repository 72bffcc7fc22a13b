"""What real small models wrote (issue 28, recorded against llama-server with SmolLM2-135M and Gemma 3 270M),
replayed through the stand-in model and the real sqlite server: each turn below is the shape a real turn had.
One test per defect of issue 28, items 4 and 5."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from plainmcp_bridge.agent import ANSWERED, GAVE_UP, NO_TOOL, TRUNCATED, BridgeOptions
from plainmcp_bridge.chat_apis import OLLAMA, StreamReader
from plainmcp_bridge.constrain import CALLING_RULE, answer_text, union_schema
from plainmcp_bridge.prompt import TEXT_CALLS, build_system_prompt
from plainmcp_bridge.recover import first_call

from .test_agent import SAMPLE, Recorder, bridge, call, last_messages
from .tools import ALL

pytestmark = pytest.mark.anyio


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    shutil.copy(SAMPLE, path)
    return path


#: Gemma 3 270M's turn (shape recorded): a call, then the dialogue it imagined, with the call repeated.
HALLUCINATED = (
    '<tool_call>{"name": "list_tables", "arguments": {}}</tool_call>\n'
    "Result of list_tables: customers, orders\n"
    '<tool_call>{"name": "list_tables", "arguments": {}}</tool_call>\n'
    "user: and the books?\n"
    '<tool_call>{"name": "describe_table", "arguments": {"table": "books"}}</tool_call>\n'
    "The database has 1000 customers."
)


def test_recovery_takes_the_first_call_and_cuts_what_follows() -> None:
    found, before, more = first_call("Let me look.\n" + HALLUCINATED)
    assert found is not None and found.name == "list_tables"
    assert before.startswith("Let me look.") and before.endswith("</tool_call>") and more == 2


async def test_imagined_dialogue_after_a_call_is_not_run(database: Path) -> None:
    hooks = Recorder()
    script = [{"text": HALLUCINATED}, {"text": "The tables are listed above."}]
    async with bridge(database, script, hooks=hooks) as (conversation, model):
        outcome = await conversation.ask("Which tables are there?")
    assert outcome.status == ANSWERED and outcome.tool_results == 1
    assert hooks.kinds().count("call") == 1
    assert conversation.counters["cut_after_first"] == 2 and conversation.counters["ran"] == 1
    # What the model is told holds the one real result, not the imagined "1000 customers".
    told = last_messages(model)[-1]["content"]
    assert "Result of list_tables" in told and "1000 customers" not in json.dumps(last_messages(model))


async def test_an_identical_call_is_refused_within_a_question(database: Path) -> None:
    hooks = Recorder()
    again = call("describe_table", {"table": "books"})
    async with bridge(database, [again, again, {"text": "done"}], hooks=hooks) as (conversation, model):
        outcome = await conversation.ask("books?")
    assert outcome.status == ANSWERED
    assert hooks.kinds().count("call") == 1 and conversation.counters["repeated"] == 1
    assert "already called describe_table" in last_messages(model)[-1]["content"]


async def test_a_call_cut_at_the_length_limit_gets_a_repair_message(database: Path) -> None:
    cut = {"text": '<tool_call>{"name": "describe_table", "arguments": {"tab', "finish": "length"}
    async with bridge(database, [cut, call("describe_table", {"table": "books"}), {"text": "ok"}]) as (
        conversation,
        model,
    ):
        outcome = await conversation.ask("books?")
    assert outcome.status == ANSWERED and outcome.tool_results == 1
    assert conversation.counters["truncated"] == 1 and conversation.counters["repaired"] == 1
    assert "cut off" in last_messages(model, 1)[-1]["content"]


async def test_an_answer_cut_at_the_length_limit_is_reported(database: Path) -> None:
    async with bridge(database, [{"text": "The tables are customers, or", "finish": "length"}]) as (conversation, _):
        outcome = await conversation.ask("tables?")
    assert outcome.status == TRUNCATED and conversation.counters["truncated"] == 1


async def test_prose_after_a_repair_message_is_not_an_answer(database: Path) -> None:
    script = [call("describe_table", {"name": "books"}), {"text": "There are 1000 customers."}]
    async with bridge(database, script) as (conversation, _):
        outcome = await conversation.ask("How many customers?")
    assert outcome.status == GAVE_UP and "1000" not in outcome.answer


async def test_an_answer_without_a_tool_is_counted_and_can_be_refused(database: Path) -> None:
    made_up = [{"text": "There are 1000 customers."}]
    async with bridge(database, list(made_up)) as (conversation, _):
        outcome = await conversation.ask("How many customers?")
    assert (outcome.status, outcome.tool_results) == (ANSWERED, 0)
    assert conversation.counters["answered_without_tool"] == 1
    async with bridge(database, list(made_up), options=BridgeOptions(require_tool=True)) as (conversation, _):
        outcome = await conversation.ask("How many customers?")
    assert outcome.status == NO_TOOL and "1000" not in outcome.answer


async def test_a_default_max_tokens_is_sent(database: Path) -> None:
    for api, key in (("openai", "max_tokens"), ("ollama", "num_predict")):
        async with bridge(database, [{"text": "hi"}], api=api) as (conversation, model):
            await conversation.ask("hi")
        body = model.requests[0][1]
        assert (body.get("options", body) if api == "ollama" else body)[key] == 1024


def test_ollama_calls_streamed_in_separate_chunks_get_distinct_ids() -> None:
    reader = StreamReader(OLLAMA)
    for name in ("list_tables", "describe_table"):
        chunk = {"message": {"content": "", "tool_calls": [{"function": {"name": name, "arguments": {}}}]}}
        reader.feed(json.dumps(chunk))
    reader.feed(json.dumps({"message": {"content": ""}, "done": True}))
    ids = [proposed.id for proposed in reader.turn().calls]
    assert len(set(ids)) == 2


async def test_split_ollama_calls_each_get_their_own_answer(database: Path) -> None:
    two = {
        "calls": [
            {"name": "list_tables", "arguments": {}},
            {"name": "describe_table", "arguments": {"table": "books"}},
        ],
        "split_calls": True,
    }
    async with bridge(database, [two, {"text": "ok"}]) as (conversation, model):
        await conversation.ask("tables and books?")
    answers = [m for m in last_messages(model) if m["role"] == "tool"]
    assert [m["tool_name"] for m in answers] == ["list_tables", "describe_table"]
    assert "books" in answers[0]["content"] and "title" in answers[1]["content"]


async def test_a_declined_call_is_never_shown_as_a_call(database: Path) -> None:
    hooks = Recorder(answer=False)
    insert = call("execute", {"sql": "INSERT INTO authors (name, country) VALUES ('A', 'B')"})
    async with bridge(database, [insert, {"text": "not done"}], hooks=hooks) as (conversation, _):
        await conversation.ask("add an author")
    assert "declined" in hooks.kinds() and "call" not in hooks.kinds()


def test_the_generated_prompt_says_how_to_write_a_call_the_recovery_reads() -> None:
    prompt = build_system_prompt(ALL)
    assert TEXT_CALLS in prompt
    example = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    found, _, _ = first_call(example)
    assert found is not None and found.name == "get_time"
    assert CALLING_RULE in build_system_prompt(ALL, calling=CALLING_RULE)


def test_a_constrained_answer_is_unwrapped_and_a_constrained_call_recovered() -> None:
    assert answer_text('{"answer": "five tables"}') == "five tables"
    text = answer_text('{"name": "get_time", "arguments": {}}')
    found, _, _ = first_call(text)
    assert found is not None and found.name == "get_time"
    names = [branch["properties"].get("name", {}).get("const") for branch in union_schema(ALL)["anyOf"]]
    assert names == ["get_forecast", "plan_route", "delete_file", "get_time", None]


def test_eval_from_log_replays_a_recorded_session(database: Path, tmp_path: Path) -> None:
    from plainmcp_bridge.standin import StandInModel

    from .test_cli import run, server

    log = tmp_path / "session.jsonl"
    wrong = {"text": '<tool_call>{"name": "describe_table", "arguments": {"table": 5}}</tool_call>'}
    script = [wrong, call("describe_table", {"table": "books"}), {"text": "seven columns"}]
    with StandInModel(script) as model:
        assert run(model, "ask", "books?", "--server", server(database), "--log", str(log)).returncode == 0
        replay = run(model, "eval", "--from-log", str(log), "--json")
    assert replay.returncode == 0, replay.stderr
    rates = json.loads(replay.stdout)
    # The raw first turn (a wrong type written as text) is refused; the repaired one accepted.
    assert rates["cases"] == 1 and rates["valid_without_repair_percent"] == 0.0
    assert rates["valid_with_repair_percent"] == 100.0 and rates["wrong_accepted"] == 0
