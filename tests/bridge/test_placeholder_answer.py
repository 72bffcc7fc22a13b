"""A constrained answer that is the instructions' placeholder copied back (recorded: Gemma 3 270M on
llama-server 11434.0.0, bench/bridge_bench.py, 2026-12-02, in 8 of its 44 answered questions with the
shortlist) is not an answer: the model is told once, then the bridge gives up. Through the stand-in model
and the real sqlite server."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from plainmcp_bridge.agent import ANSWERED, GAVE_UP, Bridge, BridgeOptions
from plainmcp_bridge.constrain import FORMAT, PLACEHOLDER_CORRECTION, is_placeholder
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy
from plainmcp_bridge.servers_config import ServerSpec
from plainmcp_bridge.standin import StandInModel
from plainmcp_bridge.toolbox import open_toolbox

from .test_agent import SAMPLE, Recorder

pytestmark = pytest.mark.anyio

CALL = {"text": '{"name": "sample_rows", "arguments": {"table": "books", "rows": 3}}'}
#: Gemma's answer after its sample_rows call, as llama-server returned it.
PLACEHOLDER = {"text": '{"answer": "<your answer in plain words>"}'}


async def ask(tmp_path: Path, script: list[dict[str, Any]]) -> tuple[Any, Bridge, StandInModel]:
    database = tmp_path / "shop.db"
    shutil.copy(SAMPLE, database)
    spec = ServerSpec("sqlite", command=(sys.executable, "-m", "plainmcp_sqlite", "--db", str(database)))
    with StandInModel(script) as model:
        settings = ModelSettings(
            api="openai", model="standin", base_url=model.url + "/v1", constrain=FORMAT, retry=RetryPolicy(base=0.01)
        )
        async with open_toolbox([spec], stderr="discard") as toolbox, ChatModel(settings) as chat:
            bridge = Bridge(toolbox, chat, BridgeOptions(), Recorder())
            outcome = await bridge.ask("Show me a few rows from the books table.")
    return outcome, bridge, model


async def test_placeholder_answer_is_corrected_once_then_the_real_answer_counts(tmp_path: Path) -> None:
    outcome, bridge, model = await ask(tmp_path, [CALL, PLACEHOLDER, {"text": '{"answer": "Three books."}'}])
    assert (outcome.status, outcome.answer, outcome.tool_results) == (ANSWERED, "Three books.", 1)
    assert model.requests[2][1]["messages"][-1] == {"role": "user", "content": PLACEHOLDER_CORRECTION}
    kinds = [event["type"] for event in bridge.hooks.events]  # type: ignore[attr-defined]
    assert kinds.count("placeholder") == 1


async def test_placeholder_answer_twice_is_given_up_not_answered(tmp_path: Path) -> None:
    outcome, bridge, _ = await ask(tmp_path, [CALL, PLACEHOLDER, PLACEHOLDER])
    assert outcome.status == GAVE_UP and "placeholder" in outcome.answer
    assert bridge.counters["gave_up"] == 1


def test_is_placeholder_reads_copies_and_nothing_else() -> None:
    for text in (
        "<your answer in plain words>",
        "  Your answer in plain words. ",
        "",
        "...",
        '"<...>"',
        "in plain words",
    ):
        assert is_placeholder(text), text
    for text in ("There are 25 books.", "<b>25</b>", "plain", "in", "The answer is in the books table."):
        assert not is_placeholder(text), text
