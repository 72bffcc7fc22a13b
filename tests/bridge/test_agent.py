"""The conversation loop with the stand-in model and the real sqlite server (on a copy of its sample database)
over stdio: the issue's scripted turns, from a valid call to giving up, the round limit and confirmation."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import plainmcp_sqlite
import pytest
from plainmcp_bridge.agent import ANSWERED, GAVE_UP, MODEL_FAILED, ROUND_LIMIT, Bridge, BridgeOptions, Hooks
from plainmcp_bridge.interceptor import ERROR_INSTRUCTION, ValidCall
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.standin import StandInModel
from plainmcp_bridge.toolbox import open_toolbox

pytestmark = pytest.mark.anyio

SAMPLE = Path(plainmcp_sqlite.__file__).parent / "sample" / "sample.db"
EVERYTHING = (sys.executable, "-m", "plainmcp_everything", "--log-level", "warning")


class Recorder(Hooks):
    def __init__(self, answer: bool = False) -> None:
        self.events: list[dict[str, Any]] = []
        self.asked: list[str] = []
        self.answer = answer
        self.shown: list[str] = []
        self.routes: list[tuple[str, str]] = []

    def text(self, fragment: str) -> None:
        self.shown.append(fragment)

    def event(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    async def confirm(self, call: ValidCall, tool: dict[str, Any], route: tuple[str, str] = ("", "")) -> bool:
        self.asked.append(call.name)
        self.routes.append(route)
        return self.answer

    def kinds(self) -> list[str]:
        return [event["type"] for event in self.events]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    shutil.copy(SAMPLE, path)
    return path


@asynccontextmanager
async def bridge(
    database: Path,
    script: list[dict[str, Any]],
    *,
    api: str = "ollama",
    hooks: Hooks | None = None,
    options: BridgeOptions | None = None,
    specs: list[ServerSpec] | None = None,
) -> AsyncIterator[tuple[Bridge, StandInModel]]:
    specs = specs or [
        ServerSpec(
            "sqlite",
            command=(
                sys.executable,
                "-m",
                "plainmcp_sqlite",
                "--db",
                str(database),
                "--allow-write",
                "--confirm-writes",
                "never",
                "--log-level",
                "warning",
            ),
        )
    ]
    with StandInModel(script) as model:
        base = model.url if api == "ollama" else model.url + "/v1"
        settings = ModelSettings(api=api, model="standin", base_url=base, retry=RetryPolicy(base=0.01))
        async with open_toolbox(specs, stderr="discard") as toolbox, ChatModel(settings) as chat:
            yield Bridge(toolbox, chat, options or BridgeOptions(), hooks or Hooks()), model


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


def last_messages(model: StandInModel, index: int = -1) -> list[dict[str, Any]]:
    return model.requests[index][1]["messages"]


async def test_a_valid_call_runs_and_its_result_reaches_the_model(database: Path) -> None:
    hooks = Recorder()
    script = [call("list_tables", {}), {"text": "There are five tables."}]
    async with bridge(database, script, hooks=hooks) as (conversation, model):
        outcome = await conversation.ask("Which tables are there?")
    assert (outcome.status, outcome.answer, outcome.rounds) == (ANSWERED, "There are five tables.", 1)
    tool_message = last_messages(model)[-1]
    assert tool_message["role"] == "tool" and tool_message["tool_name"] == "list_tables"
    assert "books" in tool_message["content"] and "order_items" in tool_message["content"]
    assert hooks.kinds() == ["user", "call", "result", "assistant"]
    assert hooks.asked == []  # read-only: no confirmation
    assert conversation.counters["valid_first_try"] == 1 and conversation.counters["proposed"] == 1
    # The system prompt describes the live tools in words.
    system = last_messages(model)[0]
    assert system["role"] == "system" and "describe_table: " in system["content"]


@pytest.mark.parametrize("api", ["ollama", "openai"])
async def test_wrong_types_are_repaired_after_the_repair_message(database: Path, api: str) -> None:
    script = [call("describe_table", {"table": 5}), call("describe_table", {"table": "books"}), {"text": "Done."}]
    async with bridge(database, script, api=api) as (conversation, model):
        outcome = await conversation.ask("Describe the books table")
    assert outcome.status == ANSWERED and outcome.rounds == 2
    repair = last_messages(model, 1)[-1]
    assert repair["role"] == "tool"
    assert "table: expected a string; sent 5 (an integer)" in repair["content"]
    assert repair["content"].endswith("(Repair round 1 of 2.)")
    assert "title" in last_messages(model, 2)[-1]["content"]  # the real description of books
    counters = conversation.counters
    assert (counters["rejected"], counters["repaired"], counters["valid_first_try"]) == (1, 1, 0)


async def test_an_unknown_tool_is_named_with_the_closest_one(database: Path) -> None:
    script = [call("get_tables", {}), call("list_tables", {}), {"text": "ok"}]
    async with bridge(database, script) as (conversation, model):
        assert (await conversation.ask("tables?")).status == ANSWERED
    told = last_messages(model, 1)[-1]["content"]
    assert 'There is no tool named "get_tables". The closest is "list_tables".' in told


async def test_a_call_written_as_text_is_recovered_and_answered_as_the_users_message(database: Path) -> None:
    hooks = Recorder()
    script = [
        {"text": 'I will look.\n<tool_call>{"name": "list_tables", "arguments": {}}</tool_call>'},
        {"text": "Five tables."},
    ]
    async with bridge(database, script, hooks=hooks) as (conversation, model):
        outcome = await conversation.ask("tables?")
    assert outcome.status == ANSWERED
    answered = last_messages(model)[-1]
    assert answered["role"] == "user" and answered["content"].startswith("Result of list_tables:\n")
    assert hooks.events[1] == {"type": "assistant", "content": "I will look."}
    assert conversation.counters["recovered_from_text"] == 1


async def test_arguments_as_a_string_are_parsed(database: Path) -> None:
    script = [call("describe_table", '{"table": "authors"}'), {"text": "ok"}]
    async with bridge(database, script, api="openai") as (conversation, model):
        assert (await conversation.ask("authors?")).status == ANSWERED
    result = last_messages(model)[-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_0" and "name" in result["content"]
    # The OpenAI API sends arguments as a JSON string by design: parsing it is no normalisation (issue 28.5).
    assert conversation.counters["normalised"] == 0


async def test_a_model_that_never_gets_it_right_is_given_up_and_nothing_is_sent(database: Path) -> None:
    hooks = Recorder()
    bad = call("execute", {"statement": "DELETE FROM books"})
    async with bridge(database, [bad, bad, bad], hooks=hooks, options=BridgeOptions(yes=True)) as (conversation, model):
        outcome = await conversation.ask("Delete the books")
    assert outcome.status == GAVE_UP
    assert outcome.answer.startswith("The model did not produce a valid call to execute after the allowed repair")
    assert "call" not in hooks.kinds() and len(model.requests) == 3
    with sqlite3.connect(database) as db:
        assert db.execute("select count(*) from books").fetchone()[0] > 0
    # The history stays well-formed: every call of the last turn is answered.
    assert conversation.messages[-1]["role"] == "tool" and conversation.messages[-1]["content"].startswith("Not run")


async def test_an_endless_tool_loop_stops_at_the_round_limit(database: Path) -> None:
    hooks = Recorder()
    loop = call("list_tables", {})
    async with bridge(database, [loop] * 4, hooks=hooks, options=BridgeOptions(max_rounds=2)) as (conversation, _):
        outcome = await conversation.ask("tables?")
    assert (outcome.status, outcome.rounds) == (ROUND_LIMIT, 3)
    # The same call again within the question is answered "already have it", not run again (issue 28.4).
    assert hooks.kinds().count("call") == 1 and hooks.kinds().count("repeated") == 1
    assert conversation.counters["repeated"] == 1 and conversation.counters["ran"] == 1
    assert "limit of 2 tool rounds" in conversation.messages[-1]["content"]


@pytest.mark.parametrize(
    ("options", "answer", "asked", "written"),
    [
        (BridgeOptions(), False, ["execute"], False),
        (BridgeOptions(), True, ["execute"], True),
        (BridgeOptions(yes=True), False, [], True),
        (BridgeOptions(allow=frozenset({"execute"})), False, [], True),
    ],
)
# The server's own confirmation (elicitation) is off: the bridge's is the one under test.
async def test_a_destructive_tool_asks_before_it_runs(
    database: Path, options: BridgeOptions, answer: bool, asked: list[str], written: bool
) -> None:
    hooks = Recorder(answer=answer)
    script = [call("execute", {"sql": "INSERT INTO authors (name, country) VALUES ('Nobody', 'NZ')"}), {"text": "ok"}]
    async with bridge(database, script, hooks=hooks, options=options) as (conversation, model):
        assert (await conversation.ask("add an author")).status == ANSWERED
    assert hooks.asked == asked
    with sqlite3.connect(database) as db:
        count = db.execute("select count(*) from authors where name = 'Nobody'").fetchone()[0]
    assert count == (1 if written else 0)
    told = last_messages(model)[-1]["content"]
    assert ("the user declined this call" in told) is not written
    assert not told.startswith("Error")


async def test_a_failed_tool_goes_back_with_the_instruction_not_to_invent(database: Path) -> None:
    script = [call("query", {"sql": "SELECT * FROM no_such_table"}), {"text": "The table does not exist."}]
    async with bridge(database, script) as (conversation, model):
        assert (await conversation.ask("rows?")).status == ANSWERED
    told = last_messages(model)[-1]["content"]
    assert told.startswith("Error: ") and "no_such_table" in told and told.endswith(ERROR_INSTRUCTION)
    assert conversation.counters["failed_at_server"] == 1


async def test_a_failing_model_ends_the_turn_with_its_error(database: Path) -> None:
    async with bridge(database, [{"status": 404, "error": "model 'x' not found"}]) as (conversation, _):
        outcome = await conversation.ask("hi")
    assert outcome.status == MODEL_FAILED and "model 'x' not found" in outcome.answer


async def test_the_system_prompt_follows_tools_list_changed(database: Path) -> None:
    specs = [ServerSpec("everything", command=EVERYTHING)]
    script = [call("test_trigger_tool_change", {}), {"text": "done"}, {"text": "again"}]
    async with bridge(database, script, specs=specs, options=BridgeOptions(yes=True)) as (conversation, model):
        await conversation.ask("change the tools")
        for _ in range(100):  # the notification may trail the result a little
            if conversation.toolbox.stale:
                break
            await anyio.sleep(0.02)
        await conversation.ask("and now?")
    first, last = model.requests[0][1], model.requests[-1][1]
    assert "\ntest_dynamic_tool: " in first["messages"][0]["content"]
    assert "\ntest_dynamic_tool: " not in last["messages"][0]["content"]
    assert "test_dynamic_tool" not in [tool["function"]["name"] for tool in last["tools"]]


async def test_cancelling_the_turn_cancels_the_tool_call_on_the_server(database: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    specs = [ServerSpec("slow", command=(sys.executable, str(Path(__file__).with_name("slow_server.py")), str(marker)))]
    hooks = Recorder()
    async with bridge(database, [call("wait", {}), {"text": "after"}], specs=specs, hooks=hooks) as (conversation, _):
        with anyio.move_on_after(0.5) as scope:  # what Ctrl-C does in the chat
            await conversation.ask("wait for it")
        assert scope.cancelled_caught and hooks.kinds()[-2:] == ["call", "cancelled"]
        assert conversation.messages[-1]["content"] == "Not run: the user cancelled this call."
        for _ in range(100):
            if marker.exists():
                break
            await anyio.sleep(0.02)
        assert marker.read_text(encoding="utf-8") == "cancelled"
        # The connection is still good, and so is the history, for the next question.
        assert (await conversation.ask("and now?")).answer == "after"


async def test_a_long_calls_progress_reaches_the_hooks(database: Path) -> None:
    seen: list[tuple[float, float | None]] = []

    class Progress(Recorder):
        def progress(self, call: ValidCall, progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total))

    specs = [ServerSpec("everything", command=EVERYTHING)]
    script = [call("test_tool_with_progress", {}), {"text": "done"}]
    async with bridge(database, script, specs=specs, hooks=Progress(), options=BridgeOptions(yes=True)) as (
        conversation,
        _,
    ):
        assert (await conversation.ask("go")).status == ANSWERED
    assert seen == [(0, 100), (50, 100), (100, 100)]
