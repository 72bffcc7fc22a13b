#!/usr/bin/env python3
"""Benchmark: a plainmcp Streamable HTTP server against the same server written with the official MCP SDK.

Three servers with one ``echo`` tool (``bench/servers/*_http.py``, the stdio benchmark's servers
served over HTTP on 127.0.0.1) run side by side for the whole run and are driven by the same raw
client (``http.client``, one keep-alive connection per simulated client, one thread each), so only
the server differs. Scenarios:

* legacy sequential: one session (``initialize`` -> ``Mcp-Session-Id`` -> ``notifications/initialized``),
  one ``tools/call`` at a time; calls per second, p50/p99 latency;
* legacy concurrent: 16 clients, each with its own connection and session, calling back to back;
  calls per second over all of them, p50/p99 latency;
* 2026-07-28 sequential / concurrent: the same with stateless POSTs (``MCP-Protocol-Version``,
  ``Mcp-Method``, ``Mcp-Name`` headers and the ``_meta`` envelope), no session.

Responses may be JSON or an SSE stream; the client parses either. Servers are interleaved
round-robin per scenario (with a rotating start) so machine noise hits all of them alike. With
``--floor``, a canned-response ASGI app on the same uvicorn runs alongside, to show what the HTTP
stack and the client cost by themselves. This is a benchmark, not a test: it exits 0 unless
``--check`` is given and a target is missed.

    .venv/bin/python bench/http_bench.py [--quick] [--json] [--check] [--floor]
    python3 dev.py bench-http [--quick] [--json] [--check] [--floor]
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from stdio_bench import environment_line, load_average, load_warning, progress  # same directory

HERE = Path(__file__).resolve().parent
SERVERS_DIR = HERE / "servers"
HOST = "127.0.0.1"
LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
ECHO_TEXT = "hello, benchmark"
CLIENTS = 16
STARTUP_SECONDS = 20.0  # a server that does not accept connections by then is a failure
IO_TIMEOUT = 10.0  # seconds for any one socket operation of the client
RUN_TIMEOUT = 900.0  # the whole run; past it the servers are killed, so nothing can hang forever
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class Target:
    """A server under test: a label and the script that runs it (``script PORT``)."""

    key: str
    label: str
    script: Path


PLAIN = Target("plainmcp", "plainmcp", SERVERS_DIR / "plainmcp_echo_http.py")
SDK_LOWLEVEL = Target("sdk_lowlevel", "SDK low-level Server", SERVERS_DIR / "sdk_lowlevel_echo_http.py")
SDK_MCPSERVER = Target("sdk_mcpserver", "SDK MCPServer", SERVERS_DIR / "sdk_mcpserver_echo_http.py")
TARGETS = (PLAIN, SDK_LOWLEVEL, SDK_MCPSERVER)
SDK_TARGETS = (SDK_LOWLEVEL, SDK_MCPSERVER)
#: With --floor: a canned-response ASGI app on the same uvicorn, for reference (no target applies).
FLOOR = Target("http_floor", "HTTP floor", SERVERS_DIR / "http_floor.py")


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    modern: bool
    clients: int


SCENARIOS = (
    Scenario("legacy_seq", "legacy sequential", modern=False, clients=1),
    Scenario("legacy_conc", f"legacy {CLIENTS} clients", modern=False, clients=CLIENTS),
    Scenario("modern_seq", f"{MODERN_VERSION} sequential", modern=True, clients=1),
    Scenario("modern_conc", f"{MODERN_VERSION} {CLIENTS} clients", modern=True, clients=CLIENTS),
)


@dataclass(frozen=True)
class Goal:
    """One metric of one scenario and its target, expressed as plainmcp / SDK."""

    scenario: Scenario
    metric: str  # "calls_per_s" or "p99_ms"
    higher_is_better: bool
    ratio_goal: float

    @property
    def key(self) -> str:
        return f"{self.scenario.key}.{self.metric}"

    @property
    def label(self) -> str:
        return f"{self.scenario.label}: {'calls/s' if self.metric == 'calls_per_s' else 'p99'}"

    def met(self, ratio: float) -> bool:
        return ratio >= self.ratio_goal if self.higher_is_better else ratio < self.ratio_goal

    def describe(self) -> str:
        return f">= {self.ratio_goal:g}x" if self.higher_is_better else f"< {self.ratio_goal:g}x"


GOALS = tuple(
    goal
    for scenario in SCENARIOS
    for goal in (Goal(scenario, "calls_per_s", True, 3.0), Goal(scenario, "p99_ms", False, 1.0))
)


@dataclass
class Settings:
    """How much work one run does."""

    reps: int
    warmup_calls: int  # sequential scenarios, before the clock starts
    sequential_calls: int
    concurrent_warmup_calls: int  # per client
    calls_per_client: int  # concurrent scenarios: CLIENTS x this many calls


FULL = Settings(reps=5, warmup_calls=200, sequential_calls=1000, concurrent_warmup_calls=20, calls_per_client=200)
QUICK = Settings(reps=1, warmup_calls=20, sequential_calls=200, concurrent_warmup_calls=5, calls_per_client=25)


# ------------------------------------------------------------------------------------ the client


class BenchError(RuntimeError):
    """A server misbehaved (died, answered wrongly, or timed out)."""


ACCEPT = "application/json, text/event-stream"
BASE_HEADERS = {"Content-Type": "application/json", "Accept": ACCEPT}
_CALL_HEAD = b'{"jsonrpc":"2.0","id":'
_CALL_PARAMS = b',"method":"tools/call","params":{"name":"echo","arguments":' + json.dumps({"text": ECHO_TEXT}).encode()
_MODERN_META = json.dumps(
    {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-bench", "version": "1.0.0"},
    },
    separators=(",", ":"),
).encode()


def call_body(request_id: int, modern: bool) -> bytes:
    """A tools/call; the same bytes but the id, so the client costs the same per call."""
    if modern:
        return _CALL_HEAD + str(request_id).encode() + _CALL_PARAMS + b',"_meta":' + _MODERN_META + b"}}"
    return _CALL_HEAD + str(request_id).encode() + _CALL_PARAMS + b"}}"


def parse_reply(target: Target, response: http.client.HTTPResponse, body: bytes, request_id: int) -> dict[str, Any]:
    """The JSON-RPC response to ``request_id`` from a JSON body or an SSE stream; its ``result``."""
    if response.status != 200:
        raise BenchError(f"{target.label}: HTTP {response.status} for id {request_id}: {body[:300]!r}")
    content_type = (response.getheader("content-type") or "").split(";")[0].strip()
    if content_type == "application/json":
        messages = [json.loads(body)]
    elif content_type == "text/event-stream":
        messages = []
        for block in body.replace(b"\r\n", b"\n").split(b"\n\n"):
            data = [line[5:].removeprefix(b" ") for line in block.split(b"\n") if line.startswith(b"data:")]
            if data and any(data):  # a priming event has an empty data field
                messages.append(json.loads(b"\n".join(data)))
    else:
        raise BenchError(f"{target.label}: unexpected content type {content_type!r}")
    for message in messages:
        if isinstance(message, dict) and message.get("id") == request_id and "method" not in message:
            if "result" not in message:
                raise BenchError(f"{target.label}: error for id {request_id}: {message.get('error')!r}")
            return message["result"]
    raise BenchError(f"{target.label}: no response to id {request_id} in {body[:300]!r}")


def check_echo(target: Target, result: dict[str, Any]) -> None:
    content = result.get("content") or [{}]
    if content[0].get("text") != ECHO_TEXT or result.get("isError"):
        raise BenchError(f"{target.label}: unexpected tools/call result {result!r}")


class Client:
    """One simulated MCP client: a keep-alive connection and, in the legacy era, a session."""

    def __init__(self, target: Target, port: int, modern: bool) -> None:
        self.target = target
        self.modern = modern
        self.connection = http.client.HTTPConnection(HOST, port, timeout=IO_TIMEOUT)
        self.session_id: str | None = None
        if modern:
            self.headers = {
                **BASE_HEADERS,
                "MCP-Protocol-Version": MODERN_VERSION,
                "Mcp-Method": "tools/call",
                "Mcp-Name": "echo",
            }
        else:
            self.headers = dict(BASE_HEADERS)

    def post(self, body: bytes, headers: dict[str, str]) -> tuple[http.client.HTTPResponse, bytes]:
        try:
            self.connection.request("POST", "/mcp", body, headers)
            response = self.connection.getresponse()
            return response, response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise BenchError(f"{self.target.label}: {exc!r}") from exc

    def handshake(self) -> None:
        """Legacy: initialize (a session id comes back), then notifications/initialized."""
        if self.modern:
            return
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "http-bench", "version": "1.0.0"},
            },
        }
        response, body = self.post(json.dumps(init).encode(), BASE_HEADERS)
        result = parse_reply(self.target, response, body, 0)
        self.session_id = response.getheader("mcp-session-id")
        if not self.session_id or result.get("protocolVersion") != LEGACY_VERSION:
            raise BenchError(f"{self.target.label}: bad initialize answer {result!r} (session {self.session_id!r})")
        self.headers = {**BASE_HEADERS, "Mcp-Session-Id": self.session_id, "MCP-Protocol-Version": LEGACY_VERSION}
        response, body = self.post(b'{"jsonrpc":"2.0","method":"notifications/initialized"}', self.headers)
        if response.status != 202:
            raise BenchError(f"{self.target.label}: HTTP {response.status} for notifications/initialized: {body!r}")

    def calls(self, first_id: int, count: int, latencies: list[float] | None) -> None:
        """``count`` tools/call one after the other; each latency (seconds) appended to ``latencies``."""
        headers, modern, target = self.headers, self.modern, self.target
        clock = time.perf_counter
        for request_id in range(first_id, first_id + count):
            body = call_body(request_id, modern)
            start = clock()
            response, data = self.post(body, headers)
            elapsed = clock() - start
            check_echo(target, parse_reply(target, response, data, request_id))
            if latencies is not None:
                latencies.append(elapsed)

    def close(self) -> None:
        """End the session (DELETE, as a polite client does) and the connection."""
        try:
            if self.session_id is not None:
                self.connection.request("DELETE", "/mcp", headers=self.headers)
                self.connection.getresponse().read()
        except (OSError, http.client.HTTPException):
            pass
        finally:
            self.connection.close()


# ------------------------------------------------------------------------------------- servers


class ServerProcess:
    """A server script on a free 127.0.0.1 port; ready once it accepts TCP connections."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.port = free_port()
        self._stderr: IO[bytes] = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, str(target.script), str(self.port)],
            stdin=subprocess.DEVNULL,
            stdout=self._stderr,
            stderr=self._stderr,
            cwd=HERE.parent,
        )

    def wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise BenchError(f"{self.target.label}: server exited during startup{self.stderr_tail()}")
            try:
                with socket.create_connection((HOST, self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.05)
        raise BenchError(f"{self.target.label}: not listening after {STARTUP_SECONDS:g} s{self.stderr_tail()}")

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise BenchError(f"{self.target.label}: server died{self.stderr_tail()}")

    def rss_mib(self, field_name: str) -> float:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        for row in status.splitlines():
            if row.startswith(field_name + ":"):
                return int(row.split()[1]) / 1024
        raise BenchError(f"{field_name} not in /proc/{self.process.pid}/status")

    def stop(self) -> None:
        """SIGTERM (uvicorn shuts down gracefully), then SIGKILL if it takes too long."""
        for step in (self.process.terminate, self.process.kill):
            if self.process.poll() is not None:
                break
            step()
            try:
                self.process.wait(timeout=STOP_SECONDS)
            except subprocess.TimeoutExpired:
                continue
        self._stderr.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()

    def stderr_tail(self) -> str:
        self._stderr.seek(0)
        tail = self._stderr.read()[-2000:].decode("utf-8", "replace").strip()
        return f"; output:\n{tail}" if tail else ""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


# ---------------------------------------------------------------------------------- measurements


def run_scenario(server: ServerProcess, scenario: Scenario, settings: Settings) -> tuple[float, list[float]]:
    """Calls per second and every call's latency (seconds) for one scenario against one server.

    Each client (a thread) opens its connection, shakes hands, warms up, then waits at a barrier;
    the clock runs from the barrier until the last client has its last response.
    """
    target = server.target
    if scenario.clients == 1:
        warmup, count = settings.warmup_calls, settings.sequential_calls
    else:
        warmup, count = settings.concurrent_warmup_calls, settings.calls_per_client
    latencies: list[list[float]] = [[] for _ in range(scenario.clients)]
    errors: list[BaseException] = []
    ready = threading.Barrier(scenario.clients + 1, timeout=STARTUP_SECONDS + IO_TIMEOUT)
    done = threading.Barrier(scenario.clients + 1, timeout=RUN_TIMEOUT)

    def client_main(index: int) -> None:
        client = Client(target, server.port, scenario.modern)
        try:
            try:
                client.handshake()
                client.calls(1, warmup, None)
            except BaseException as exc:
                errors.append(exc)
                ready.abort()
                return
            ready.wait()
            try:
                client.calls(1 + warmup, count, latencies[index])
            except BaseException as exc:
                errors.append(exc)
            done.wait()
        except threading.BrokenBarrierError:
            pass
        finally:
            client.close()

    threads = [
        threading.Thread(target=client_main, args=(i,), name=f"client-{i}", daemon=True)
        for i in range(scenario.clients)
    ]
    for thread in threads:
        thread.start()
    try:
        ready.wait()
        start = time.perf_counter()
        done.wait()
        elapsed = time.perf_counter() - start
    except threading.BrokenBarrierError:
        elapsed = 0.0
    for thread in threads:
        thread.join(timeout=IO_TIMEOUT * 2)
    if errors:
        raise errors[0] if isinstance(errors[0], BenchError) else BenchError(f"{target.label}: {errors[0]!r}")
    server.check_alive()
    samples = [value for per_client in latencies for value in per_client]
    if elapsed <= 0 or len(samples) != scenario.clients * count:
        raise BenchError(f"{target.label}: {scenario.label} did not complete")
    return len(samples) / elapsed, samples


@dataclass
class Samples:
    """Calls per second per repetition, and every latency, per target and scenario."""

    targets: tuple[Target, ...] = TARGETS
    rates: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    latencies: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    rss: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, target: Target, scenario: Scenario, rate: float, latencies: list[float]) -> None:
        self.rates.setdefault(target.key, {}).setdefault(scenario.key, []).append(rate)
        self.latencies.setdefault(target.key, {}).setdefault(scenario.key, []).extend(latencies)

    def value(self, target: Target, scenario: Scenario, metric: str) -> float:
        """Median calls/s over the repetitions; latency percentiles (ms) over all calls pooled."""
        if metric == "calls_per_s":
            return statistics.median(self.rates[target.key][scenario.key])
        latencies = self.latencies[target.key][scenario.key]
        if metric == "p50_ms":
            return statistics.median(latencies) * 1000
        if metric == "p99_ms":
            return statistics.quantiles(latencies, n=100, method="inclusive")[98] * 1000
        raise KeyError(metric)


