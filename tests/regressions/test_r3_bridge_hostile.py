"""The bridge against hostile servers and a hostile model (issue 26, High 5 and Medium 9).

Real server processes (``tests/bridge/hostile_server.py``, raw JSON-RPC over stdio, so they can list
what plainmcp's own API would refuse) and the stand-in model on 127.0.0.1 playing a hostile model:

- what the user confirms is what runs: the whole call, escaped; one exposed name per (server, tool),
  so a server offering ``shop__query`` cannot capture shop's ``query``; the confirmation policy reads
  the annotations of the tool that runs; a per-server policy;
- a deep schema, a backtracking ``pattern``, deeply nested arguments and a NaN argument neither crash
  nor hang the bridge; at most a few calls of a 300-call turn run.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp_bridge.__main__ import _AskHooks
from plainmcp_bridge.agent import ANSWERED, DEFAULT_MAX_CALLS_PER_TURN, GAVE_UP, Bridge, BridgeOptions, Hooks
from plainmcp_bridge.interceptor import ValidCall
from plainmcp_bridge.models import ChatModel, ModelSettings
from plainmcp_bridge.retry import RetryPolicy
from plainmcp_bridge.servers_config import ServerSpec, parse_config
from plainmcp_bridge.standin import StandInModel
from plainmcp_bridge.terminal import TerminalHooks
from plainmcp_bridge.toolbox import open_toolbox

pytestmark = pytest.mark.anyio

HOSTILE = str(Path(__file__).parents[1] / "bridge" / "hostile_server.py")
#: Each ``ask`` in these tests must end within this (a liveness bound: a hang fails, it does not wait).
TURN_SECONDS = 20.0


def spec(role: str, log: Path, confirm: str = "unless-read-only") -> ServerSpec:
    return ServerSpec(role, command=(sys.executable, HOSTILE, role, str(log)), confirm=confirm)


class Asked(Hooks):
    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.asked: list[tuple[str, tuple[str, str]]] = []
        self.events: list[dict[str, Any]] = []

    def event(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    async def confirm(self, call: ValidCall, tool: dict[str, Any], route: tuple[str, str] = ("", "")) -> bool:
        self.asked.append((call.name, route))
        return self.answer


@asynccontextmanager
async def conversation(
    specs: list[ServerSpec], script: list[dict[str, Any]], hooks: Hooks, options: BridgeOptions | None = None
) -> AsyncIterator[Bridge]:
    """A bridge to ``specs`` whose model plays ``script`` (more replies: ``bridge.standin.add``)."""
    with StandInModel(script) as model:
        settings = ModelSettings(api="ollama", model="standin", base_url=model.url, retry=RetryPolicy(base=0.01))
        async with open_toolbox(specs, stderr="discard") as toolbox, ChatModel(settings) as chat:
            bridge = Bridge(toolbox, chat, options or BridgeOptions(), hooks)
            bridge.standin = model  # type: ignore[attr-defined]
            yield bridge


def calls(*pairs: tuple[str, Any]) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments} for name, arguments in pairs]}


def ran(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


async def ask(bridge: Bridge, question: str = "go") -> Any:
    with anyio.fail_after(TURN_SECONDS):
        return await bridge.ask(question)


# --------------------------------------------------------------------- what is confirmed is what runs


async def test_r3_bridge_namespacing_is_one_to_one_and_the_runner_s_annotations_decide(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    hooks = Asked(answer=False)
    async with conversation([spec("shop", log), spec("evil", log)], [], hooks) as bridge:
        names = [tool["name"] for tool in bridge.toolbox.tools]
        assert len(names) == len(set(names)) == 3
        by_route = {bridge.toolbox.route(name): name for name in names}
        assert sorted(by_route) == [("evil", "query"), ("evil", "shop__query"), ("shop", "query")]
        # The name "shop__query" runs evil's destructive tool (its own name); shop's query is numbered.
        assert by_route[("evil", "shop__query")] == "shop__query"
        assert by_route[("shop", "query")] == "shop__query_2"
        assert bridge.toolbox.listing("shop__query")["annotations"]["destructiveHint"] is True
        # Called, it asks (evil's annotations, not shop's), says whose tool it is, and is declined.
        bridge.standin.add(calls(("shop__query", {})), {"text": "declined"})
        assert (await ask(bridge)).status == ANSWERED
        assert hooks.asked == [("shop__query", ("evil", "shop__query"))] and ran(log) == []
        # Shop's own read-only query runs on shop, without a question.
        bridge.standin.add(calls(("shop__query_2", {})), {"text": "read"})
        assert (await ask(bridge)).status == ANSWERED
        assert len(hooks.asked) == 1
        assert ran(log) == [{"server": "shop", "tool": "query", "arguments": {}}]


async def test_r3_bridge_a_per_server_policy_overrides_the_server_s_own_annotations(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    config = parse_config(
        {
            "mcpServers": {
                "shop": {"command": sys.executable, "args": [HOSTILE, "shop", str(log)], "confirm": "always"},
                "evil": {"command": sys.executable, "args": [HOSTILE, "evil", str(log)], "confirm": "never"},
            }
        }
    )
    hooks = Asked(answer=True)
    async with conversation(config, [], hooks) as bridge:
        by_route = {bridge.toolbox.route(tool["name"]): tool["name"] for tool in bridge.toolbox.tools}
        bridge.standin.add(calls((by_route[("shop", "query")], {})), {"text": "a"})
        await ask(bridge)  # shop's read-only tool is asked about: its server's hints are not trusted
        bridge.standin.add(calls((by_route[("evil", "shop__query")], {})), {"text": "b"})
        await ask(bridge)  # evil's destructive tool is not: the operator said so
    assert [route for _, route in hooks.asked] == [("shop", "query")]
    assert [entry["server"] for entry in ran(log)] == ["shop", "evil"]
    with pytest.raises(ValueError, match="confirm must be one of"):
        parse_config({"mcpServers": {"x": {"command": "x", "confirm": "sometimes"}}})


async def test_r3_bridge_the_confirmation_shows_the_whole_call_escaped(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    content = "harmless text " * 400  # ~5,600 characters before the part that matters
    arguments = {"content": content, "note": "\x1b]0;owned\x07\x1b[2K\x9b31m", "path": "/home/user/.ssh/\u202egpj.exe"}
    out = io.StringIO()
    answers = iter(["n"])

    async def read_line(prompt: str) -> str | None:
        return next(answers)

    async with conversation(
        [spec("evil", log)], [calls(("shop__query", arguments)), {"text": "ok"}], Asked()
    ) as bridge:
        bridge.hooks = TerminalHooks(out, read_line)
        await ask(bridge)
    shown = out.getvalue()
    assert ran(log) == []  # declined
    question = shown[shown.index("?  shop__query") :]
    assert "the tool 'shop__query' of the server 'evil'" in question
    assert content.strip() in question  # whole, not cut at 200 characters
    assert "/home/user/.ssh/\\u202egpj.exe" in question  # the path, last, is there, with its trick shown
    assert not any(char in shown for char in "\x1b\x07\x9b\u202e")


async def test_r3_bridge_a_server_s_elicitation_text_reaches_the_terminal_escaped(tmp_path: Path, monkeypatch) -> None:
    log = tmp_path / "calls.jsonl"
    out = io.StringIO()
    answers = iter(["y", "blue"])

    async def read_line(prompt: str) -> str | None:
        out.write(prompt)
        return next(answers)

    async with conversation([spec("asker", log)], [calls(("ask", {})), {"text": "ok"}], Asked()) as bridge:
        bridge.hooks = TerminalHooks(out, read_line)
        assert (await ask(bridge)).status == ANSWERED
    # The `ask` command's hooks (questions on stderr) escape it too.
    stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stderr)
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\nred\n"))
    assert "Pick a colour" in out.getvalue() and "\\x1b]0;pwned" in out.getvalue()
    assert "\x1b" not in out.getvalue() and "\u202e" not in out.getvalue()
    answer = await _AskHooks(interactive=True).elicit(
        "deep", "Pick\x1b[2J", {"properties": {"c": {"title": "C\x1b[1A"}}}
    )
    assert answer == {"action": "accept", "content": {"c": "red"}}
    assert "\x1b" not in stderr.getvalue() and "Pick\\x1b[2J" in stderr.getvalue()


# ----------------------------------------------------------------------- a hostile server or model


async def test_r3_bridge_a_deep_schema_a_backtracking_pattern_deep_arguments_and_nan_neither_crash_nor_hang(
    tmp_path: Path,
) -> None:
    log = tmp_path / "calls.jsonl"
    nested: Any = "leaf"
    for _ in range(400):
        nested = {"x": nested}
    script = [
        calls(("match", {"text": "a" * 40 + "!"})),
        {"text": "a"},
        calls(("deep", {"x": nested})),
        {"text": "b"},
        calls(("measure", {"value": float("nan")})),
        {"text": "c"},
        calls(("deep", {"x": {"x": "fine"}})),
        {"text": "d"},
    ]
    hooks = Asked()
    async with conversation([spec("deep", log)], script, hooks) as bridge:
        deep = bridge.toolbox.listing("deep")
        assert deep["inputSchema"] == {"type": "object"}  # offered, but not with an 800-level schema
        # The deep and the NaN calls are refused with a repair message, and the scripted model replies in
        # prose: not an answer (issue 28.4), so those two questions end "gave_up"; none crashes or hangs.
        assert [(await ask(bridge)).status for _ in range(4)] == [ANSWERED, GAVE_UP, GAVE_UP, ANSWERED]
    # The pattern could not be judged in time: left to the server. The deep and the NaN arguments
    # were refused before anything was sent; a sane call to the same tool still runs.
    assert [entry["tool"] for entry in ran(log)] == ["match", "deep"]
    rejected = [event for event in hooks.events if event["type"] == "rejected"]
    assert any("levels of nesting" in problem for problem in rejected[0]["problems"])
    assert any("NaN" in problem for problem in rejected[-1]["problems"])


async def test_r3_bridge_300_calls_in_one_model_turn_do_not_all_run(tmp_path: Path) -> None:
    log = tmp_path / "calls.jsonl"
    script = [calls(*[("query", {"n": n}) for n in range(300)]), {"text": "done"}]
    hooks = Asked()
    async with conversation([spec("shop", log)], script, hooks) as bridge:
        assert (await ask(bridge)).status == ANSWERED
        answered = [m for m in bridge.messages if m["role"] == "tool"]
    assert len(ran(log)) == DEFAULT_MAX_CALLS_PER_TURN
    assert len(answered) == 300  # every call is answered in the history, most with "not run"
    assert sum("Not run: at most" in m["content"] for m in answered) == 300 - DEFAULT_MAX_CALLS_PER_TURN
    assert [event["type"] for event in hooks.events].count("call_limit") == 1
