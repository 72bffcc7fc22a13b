"""Regression (issue 26.10): a prompt argument's ``pattern`` cost seconds of CPU per value (~13 s for one
prompts/get over several arguments), and cancelling the call did not stop the matching thread.

The pattern engine was already linear, but its constant was the size of the file's classes and
repeats: a class of a hundred members tested each member, for each of ~300 live states, for each of
4,096 characters. Now a class is one set lookup, the matches of one call share a work budget, and a
cancelled call stops its thread. Attacked through a real server process (CPU from ``/proc``, ``ping``
within a second) and, for cancellation, by reading this process's own CPU after the cancel."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import anyio
import pytest
from plainmcp import MCPError, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_prompts import pattern

from tests.servers.prompts.support import server_over, stdio_command, write

pytestmark = pytest.mark.anyio

#: ~300 live states, each testing a class of 120 members plus two shorthands, on every character.
CLASS = "[" + "".join(chr(0x3000 + 2 * i) for i in range(120)) + r"\w\W]"
HOSTILE = "(?:(?:" + CLASS + "?){0,100})*"
#: 4,096 different characters: no step of the automaton is ever seen twice.
VALUE = "".join(chr(0x4E00 + i) for i in range(4096))
ARGUMENTS = [f"a{n}" for n in range(6)]


def hostile_library(folder: Path) -> Path:
    declared = "\n".join(f"  - name: {name}\n    pattern: '{HOSTILE}'" for name in ARGUMENTS)
    body = " ".join("{{" + name + "}}" for name in ARGUMENTS)
    write(folder, "hostile.md", f"---\ndescription: hostile patterns\narguments:\n{declared}\n---\n{body}\n")
    return folder


def cpu_seconds(pid: int | str = "self") -> float:
    """User and system time of a whole process, all threads, from ``/proc/<pid>/stat``."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_r3_prompts_hostile_patterns_cost_a_bounded_cpu_and_never_hold_ping(tmp_path: Path) -> None:
    folder = hostile_library(tmp_path)
    async with connect_stdio(stdio_command(folder)) as client:
        pid = client.process.pid
        [prompt] = (await client.request("prompts/list"))["prompts"]
        assert prompt["name"] == "hostile"
        latencies: list[float] = []
        done = anyio.Event()

        async def ping() -> None:
            while not done.is_set():
                started = time.monotonic()
                with anyio.fail_after(1.0):
                    await client.ping()
                latencies.append(time.monotonic() - started)
                await anyio.sleep(0.05)

        before = cpu_seconds(pid)
        async with anyio.create_task_group() as group:
            group.start_soon(ping)
            with anyio.fail_after(30), pytest.raises(MCPError) as refused:
                await client.get_prompt("hostile", dict.fromkeys(ARGUMENTS, VALUE))
            done.set()
        spent = cpu_seconds(pid) - before
    # Six values of ~3 s each before; now one budget for the call, and a clear refusal.
    assert refused.value.code == -32602 and "too long or too varied" in refused.value.message
    assert spent < 2.0, f"{spent:.2f} s of server CPU for one prompts/get"
    assert latencies and max(latencies) < 1.0


async def test_r3_prompts_a_cancelled_get_stops_its_matching(tmp_path: Path, monkeypatch) -> None:
    # A budget far past the default, so that only the cancellation can end the work.
    monkeypatch.setattr(pattern, "MAX_MATCH_STEPS", 10**12)
    folder = hostile_library(tmp_path)
    async with connect_in_memory(server_over(folder)) as client:
        with anyio.move_on_after(0.5) as scope:  # the client gives up: notifications/cancelled
            await client.get_prompt("hostile", dict.fromkeys(ARGUMENTS, VALUE))
        assert scope.cancelled_caught
        await anyio.sleep(0.3)
        before = cpu_seconds()
        await anyio.sleep(1.5)
        spent = cpu_seconds() - before
    assert spent < 0.3, f"{spent:.2f} s of CPU in the 1.5 s after the cancellation: the matching went on"


def test_r3_prompts_a_stopped_budget_ends_the_match_in_its_thread() -> None:
    budget = pattern.Budget(10**12)
    compiled = pattern.compile_pattern(HOSTILE)
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(compiled.matches(VALUE * 16, budget))
        except pattern.Stopped:
            outcome.append("stopped")

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    time.sleep(0.2)
    budget.stop()
    worker.join(2.0)
    assert not worker.is_alive() and outcome == ["stopped"]