def measure(settings: Settings, samples: Samples, deadline: float) -> None:
    """Start every server, run every scenario against each, round-robin; stop the servers."""
    servers: list[ServerProcess] = []
    watchdog = threading.Timer(max(1.0, deadline - time.monotonic()), lambda: [s.kill() for s in servers])
    watchdog.daemon = True
    watchdog.start()
    try:
        for target in samples.targets:
            servers.append(ServerProcess(target))
        startup = time.monotonic() + STARTUP_SECONDS
        for server in servers:
            server.wait_ready(startup)
        for server in servers:
            samples.rss[server.target.key] = {"start_rss_mib": server.rss_mib("VmRSS")}
        step = 0
        for rep in range(settings.reps):
            for scenario in SCENARIOS:
                order = servers[step % len(servers) :] + servers[: step % len(servers)]
                step += 1
                for server in order:
                    rate, latencies = run_scenario(server, scenario, settings)
                    samples.add(server.target, scenario, rate, latencies)
                    progress(f"rep {rep + 1}/{settings.reps}: {scenario.label}")
        for server in servers:
            samples.rss[server.target.key]["peak_rss_mib"] = server.rss_mib("VmHWM")
    finally:
        for server in servers:
            server.stop()
        watchdog.cancel()


# ---------------------------------------------------------------------------------- evaluation


