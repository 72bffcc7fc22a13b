"""The bridge's scene for ``plainmcp demo``: the interceptor at work, without a GPU.

The model is the stand-in (:mod:`.standin`, on 127.0.0.1 in this process) playing three scripted turns:
a tool call with an argument of the wrong type, the same call corrected after the bridge's repair
message, and the answer. Everything else is real: ``plainmcp-bridge ask`` as the demo found it (a child
process), and a real MCP server of this repository that it starts over stdio.

Which server: the sqlite server on its bundled sample database when ``plainmcp_sqlite`` is importable by
this Python (the bridge's own; ``python3 dev.py setup`` installs both into one venv); otherwise (the bridge
installed on its own, with pipx say) the core's notes example, which every installation of the bridge has.

Registered under the ``plainmcp.scenes`` entry-point group; ``plainmcp demo`` plays it with the bridge's
own Python (see :mod:`plainmcp.demo`).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from importlib.util import find_spec
from typing import Any

import anyio
from plainmcp import demo

from .standin import MODEL, StandInModel
from .terminal import counts_line

#: Seconds the whole ``ask`` may take (two servers to start; the turns themselves are instant).
ASK_TIMEOUT = 60


@dataclass(frozen=True)
class Act:
    """One scripted question: the server to use, the model's wrong call, its corrected call, its answer."""

    title: str
    server: tuple[str, ...]
    question: str
    tool: str
    wrong: dict[str, Any]
    right: dict[str, Any]
    answer: str

    def script(self) -> list[dict[str, Any]]:
        """The stand-in model's turns."""
        return [
            {"calls": [{"name": self.tool, "arguments": self.wrong}]},
            {"calls": [{"name": self.tool, "arguments": self.right}]},
            {"text": self.answer},
        ]


_BEST_SELLERS = "select author, sum(copies_sold) as copies from book_sales group by author order by copies desc"


def choose_act() -> Act:
    """The sqlite act when its server is importable here, else the notes act (see the module's docstring)."""
    if find_spec("plainmcp_sqlite") is not None:
        return Act(
            title="the sqlite server on its bundled sample database",
            server=(sys.executable, "-m", "plainmcp_sqlite", "--log-level", "warning"),
            question="Which author sold the most books?",
            tool="query",
            # The commonest slip of small models: a number sent as a string.
            wrong={"sql": _BEST_SELLERS, "max_rows": "1"},
            right={"sql": _BEST_SELLERS, "max_rows": 1},
            answer="Jane Austen sold the most books: 127 copies.",
        )
    return Act(
        title="the core's notes example (no sqlite server beside this bridge)",
        server=(sys.executable, "-m", "plainmcp.examples.notes"),
        question="Which notes mention plainmcp?",
        tool="search_notes",
        wrong={"word": ["plainmcp"]},
        right={"word": "plainmcp"},
        answer="One note mentions plainmcp: welcome.",
    )


async def play(stage: demo.Stage) -> None:
    act = choose_act()
    with StandInModel(act.script()) as model:
        stage.header(f"bridge with a scripted stand-in model and {act.title}")
        demo.line("stand-in model (Ollama API)", f"{model.url}, {len(model.script)} scripted turns")
        command = [
            *stage.command,
            "ask",
            act.question,
            "--server",
            shlex.join(act.server),
            "--base-url",
            model.url,
            "--model",
            MODEL,
            "--json",
        ]
        started = time.perf_counter()
        with anyio.fail_after(ASK_TIMEOUT):
            done = await anyio.run_process(command, stdin=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no output"]
            raise RuntimeError(f"plainmcp-bridge ask exited with {done.returncode}: {last[0]}")
        outcome = json.loads(done.stdout)
        for event in outcome["transcript"]:
            _show(event, act, model)
        demo.line("counts", counts_line(outcome["counts"]), started)


def _show(event: dict[str, Any], act: Act, model: StandInModel) -> None:
    """One step of the bridge's transcript, as a line of the scene."""
    kind = event["type"]
    if kind == "user":
        demo.line("ask", demo.short(event["content"]))
    elif kind == "rejected":
        demo.line(f"model: {_call(act, act.wrong)}", "not sent: " + "; ".join(event["problems"]))
        first, *rest = _repair_message(model).splitlines()
        demo.line("repair message to the model", first)
        for problem in (line for line in rest if line.startswith("- ")):
            demo.line("", demo.short(problem))
    elif kind == "call":
        demo.line(f"model: {_call(act, event['arguments'])}", "valid: tools/call sent to the server")
    elif kind == "result":
        shown = demo.short(" ".join(event["text"].split()), 90)  # a table's lines on one line
        demo.line(f"{event['name']} result", f"isError: {shown}" if event["is_error"] else shown)
    elif kind == "assistant":
        demo.line("answer", demo.short(event["content"]))


def _call(act: Act, arguments: dict[str, Any]) -> str:
    """``tool(name=value, ...)`` showing the values the wrong and the right call differ in (others as ...)."""
    shown = [
        f"{name}={json.dumps(value)}" if act.wrong.get(name) != act.right.get(name) else f"{name}=..."
        for name, value in arguments.items()
    ]
    return f"{act.tool}({', '.join(shown)})"


def _repair_message(model: StandInModel) -> str:
    """What the bridge told the model about its rejected call: the tool message of its second request."""
    _path, body = model.requests[1]
    return next(message["content"] for message in reversed(body["messages"]) if message.get("role") == "tool")
