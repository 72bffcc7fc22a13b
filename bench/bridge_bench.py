#!/usr/bin/env python3
"""plainmcp-bridge against a real model: the question set on llama-server, with and without constraint and repair.

    .venv/bin/python bench/bridge_bench.py                      # SmolLM2-135M, every configuration
    .venv/bin/python bench/bridge_bench.py --model gemma3 --limit 20 --configs format/2,off/2
    .venv/bin/python bench/bridge_bench.py --threads 1 --limit 24 --configs format/2,decide/2 --out results.jsonl
    .venv/bin/python bench/bridge_bench.py --summarize results.jsonl    # the table again, or of a stopped run

Starts llama-server (tools/llama_server.py: build it first) with a model from the cache, the real sqlite
(sample database copy), filesystem (a temporary tree) and weather (its stand-in upstream) servers, and asks
every question of tests/bridge/data/questions.jsonl in a fresh conversation, read-only tools only (writes
declined). Per configuration (constraint mode / repair rounds) it prints: questions with a proposed call,
valid at first try, right call (the expected tool, its expected argument values), right answer (the
expected text in the answer, for the questions that have one), given up, made-up answers (answered
without any tool result), seconds per question and tokens per second.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import llama_server  # noqa: E402

QUESTIONS = ROOT / "tests" / "bridge" / "data" / "questions.jsonl"
#: The filesystem server's tree the file questions are written for.
TREE = {
    "README.md": "# demo project\nA demo tree for the bridge's questions.\n",
    "notes/todo.md": "- write the README\n- test the bridge\n",
    "notes/ideas.txt": "a bicycle that folds\n",
    "src/app.py": 'print("hello")\n',
}


def questions(limit: int | None = None) -> list[dict[str, Any]]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    items = [json.loads(line) for line in lines if line.strip()]
    if limit is None or limit >= len(items):
        return items
    # A spread over the three servers, not the first server's questions only.
    step = len(items) / limit
    return [items[int(index * step)] for index in range(limit)]


def make_tree(root: Path) -> None:
    for name, text in TREE.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


@contextmanager
def real_servers(scratch: Path) -> Iterator[list[Any]]:
    """The three real servers' specs (sqlite on a copy of its sample, filesystem on a fresh tree, weather on
    its stand-in upstream)."""
    import plainmcp_sqlite
    from plainmcp_bridge.servers_config import ServerSpec
    from plainmcp_weather.standin import StandIn

    database = scratch / "shop.db"
    shutil.copy(Path(plainmcp_sqlite.__file__).parent / "sample" / "sample.db", database)
    tree = scratch / "tree"
    make_tree(tree)
    python = sys.executable
    with StandIn() as upstream:
        env = {f"PLAINMCP_WEATHER_{api}_URL": upstream.url for api in ("GEOCODING", "FORECAST", "NWS")}
        yield [
            ServerSpec("sqlite", command=(python, "-m", "plainmcp_sqlite", "--db", str(database))),
            ServerSpec("files", command=(python, "-m", "plainmcp_filesystem", str(tree))),
            ServerSpec("weather", command=(python, "-m", "plainmcp_weather"), env=env),
        ]


def right_call(question: dict[str, Any], calls: list[dict[str, Any]]) -> bool:
    """Whether a call that ran is the expected tool with the expected values (each a case-insensitive
    part of what was sent for that argument)."""
    for call in calls:
        if call["name"] != question["tool"]:
            continue
        sent = call.get("arguments") or {}
        if all(
            str(value).lower() in json.dumps(sent.get(key), ensure_ascii=False).lower()
            for key, value in question["args"].items()
        ):
            return True
    return False


@dataclass
class Tally:
    asked: int = 0
    proposed: int = 0
    valid_first: int = 0
    right_call: int = 0
    with_answer: int = 0
    right_answer: int = 0
    gave_up: int = 0
    made_up: int = 0
    seconds: float = 0.0
    tokens: int = 0
    statuses: dict[str, int] = field(default_factory=dict)
    #: The decision step's choices (``--constrain decide``): the right tool, another tool, words, unreadable.
    decisions: dict[str, int] = field(default_factory=dict)

    def row(self, name: str) -> str:
        n = max(self.asked, 1)
        rate = self.tokens / self.seconds if self.seconds else 0.0
        return (
            f"| {name} | {self.asked} | {self.proposed} | {self.valid_first} | {self.right_call} "
            f"({100 * self.right_call / n:.0f}%) | {self.right_answer}/{self.with_answer} | {self.gave_up} "
            f"| {self.made_up} | {self.seconds / n:.1f} | {rate:.0f} |"
        )


HEADER = (
    "| config | asked | proposed a call | valid at first try | right call | right answer | gave up "
    "| made-up answers | s/question | kept tokens/s (chars/4) |\n|---|---|---|---|---|---|---|---|---|---|"
)


async def ask_one(
    toolbox: Any, settings: Any, question: dict[str, Any], repairs: int, shortlist: int = 0
) -> dict[str, Any]:
    """One question in a fresh conversation: outcome, the calls that ran, the counters, tokens."""
    from plainmcp_bridge.agent import Bridge, BridgeOptions
    from plainmcp_bridge.models import ChatModel

    events: list[dict[str, Any]] = []
    async with ChatModel(settings) as model:
        bridge = Bridge(toolbox, model, BridgeOptions(max_repairs=repairs, max_rounds=3, shortlist=shortlist))
        bridge.sinks.append(events.append)
        started = time.monotonic()
        outcome = await bridge.ask(question["question"])
        seconds = time.monotonic() - started
    calls = [event for event in events if event["type"] == "call"]
    decisions = [event["tool"] for event in events if event["type"] == "decision"]
    return {
        "decisions": decisions,
        "status": outcome.status,
        "answer": outcome.answer,
        "tool_results": outcome.tool_results,
        "calls": calls,
        "counts": bridge.counters,
        "seconds": seconds,
        "tokens": sum(len(str(m.get("content") or "")) // 4 for m in bridge.messages if m["role"] == "assistant"),
    }


def score(tally: Tally, question: dict[str, Any], result: dict[str, Any]) -> None:
    counts = result["counts"]
    tally.asked += 1
    tally.proposed += counts["proposed"] > 0
    tally.valid_first += counts["valid_first_try"] > 0
    tally.right_call += right_call(question, result["calls"])
    if question.get("answer"):
        tally.with_answer += 1
        tally.right_answer += result["status"] == "answered" and question["answer"].lower() in result["answer"].lower()
    tally.gave_up += result["status"] == "gave_up"
    tally.made_up += result["status"] == "answered" and result["tool_results"] == 0
    tally.seconds += result["seconds"]
    tally.tokens += result["tokens"]
    tally.statuses[result["status"]] = tally.statuses.get(result["status"], 0) + 1
    for index, chosen in enumerate(result["decisions"]):
        kind = (
            "unreadable"
            if chosen is None
            else "words"
            if chosen == "answer in words"
            else "right tool"
            if chosen == question["tool"]
            else "other tool"
        )
        key = f"{'first' if index == 0 else 'later'}: {kind}"
        tally.decisions[key] = tally.decisions.get(key, 0) + 1


@asynccontextmanager
async def toolbox_for(specs: list[Any]) -> AsyncIterator[Any]:
    from plainmcp_bridge.toolbox import open_toolbox

    async with open_toolbox(specs, stderr="discard") as toolbox:
        yield toolbox


async def run(
    url: str, specs: list[Any], items: list[dict[str, Any]], configs: list[str], out: Path | None = None
) -> None:
    from plainmcp_bridge.models import ModelSettings

    print(HEADER, flush=True)
    for config in configs:
        mode, repairs, shortlist = parse_config(config)
        tally = Tally()
        # Each question meets its own server's tools (grouped, so llama-server reuses the cached prompt).
        for server in ("sqlite", "files", "weather"):
            asked = [question for question in items if question["server"] == server]
            if not asked:
                continue
            async with toolbox_for([spec for spec in specs if spec.name == server]) as toolbox:
                settings = ModelSettings(
                    api="openai",
                    model="local",
                    base_url=url + "/v1",
                    constrain=mode,
                    max_tokens=128,
                    options={"temperature": 0},
                    turn_timeout=180,
                )
                for question in asked:
                    result = await ask_one(toolbox, settings, question, repairs, shortlist)
                    score(tally, question, result)
                    if out is not None:  # one line per question: what it asked, what ran, how it ended
                        line = {"config": config, "question": question["question"], **result}
                        with out.open("a", encoding="utf-8") as file:
                            file.write(json.dumps(line, default=str) + "\n")
        print(tally.row(describe(config)), flush=True)
        print(f"  outcomes: {json.dumps(tally.statuses, sort_keys=True)}", flush=True)
        if tally.decisions:
            print(f"  decisions: {json.dumps(tally.decisions, sort_keys=True)}", flush=True)


async def rank(specs: list[Any], items: list[dict[str, Any]]) -> None:
    """The shortlist alone (``--rank``): for how many questions the expected tool is among the first 1,
    2 and 3 of the ranking of the question's server's tools."""
    from plainmcp_bridge.shortlist import shortlist

    found = {size: 0 for size in (1, 2, 3)}
    for server in ("sqlite", "files", "weather"):
        async with toolbox_for([spec for spec in specs if spec.name == server]) as toolbox:
            for question in (item for item in items if item["server"] == server):
                for size in found:
                    offered = shortlist(question["question"], toolbox.tools, size)
                    found[size] += question["tool"] in [tool["name"] for tool in offered]
    print(f"{len(items)} questions; the expected tool in the shortlist of", end="")
    print(",".join(f" {size}: {count}" for size, count in found.items()))


def parse_config(config: str) -> tuple[str, int, int]:
    """``MODE/REPAIRS[/SHORTLIST]`` as (mode, repairs, shortlist)."""
    parts = config.split("/")
    if len(parts) not in (2, 3) or not all(part.isdigit() for part in parts[1:]):
        raise SystemExit(f"bridge_bench: a configuration is MODE/REPAIRS[/SHORTLIST], not {config!r}")
    return parts[0], int(parts[1]), int(parts[2]) if len(parts) == 3 else 0


def describe(config: str) -> str:
    mode, repairs, shortlist = parse_config(config)
    return f"constrain={mode}, repairs={repairs}" + (f", shortlist={shortlist}" if shortlist else "")


def summarize(path: Path) -> int:
    """The table of an ``--out`` file (each configuration's questions as far as they went: a run stopped
    part way still counts what it asked)."""
    by_text = {question["question"]: question for question in questions()}
    tallies: dict[str, Tally] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        result = json.loads(line)
        score(tallies.setdefault(result["config"], Tally()), by_text[result["question"]], result)
    print(HEADER)
    for config, tally in tallies.items():
        print(tally.row(describe(config)))
        print(f"  outcomes: {json.dumps(tally.statuses, sort_keys=True)}")
        if tally.decisions:
            print(f"  decisions: {json.dumps(tally.decisions, sort_keys=True)}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(llama_server.MODELS), default="smollm2")
    parser.add_argument("--limit", type=int, default=None, help="ask this many questions (spread over the set)")
    parser.add_argument(
        "--configs",
        default="off/0,off/2,format/0,format/2,format/2/3",
        help="MODE/REPAIRS[/SHORTLIST],... (MODE: a --constrain mode; SHORTLIST: --shortlist's count, default 0)",
    )
    parser.add_argument("--threads", type=int, default=None, help="llama-server's threads (default: one per CPU)")
    parser.add_argument("--out", type=Path, default=None, help="append each question's result to this JSONL file")
    parser.add_argument("--summarize", type=Path, default=None, help="print the table of an --out file and exit")
    parser.add_argument(
        "--rank", action="store_true", help="no model: how often the expected tool is in the shortlist of 1, 2, 3"
    )
    args = parser.parse_args()
    if args.summarize:
        return summarize(args.summarize)
    if args.rank:
        with tempfile.TemporaryDirectory() as scratch, real_servers(Path(scratch)) as specs:
            anyio.run(rank, specs, questions(args.limit))
        return 0
    if not llama_server.binary().exists():
        print(f"bridge_bench: llama-server is not built: {llama_server.build_command()}", file=sys.stderr)
        return 1
    configs = args.configs.split(",")
    for config in configs:
        parse_config(config)  # a bad one stops here, before llama-server starts
    items = questions(args.limit)
    threads = args.threads or os.cpu_count()
    print(f"model {args.model}, {len(items)} questions, llama-server {llama_server.VERSION}, {threads} thread(s)")
    print(f"load before: {load()}", flush=True)
    with tempfile.TemporaryDirectory() as scratch, real_servers(Path(scratch)) as specs:
        with llama_server.serve(llama_server.model(args.model), threads=args.threads) as url:
            anyio.run(run, url, specs, items, configs, args.out)
    print(f"load after: {load()}", flush=True)
    return 0


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes) and its CPUs: the numbers above depend on them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


if __name__ == "__main__":
    sys.exit(main())