def evaluate(samples: Samples) -> list[dict[str, Any]]:
    rows = []
    for goal in GOALS:
        for sdk in SDK_TARGETS:
            ratio = samples.value(PLAIN, goal.scenario, goal.metric) / samples.value(sdk, goal.scenario, goal.metric)
            rows.append(
                {
                    "metric": goal.key,
                    "against": sdk.key,
                    "ratio": ratio,
                    "target": goal.describe(),
                    "met": goal.met(ratio),
                }
            )
    return rows


def print_report(samples: Samples, verdicts: list[dict[str, Any]], settings: Settings, load: float | None) -> None:
    print(environment_line())
    if warning := load_warning(load):
        print(warning)
    print(
        f"Streamable HTTP on {HOST}, client http.client (keep-alive, one thread per client); "
        f"{settings.reps} repetition(s): calls/s median of repetitions, latency percentiles over all calls; "
        f"{settings.sequential_calls} sequential calls, {CLIENTS} x {settings.calls_per_client} concurrent calls "
        f"per repetition, after {settings.warmup_calls} / {settings.concurrent_warmup_calls} warm-up calls per client\n"
    )
    header = f"{'scenario':<34}{'unit':>8}" + "".join(f"{t.label:>22}" for t in samples.targets)
    print(header)
    print("-" * len(header))
    for scenario in SCENARIOS:
        for metric, unit in (("calls_per_s", "calls/s"), ("p50_ms", "ms"), ("p99_ms", "ms")):
            label = f"{scenario.label}: {metric.split('_')[0] if metric != 'calls_per_s' else 'throughput'}"
            cells = "".join(
                f"{samples.value(t, scenario, metric):>22,.0f}"
                if unit == "calls/s"
                else f"{samples.value(t, scenario, metric):>22,.2f}"
                for t in samples.targets
            )
            print(f"{label:<34}{unit:>8}{cells}")
    for metric, label in (("start_rss_mib", "RSS after startup"), ("peak_rss_mib", "peak RSS (end of run)")):
        cells = "".join(f"{samples.rss[t.key][metric]:>22,.1f}" for t in samples.targets)
        print(f"{label:<34}{'MiB':>8}{cells}")
    print()
    header = f"{'plainmcp / SDK':<34}{'target':>8}" + "".join(f"{'vs ' + t.label:>30}" for t in SDK_TARGETS)
    print(header)
    print("-" * len(header))
    by_key = {(v["metric"], v["against"]): v for v in verdicts}
    for goal in GOALS:
        cells = ""
        for sdk in SDK_TARGETS:
            verdict = by_key[(goal.key, sdk.key)]
            cells += f"{verdict['ratio']:>21.2f}x  {'met' if verdict['met'] else 'MISSED':<6}"
        print(f"{goal.label:<34}{goal.describe():>8}{cells}")
    if FLOOR in samples.targets:
        print_ceilings(samples)
    missed = [v for v in verdicts if not v["met"]]
    print()
    if missed:
        print(f"{len(missed)} of {len(verdicts)} target comparisons missed.")
    else:
        print(f"All {len(verdicts)} target comparisons met (against both SDK variants).")


