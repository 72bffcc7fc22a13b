"""What each shipped server has imported when it writes its first answer, at its default settings
over stdio: nothing the first answer does not need.

A real server process (its ``__main__``, as the console script runs it) answers one ``initialize``;
a hook on the stdio transport's write takes the names in ``sys.modules`` at the first message it
writes. Each name listed below costs milliseconds of every cold start and is imported where its
feature runs (the HTTP stack by the HTTP transports, watchfiles by the watcher on a worker thread or
at a client's first subscription, ``shutil`` by ``--help`` only).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}

# Runs the server's __main__ with a hook that reports sys.modules and the collector's state (on stderr,
# one JSON line each) when the first message is written, before writing it.
PROBE = """
import gc, json, runpy, sys
from plainmcp import stdio

real_send = stdio.StdoutStream.send
def send(self, item):
    if not getattr(stdio, "_probed", False):
        stdio._probed = True
        sys.stderr.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
        passes = [generation["collections"] - before for generation, before in zip(gc.get_stats(), BEFORE)]
        collector = {"threshold": gc.get_threshold(), "frozen": gc.get_freeze_count(), "passes": passes}
        sys.stderr.write("GC " + json.dumps(collector) + "\\n")
        sys.stderr.flush()
    return real_send(self, item)
stdio.StdoutStream.send = send
sys.argv = [sys.argv[1], *sys.argv[2:]]
BEFORE = [generation["collections"] for generation in gc.get_stats()]  # the probe's own imports are done
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""

#: Never needed to answer over stdio, by any server.
EVERY_SERVER = {"uvicorn", "httpx", "h11", "httptools", "starlette", "multiprocessing", "watchfiles"}
#: Each server's own, beyond that (its default settings). The views modules read their HTML with
#: pathlib, so ``importlib.resources``'s zipfile, tempfile and shutil stay out (filesystem's writing
#: needs shutil itself).
VIEWS = {"shutil", "lzma", "bz2", "zipfile", "tempfile"}
DEFERRED = {
    "everything": {"shutil", "lzma", "bz2", "jsonschema"},
    "weather": VIEWS,
    "filesystem": {"zipfile", "tempfile"},
    "sqlite": VIEWS,
    "prompts": {"shutil", "lzma", "bz2"},
}


def state_at_first_answer(name: str, *arguments: str) -> tuple[set[str], dict[str, Any]]:
    """The modules imported and the collector's state when the server writes its first answer."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, f"plainmcp_{name}", *arguments],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(done.stdout.splitlines()[0])["result"]["serverInfo"]["name"] == f"plainmcp-{name}", done.stderr
    (modules,) = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    (collector,) = [line for line in done.stderr.splitlines() if line.startswith("GC ")]
    return set(json.loads(modules.removeprefix("MODULES "))), json.loads(collector.removeprefix("GC "))


@pytest.mark.parametrize("name", sorted(DEFERRED))
def test_a_shipped_server_answers_first_without_what_the_answer_does_not_need(name: str, tmp_path: Path) -> None:
    arguments = [str(tmp_path)] if name == "filesystem" else []
    loaded, _ = state_at_first_answer(name, *arguments)
    assert f"plainmcp_{name}.server" in loaded  # the probe saw a built server answer
    unwanted = {module for module in loaded if module.split(".")[0] in EVERY_SERVER | DEFERRED[name]}
    assert sorted(unwanted) == []


@pytest.mark.parametrize("name", sorted(DEFERRED))
def test_a_shipped_server_starts_without_collection_passes_and_serves_with_its_collector_restored(
    name: str, tmp_path: Path
) -> None:
    """plainmcp.startup: no pass walks the modules the server imports (about 45 did for everything), what
    start-up made is frozen, and the collector runs with Python's own thresholds while serving. (The
    probe's own imports, plainmcp.stdio and asyncio, come before and are not counted.)"""
    arguments = [str(tmp_path)] if name == "filesystem" else []
    _, collector = state_at_first_answer(name, *arguments)
    gen0, gen1, gen2 = collector["passes"]
    assert gen1 == gen2 == 0, collector
    assert gen0 <= 10, collector  # young-generation passes after start-up (the event loop's imports), 45 before
    assert collector["frozen"] > 10_000, collector
    assert tuple(collector["threshold"]) == (700, 10, 10), collector
