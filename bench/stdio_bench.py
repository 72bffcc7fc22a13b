#!/usr/bin/env python3
"""Benchmark: plainmcp stdio servers against the same server written with the official MCP SDK.

Three servers with one ``echo`` tool (``bench/servers/``), and the shipped ``plainmcp-everything``
as a user runs it (its console script, default settings, tool ``test_simple_text``), are driven by the
same raw client (``subprocess.Popen`` with pipes, newline-delimited JSON-RPC), so only the server differs:

* cold start: spawn -> ``initialize`` response, and spawn -> ``tools/list`` response;
* sequential ``tools/call`` per second: send one, wait for its response, repeat;
* pipelined ``tools/call`` per second: a writer thread sends N requests back to back while the
  main thread reads the responses; every id must come back;
* peak RSS of the server (``VmHWM`` in ``/proc/<pid>/status``) right before its stdin is closed.

Servers are interleaved round-robin (with a rotating start) so machine noise hits all of them
alike; each figure is the median over the repetitions. Ratios compare plainmcp with each SDK
variant against the project's targets: the shipped server is judged on speed (issue 31: what users
run must be fast), the echo server, the core alone, is shown beside it and judged on peak RSS. This
is a benchmark, not a test: it exits 0 unless ``--check`` is given and a target is missed.

    .venv/bin/python bench/stdio_bench.py [--quick] [--json] [--check]
    python3 dev.py bench [--quick] [--json] [--check]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
SERVERS_DIR = HERE / "servers"
PROTOCOL_VERSION = "2025-11-25"
ECHO_TEXT = "hello, benchmark"
SIMPLE_TEXT = "This is a simple text response for testing."  # plainmcp-everything's test_simple_text
SESSION_TIMEOUT = 300.0  # seconds; a hung server is killed so the benchmark cannot hang forever


@dataclass(frozen=True)
class Target:
    """A server under test: a label, the command that runs it, the tool called and the text it answers."""

    key: str
    label: str
    command: tuple[str, ...]
    tool: str = "echo"
    arguments: tuple[tuple[str, str], ...] = (("text", ECHO_TEXT),)
    answer: str = ECHO_TEXT


def script(name: str) -> tuple[str, ...]:
    return (sys.executable, str(SERVERS_DIR / name))


def shipped(name: str) -> tuple[str, ...]:
    """A shipped server as its users run it: the console script beside this interpreter, no options."""
    console = Path(sys.executable).parent / name
    return (str(console),) if console.exists() else (sys.executable, "-m", name.replace("-", "_"))


PLAIN = Target("plainmcp", "plainmcp echo", script("plainmcp_echo.py"))
EVERYTHING = Target(
    "everything", "plainmcp-everything", shipped("plainmcp-everything"), "test_simple_text", (), SIMPLE_TEXT
)
SDK_LOWLEVEL = Target("sdk_lowlevel", "SDK low-level Server", script("sdk_lowlevel_echo.py"))
SDK_MCPSERVER = Target("sdk_mcpserver", "SDK MCPServer", script("sdk_mcpserver_echo.py"))
TARGETS = (PLAIN, EVERYTHING, SDK_LOWLEVEL, SDK_MCPSERVER)
OURS = (EVERYTHING, PLAIN)
SDK_TARGETS = (SDK_LOWLEVEL, SDK_MCPSERVER)


@dataclass(frozen=True)
class Goal:
    """One metric and its target, expressed as plainmcp / SDK, judged on one of our servers."""

    metric: str
    label: str
    unit: str
    higher_is_better: bool
    ratio_goal: float  # plainmcp/SDK must be >= this when higher is better, <= this otherwise
    judged_on: Target = EVERYTHING

    def met(self, ratio: float) -> bool:
        return ratio >= self.ratio_goal if self.higher_is_better else ratio <= self.ratio_goal

    def describe(self) -> str:
        if self.higher_is_better:
            return f">= {self.ratio_goal:g}x"
        return f"<= 1/{1 / self.ratio_goal:g}"


GOALS = (
    Goal("cold_initialize_ms", "cold start -> initialize", "ms", False, 1 / 6),
    Goal("cold_tools_list_ms", "cold start -> tools/list", "ms", False, 1 / 6),
    Goal("sequential_calls_per_s", "sequential tools/call", "calls/s", True, 5.0),
    Goal("pipelined_calls_per_s", "pipelined tools/call", "calls/s", True, 15.0),
    Goal("peak_rss_mib", "peak RSS under load", "MiB", False, 1 / 2, judged_on=PLAIN),
)
INFO_METRICS = (("idle_rss_mib", "RSS after tools/list (idle)", "MiB"),)


@dataclass
class Settings:
    """How much work one run does."""

    cold_reps: int
    load_reps: int
    warmup_calls: int
    sequential_calls: int
    pipelined_calls: int


FULL = Settings(cold_reps=15, load_reps=5, warmup_calls=300, sequential_calls=2000, pipelined_calls=2000)
QUICK = Settings(cold_reps=3, load_reps=1, warmup_calls=50, sequential_calls=300, pipelined_calls=300)


# ------------------------------------------------------------------------------------ the client


class BenchError(RuntimeError):
    """A server misbehaved (died, answered wrongly, or timed out)."""


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def initialize_request(request_id: int) -> bytes:
    return _line(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "stdio-bench", "version": "1.0.0"},
            },
        }
    )


INITIALIZED = _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
# Every tools/call is the same bytes except the id: prebuilt so the client costs the same per call.
_CALL_HEAD = b'{"jsonrpc":"2.0","id":'


def call_tail(target: Target) -> bytes:
    """A tools/call of ``target``'s tool after its id."""
    call = _line({"name": target.tool, "arguments": dict(target.arguments)})[:-1]
    return b',"method":"tools/call","params":' + call + b"}\n"