def print_ceilings(samples: Samples) -> None:
    """The best throughput ratio any server could reach on this HTTP stack: the canned-response
    floor's calls/s over each SDK server's. A target above it cannot be met by MCP code alone."""
    print()
    header = f"{'ceiling: HTTP floor / SDK':<34}{'':>8}" + "".join(f"{'vs ' + t.label:>30}" for t in SDK_TARGETS)
    print(header)
    print("-" * len(header))
    for scenario in SCENARIOS:
        floor = samples.value(FLOOR, scenario, "calls_per_s")
        cells = "".join(f"{floor / samples.value(sdk, scenario, 'calls_per_s'):>21.2f}x        " for sdk in SDK_TARGETS)
        print(f"{scenario.label + ': calls/s':<34}{'':>8}{cells}")


def json_report(
    samples: Samples, verdicts: list[dict[str, Any]], settings: Settings, load: float | None
) -> dict[str, Any]:
    metrics = ("calls_per_s", "p50_ms", "p99_ms")
    return {
        "environment": environment_line(),
        "load_average_at_start": load,
        "settings": {**vars(settings), "clients": CLIENTS},
        "results": {
            t.key: {s.key: {m: samples.value(t, s, m) for m in metrics} for s in SCENARIOS} | samples.rss[t.key]
            for t in samples.targets
        },
        "calls_per_s_samples": samples.rates,
        "comparisons": verdicts,
        "all_met": all(v["met"] for v in verdicts),
    }


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="few calls, one repetition: a smoke run, not a measurement"
    )
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 if any target is missed against either SDK variant"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also measure a canned-response ASGI app on the same uvicorn: the HTTP stack's own cost, for reference",
    )
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    settings = QUICK if args.quick else FULL
    samples = Samples(TARGETS + (FLOOR,) if args.floor else TARGETS)
    load = load_average()
    try:
        measure(settings, samples, time.monotonic() + RUN_TIMEOUT)
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
    if args.check and not all(v["met"] for v in verdicts):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