def call_request(target: Target, request_id: int) -> bytes:
    return _CALL_HEAD + str(request_id).encode() + call_tail(target)


def tools_list_request(request_id: int) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})


class RawClient:
    """A minimal newline-delimited JSON-RPC client over a child process's stdin/stdout."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            list(target.command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=HERE.parent,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin = self.process.stdin
        self.stdout = self.process.stdout
        self._watchdog = threading.Timer(SESSION_TIMEOUT, self.process.kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def receive(self) -> dict[str, Any]:
        """The next message from the server; a server's own requests/notifications are skipped."""
        while True:
            line = self.stdout.readline()
            if not line:
                raise BenchError(f"{self.target.label}: server closed stdout{self._stderr_tail()}")
            message = json.loads(line)
            if "id" in message and "method" not in message:
                return message

    def request(self, data: bytes, request_id: int) -> dict[str, Any]:
        self.send(data)
        response = self.receive()
        return check_response(self.target, response, request_id)

    def handshake(self) -> None:
        self.request(initialize_request(0), 0)
        self.send(INITIALIZED)

    def rss_mib(self, field_name: str = "VmHWM") -> float:
        """A memory figure of the server process from /proc (kB -> MiB)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        for row in status.splitlines():
            if row.startswith(field_name + ":"):
                return int(row.split()[1]) / 1024
        raise BenchError(f"{field_name} not in /proc/{self.process.pid}/status")

    def close(self) -> None:
        """End of input, then wait; terminate and kill if the server does not exit."""
        try:
            self.stdin.close()
        except OSError:
            pass
        for step in (None, self.process.terminate, self.process.kill):
            if step is not None:
                step()
            try:
                self.process.wait(timeout=5)
                break
            except subprocess.TimeoutExpired:
                continue
        self._watchdog.cancel()
        self.stdout.close()
        self._stderr.close()

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return f"; stderr:\n{tail}" if tail else ""


def check_response(target: Target, response: dict[str, Any], request_id: int) -> dict[str, Any]:
    if response.get("id") != request_id:
        raise BenchError(f"{target.label}: expected id {request_id}, got {response.get('id')!r}")
    if "result" not in response:
        raise BenchError(f"{target.label}: error for id {request_id}: {response.get('error')!r}")
    return response["result"]


def check_echo(target: Target, result: dict[str, Any]) -> None:
    content = result.get("content") or [{}]
    if content[0].get("text") != target.answer or result.get("isError"):
        raise BenchError(f"{target.label}: unexpected tools/call result {result!r}")


# ---------------------------------------------------------------------------------- measurements


def measure_cold_start(target: Target) -> dict[str, float]:
    """Spawn, initialize, initialized, tools/list; milliseconds from spawn to each response."""
    start = time.perf_counter()
    client = RawClient(target)
    try:
        client.request(initialize_request(0), 0)
        initialized = time.perf_counter()
        client.send(INITIALIZED)
        tools = client.request(tools_list_request(1), 1)["tools"]
        listed = time.perf_counter()
        names = [tool["name"] for tool in tools]
        if target.tool not in names or (target.tool == "echo" and names != ["echo"]):
            raise BenchError(f"{target.label}: unexpected tools {tools!r}")
        idle_rss = client.rss_mib("VmRSS")
    finally:
        client.close()
    return {
        "cold_initialize_ms": (initialized - start) * 1000,
        "cold_tools_list_ms": (listed - start) * 1000,
        "idle_rss_mib": idle_rss,
    }


def run_sequential(client: RawClient, calls: int, first_id: int) -> float:
    """Send one tools/call, wait for its response, repeat. Calls per second."""
    requests = [call_request(client.target, first_id + i) for i in range(calls)]
    start = time.perf_counter()
    for offset, data in enumerate(requests):
        check_echo(client.target, client.request(data, first_id + offset))
    return calls / (time.perf_counter() - start)


def run_pipelined(client: RawClient, calls: int, first_id: int) -> float:
    """Write ``calls`` requests back to back from a thread while reading responses here.

    The writer runs in its own thread so that neither side can deadlock on a full pipe.
    Calls per second, from the first write until every response arrived.
    """
    payload = b"".join(call_request(client.target, first_id + i) for i in range(calls))
    errors: list[BaseException] = []

    def write() -> None:
        try:
            client.send(payload)
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    pending = set(range(first_id, first_id + calls))
    writer = threading.Thread(target=write, name="pipelined-writer", daemon=True)
    start = time.perf_counter()
    writer.start()
    while pending:
        response = client.receive()
        request_id = response.get("id")
        if request_id not in pending:
            raise BenchError(f"{client.target.label}: unexpected or duplicate id {request_id!r}")
        pending.discard(request_id)
        check_echo(client.target, check_response(client.target, response, request_id))
    elapsed = time.perf_counter() - start
    writer.join()
    if errors:
        raise BenchError(f"{client.target.label}: writing failed: {errors[0]!r}")
    return calls / elapsed


def measure_load(target: Target, settings: Settings) -> dict[str, float]:
    """One server session: warm up, a sequential run, a pipelined run, then peak RSS."""
    client = RawClient(target)
    try:
        client.handshake()
        next_id = 1
        run_sequential(client, settings.warmup_calls, next_id)
        next_id += settings.warmup_calls
        run_pipelined(client, settings.warmup_calls, next_id)
        next_id += settings.warmup_calls
        sequential = run_sequential(client, settings.sequential_calls, next_id)
        next_id += settings.sequential_calls
        pipelined = run_pipelined(client, settings.pipelined_calls, next_id)
        peak_rss = client.rss_mib("VmHWM")
    finally:
        client.close()
    return {"sequential_calls_per_s": sequential, "pipelined_calls_per_s": pipelined, "peak_rss_mib": peak_rss}


# ---------------------------------------------------------------------------------- orchestration


@dataclass
class Samples:
    """Every measured value, per target and metric."""

    values: dict[str, dict[str, list[float]]] = field(default_factory=lambda: {t.key: {} for t in TARGETS})

    def add(self, target: Target, measured: dict[str, float]) -> None:
        for metric, value in measured.items():
            self.values[target.key].setdefault(metric, []).append(value)

    def median(self, target: Target, metric: str) -> float:
        return statistics.median(self.values[target.key][metric])


def round_robin(reps: int, measure: Callable[[Target], dict[str, float]], samples: Samples, phase: str) -> None:
    """Run ``measure`` for every target ``reps`` times, interleaved with a rotating start."""
    for rep in range(reps):
        order = TARGETS[rep % len(TARGETS) :] + TARGETS[: rep % len(TARGETS)]
        for target in order:
            samples.add(target, measure(target))
        progress(f"{phase}: {rep + 1}/{reps}")


def progress(text: str) -> None:
    if sys.stderr.isatty():
        print(f"\r{text:<40}", end="", file=sys.stderr, flush=True)


def ratio(goal: Goal, samples: Samples, sdk: Target, ours: Target) -> float:
    return samples.median(ours, goal.metric) / samples.median(sdk, goal.metric)


def evaluate(samples: Samples) -> list[dict[str, Any]]:
    """Per goal, SDK variant and server of ours: the ratio, and whether the target is met where the
    goal is judged on that server (``judged``; the other's ratio is for information)."""
    rows = []
    for goal in GOALS:
        for ours in OURS:
            for sdk in SDK_TARGETS:
                value = ratio(goal, samples, sdk, ours)
                rows.append(
                    {
                        "metric": goal.metric,
                        "server": ours.key,
                        "against": sdk.key,
                        "ratio": value,
                        "target": goal.describe(),
                        "judged": ours is goal.judged_on,
                        "met": goal.met(value),
                    }
                )
    return rows


def judged(verdicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [v for v in verdicts if v["judged"]]


# ---------------------------------------------------------------------------------------- output


def _fmt(value: float, unit: str) -> str:
    if unit == "calls/s":
        return f"{value:,.0f}"
    return f"{value:,.1f}"


def _fmt_ratio(goal_higher: bool, value: float) -> str:
    """Speed-ups as "12.3x"; cost ratios as "1/6.2" (plainmcp needs 1/6.2 of the SDK's)."""
    if goal_higher:
        return f"{value:.2f}x"
    return f"1/{1 / value:.2f}" if value else "0"


def print_report(samples: Samples, verdicts: list[dict[str, Any]], settings: Settings, load: float | None) -> None:
    print(environment_line())
    if warning := load_warning(load):
        print(warning)
    print(
        f"medians of {settings.cold_reps} cold start(s) and {settings.load_reps} load session(s) per server; "
        f"{settings.sequential_calls} sequential / {settings.pipelined_calls} pipelined calls per session\n"
    )
    names = [t.label for t in TARGETS]
    header = f"{'metric':<30}{'unit':>8}" + "".join(f"{n:>22}" for n in names)
    print(header)
    print("-" * len(header))
    rows = [(g.metric, g.label, g.unit) for g in GOALS] + list(INFO_METRICS)
    for metric, label, unit in rows:
        cells = "".join(f"{_fmt(samples.median(t, metric), unit):>22}" for t in TARGETS)
        print(f"{label:<30}{unit:>8}{cells}")
    print()
    columns = [(ours, sdk) for ours in OURS for sdk in SDK_TARGETS]
    short = {
        EVERYTHING.key: "everything",
        PLAIN.key: "echo",
        SDK_LOWLEVEL.key: "low-level",
        SDK_MCPSERVER.key: "MCPServer",
    }
    header = f"{'ratio to the SDK':<30}{'target':>10}" + "".join(
        f"{short[ours.key] + ' / ' + short[sdk.key]:>26}" for ours, sdk in columns
    )
    print(header)
    print("-" * len(header))
    by_key = {(v["metric"], v["server"], v["against"]): v for v in verdicts}
    for goal in GOALS:
        cells = ""
        for ours, sdk in columns:
            verdict = by_key[(goal.metric, ours.key, sdk.key)]
            mark = ("met" if verdict["met"] else "MISSED") if verdict["judged"] else "(info)"
            cells += f"{_fmt_ratio(goal.higher_is_better, verdict['ratio']):>18}  {mark:<6}"
        print(f"{goal.label:<30}{goal.describe():>10}{cells}")
    counted = judged(verdicts)
    missed = [v for v in counted if not v["met"]]
    print()
    print(
        "Targets are judged on the shipped plainmcp-everything (speed) and on the echo server (peak RSS); "
        "(info) ratios are for comparison."
    )
    if missed:
        print(f"{len(missed)} of {len(counted)} target comparisons missed.")
    else:
        print(f"All {len(counted)} target comparisons met (against both SDK variants).")


def environment_line() -> str:
    return (
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
        f"plainmcp {_version('plainmcp')}, mcp {_version('mcp')}"
    )


def load_average() -> float | None:
    """The 1-minute load average, where the platform has one."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def load_warning(before: float | None) -> str | None:
    """A warning when other processes were busy as the run started: the figures are then noisy."""
    cpus = os.cpu_count() or 1
    if before is None or before < 0.5 * cpus:
        return None
    return (
        f"warning: load average was {before:.2f} on {cpus} CPUs when the run started; "
        "other processes compete with the servers, so these figures are noisy"
    )


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "?"


def json_report(
    samples: Samples, verdicts: list[dict[str, Any]], settings: Settings, load: float | None
) -> dict[str, Any]:
    metrics = [g.metric for g in GOALS] + [m for m, _, _ in INFO_METRICS]
    return {
        "environment": environment_line(),
        "load_average_at_start": load,
        "settings": vars(settings),
        "medians": {t.key: {m: samples.median(t, m) for m in metrics} for t in TARGETS},
        "samples": samples.values,
        "comparisons": verdicts,
        "all_met": all(v["met"] for v in judged(verdicts)),
    }


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few repetitions: a smoke run, not a measurement")
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if any target is missed against either SDK variant"
    )
    return parser.parse_args(argv)


def compile_sources() -> None:
    """Byte-compile plainmcp's sources first, as pip did for the SDK when it installed it: the
    development install is editable, and with stale or no ``__pycache__`` (``PYTHONDONTWRITEBYTECODE``
    is common in CI images) every cold start would compile the core from source."""
    import compileall

    for sources in (HERE.parent / "packages" / "plainmcp" / "src", HERE.parent / "servers" / "everything" / "src"):
        compileall.compile_dir(sources, quiet=1)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    settings = QUICK if args.quick else FULL
    samples = Samples()
    load = load_average()
    compile_sources()
    try:
        round_robin(settings.cold_reps, measure_cold_start, samples, "cold start")
        round_robin(settings.load_reps, lambda t: measure_load(t, settings), samples, "load")
    except BenchError as exc:
        print(f"\nbenchmark failed: {exc}", file=sys.stderr)
        return 2
    progress("")
    if sys.stderr.isatty():
        print("\r", end="", file=sys.stderr)
    verdicts = evaluate(samples)
    print_report(samples, verdicts, settings, load)
    if args.json:
        print(json.dumps(json_report(samples, verdicts, settings, load), indent=2))
    if args.check and not all(v["met"] for v in judged(verdicts)):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
