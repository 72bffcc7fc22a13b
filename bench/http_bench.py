#!/usr/bin/env python3
"""Benchmark: a plainmcp Streamable HTTP server against the same server written with the official MCP SDK.

The echo servers (``bench/servers/*_http.py``, the stdio benchmark's servers served over HTTP on
127.0.0.1) run side by side for the whole run and are driven by ``wrk``, a compiled load generator
(``bench/wrk/jsonrpc_post.lua`` builds the JSON-RPC POSTs and checks every response), so neither
the client's own CPU nor its language caps the measurement, and only the server differs. Scenarios,
each at 1, 16 and 64 connections:

* legacy: sessions opened first (``initialize`` -> ``Mcp-Session-Id`` -> ``notifications/initialized``,
  by the Python client), then ``tools/call`` POSTs in them, one session per wrk thread;
* 2026-07-28: stateless POSTs (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` headers and
  the ``_meta`` envelope), no session.

Besides plainmcp's echo server (the core alone) and the two SDK servers on the same uvicorn stack
(httptools, uvloop), it runs the shipped ``plainmcp-everything`` as a user runs it (its console script,
``--transport http`` and no other option: the access log on; tool ``test_simple_text``), the same with
``--log-level warning`` (the access log off: its cost), the HTTP floor (a canned-response ASGI app: no
MCP code at all) and, for information, the SDK's ``MCPServer`` as its users run it by default. Servers
are interleaved round-robin per scenario (with a rotating start) so machine noise hits all of them
alike. The access log's cost is measured apart, in pairs of runs of the shipped server with the log on
and off, back to back. Then, on fresh processes, the RSS that 1,000 idle legacy sessions cost.

The SDK targets are judged on the shipped server, the idle-session target on the echo server; issue
20's floor goal (echo vs the HTTP floor at 1 connection) is shown, not judged: that issue was closed as
blocked with its measured floor. This is a benchmark, not a test: it exits 0 unless ``--check`` is
given and a target is missed.

    .venv/bin/python bench/http_bench.py [--quick] [--json] [--check]
    python3 dev.py bench-http [--quick] [--json] [--check]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
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
WRK_SCRIPT = HERE / "wrk" / "jsonrpc_post.lua"
sys.path.insert(0, str(HERE.parent / "tools"))  # the wrk locator is a development tool beside dev.py
import wrk_tool  # noqa: E402

HOST = "127.0.0.1"
LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
ECHO_TEXT = "hello, benchmark"
SIMPLE_TEXT = "This is a simple text response for testing."  # plainmcp-everything's test_simple_text
CONNECTIONS = (1, 16, 64)
STARTUP_SECONDS = 20.0  # a server that does not accept connections by then is a failure
IO_TIMEOUT = 10.0  # seconds for any one socket operation of the Python client, and wrk's --timeout
RUN_TIMEOUT = 1500.0  # the whole run; past it the servers are killed, so nothing can hang forever
STOP_SECONDS = 5.0


@dataclass(frozen=True)
class Target:
    """A server under test: a label, its command (``{port}`` stands for the port), the tool called, its
    arguments (JSON) and the text its answer holds."""

    key: str
    label: str
    command: tuple[str, ...]
    tool: str = "echo"
    arguments: str = json.dumps({"text": ECHO_TEXT})
    answer: str = ECHO_TEXT

    def argv(self, port: int) -> list[str]:
        return [part.replace("{port}", str(port)) for part in self.command]


def script(name: str) -> tuple[str, ...]:
    return (sys.executable, str(SERVERS_DIR / name), "{port}")


def shipped(name: str, *options: str) -> tuple[str, ...]:
    """A shipped server as its users run it over HTTP: its console script beside this interpreter."""
    console = Path(sys.executable).parent / name
    command = (str(console),) if console.exists() else (sys.executable, "-m", name.replace("-", "_"))
    return (*command, "--transport", "http", "--port", "{port}", *options)


PLAIN = Target("plainmcp", "plainmcp echo", script("plainmcp_echo_http.py"))
#: The shipped conformance server at its defaults (the access log on), and with it off (its cost).
EVERYTHING = Target(
    "everything", "plainmcp-everything", shipped("plainmcp-everything"), "test_simple_text", "{}", SIMPLE_TEXT
)
EVERYTHING_QUIET = Target(
    "everything_quiet",
    "everything, log warning",
    shipped("plainmcp-everything", "--log-level", "warning"),
    "test_simple_text",
    "{}",
    SIMPLE_TEXT,
)
SDK_LOWLEVEL = Target("sdk_lowlevel", "SDK low-level Server", script("sdk_lowlevel_echo_http.py"))
SDK_MCPSERVER = Target("sdk_mcpserver", "SDK MCPServer", script("sdk_mcpserver_echo_http.py"))
#: A canned-response ASGI app on the same uvicorn: the HTTP stack's and the client's own cost.
FLOOR = Target("http_floor", "HTTP floor", script("http_floor.py"))
#: MCPServer.run("streamable-http") on a default install (h11, anyio loop, access log): for information.
SDK_DEFAULT = Target("sdk_default", "SDK MCPServer default", script("sdk_default_echo_http.py"))
TARGETS = (EVERYTHING, EVERYTHING_QUIET, PLAIN, SDK_LOWLEVEL, SDK_MCPSERVER, FLOOR, SDK_DEFAULT)
SDK_TARGETS = (SDK_LOWLEVEL, SDK_MCPSERVER)
#: The servers whose idle-session RSS is measured (the floor keeps no sessions).
RSS_TARGETS = (PLAIN, SDK_LOWLEVEL, SDK_MCPSERVER)


@dataclass(frozen=True)
class Scenario:
    key: str
    label: str
    modern: bool
    connections: int


SCENARIOS = tuple(
    Scenario(f"{era_key}_c{connections}", f"{era} {connections} conn", modern, connections)
    for era_key, era, modern in (("legacy", "legacy", False), ("modern", MODERN_VERSION, True))
    for connections in CONNECTIONS
)


@dataclass(frozen=True)
class Goal:
    """One target of issues 20 and 31: ``ours``'s ``metric`` over ``against``'s, at least (or at most) ``bound``."""

    scenario: Scenario | None  # None: the idle-session RSS, measured apart from the scenarios
    metric: str  # "calls_per_s", "p99_ms" or "idle_session_kib"
    against: Target | None  # None: an absolute bound on plainmcp's own value
    bound: float
    higher_is_better: bool
    ours: Target = EVERYTHING
    #: False: shown beside the targets, not judged by ``--check`` (issue 20's floor goal, closed as
    #: blocked with its measured floor: the gap is the Python code any MCP server runs per call).
    judged: bool = True

    @property
    def key(self) -> str:
        scenario = self.scenario.key if self.scenario else "idle_sessions"
        return f"{scenario}.{self.ours.key}.{self.metric}" + (f".vs.{self.against.key}" if self.against else "")

    @property
    def label(self) -> str:
        metric = {"calls_per_s": "calls/s", "p99_ms": "p99", "idle_session_kib": "RSS per idle session"}[self.metric]
        where = f"{self.scenario.label}: " if self.scenario else ""
        versus = f" vs {self.against.label}" if self.against else " (KiB)"
        ours = {EVERYTHING.key: "everything", PLAIN.key: "echo"}[self.ours.key]
        return f"{where}{ours} {metric}{versus}"

    def met(self, value: float) -> bool:
        return value >= self.bound if self.higher_is_better else value <= self.bound

    def describe(self) -> str:
        unit = "x" if self.against else ""
        return f">= {self.bound:g}{unit}" if self.higher_is_better else f"<= {self.bound:.3g}{unit}"

    @property
    def paired(self) -> bool:
        """Judged on the back-to-back pairs of runs (:func:`measure_log_cost`), not the round-robin medians."""
        return self.against is EVERYTHING_QUIET


def _goals() -> tuple[Goal, ...]:
    """Issue 31: the SDK ratios hold for the shipped server with its access log on, and the log costs at
    most 5% at 16 connections; issue 20's floor and idle-session targets stay the core's (the echo)."""
    goals: list[Goal] = []
    for scenario in SCENARIOS:
        if scenario.connections == 1:
            goals.append(Goal(scenario, "calls_per_s", FLOOR, 0.7, True, PLAIN, judged=False))
            continue
        goals.append(Goal(scenario, "calls_per_s", SDK_LOWLEVEL, 3.0, True))
        goals.append(Goal(scenario, "calls_per_s", SDK_MCPSERVER, 4.0, True))
        goals.extend(Goal(scenario, "p99_ms", sdk, 1 / 3, False) for sdk in SDK_TARGETS)
        if scenario.connections == 16:
            goals.append(Goal(scenario, "calls_per_s", EVERYTHING_QUIET, 0.95, True))
    goals.append(Goal(None, "idle_session_kib", None, 20.0, False, PLAIN))
    return tuple(goals)


GOALS = _goals()


@dataclass
class Settings:
    """How much work one run does."""

    reps: int
    seconds: int  # one wrk run
    warmup_seconds: int  # one wrk run per server and scenario before the first repetition
    idle_sessions: int
    log_pairs: int  # back-to-back runs of the shipped server with its access log on and off, per era


FULL = Settings(reps=3, seconds=3, warmup_seconds=1, idle_sessions=1000, log_pairs=10)
QUICK = Settings(reps=1, seconds=1, warmup_seconds=1, idle_sessions=100, log_pairs=1)
#: The log-cost pairs' connections and wrk seconds per run.
LOG_PAIR_CONNECTIONS = 16
LOG_PAIR_SECONDS = 2


# ------------------------------------------------------------------------------------ the client


class BenchError(RuntimeError):
    """A server misbehaved (died, answered wrongly, or timed out)."""


ACCEPT = "application/json, text/event-stream"
BASE_HEADERS = {"Content-Type": "application/json", "Accept": ACCEPT}
_CALL_HEAD = b'{"jsonrpc":"2.0","id":'
_MODERN_META = json.dumps(
    {
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "http-bench", "version": "1.0.0"},
    },
    separators=(",", ":"),
).encode()


def call_body(target: Target, request_id: int, modern: bool) -> bytes:
    """A tools/call of ``target``'s tool; the same bytes but the id, so the client costs the same per call."""
    params = b',"method":"tools/call","params":{"name":' + json.dumps(target.tool).encode()
    params += b',"arguments":' + target.arguments.encode()
    if modern:
        return _CALL_HEAD + str(request_id).encode() + params + b',"_meta":' + _MODERN_META + b"}}"
    return _CALL_HEAD + str(request_id).encode() + params + b"}}"


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
    if content[0].get("text") != target.answer or result.get("isError"):
        raise BenchError(f"{target.label}: unexpected tools/call result {result!r}")


class Client:
    """The Python client (``http.client``): a keep-alive connection and, in the legacy era, a session. It opens
    the sessions wrk's threads call in and checks one call before each wrk run."""

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
                "Mcp-Name": target.tool,
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
            body = call_body(target, request_id, modern)
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
            target.argv(self.port),
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


@dataclass
class Run:
    """One wrk run against one server: what its done() reported."""

    calls_per_s: float
    p50_ms: float
    p99_ms: float


def wrk_threads(connections: int) -> int:
    """wrk threads for ``connections``: one per CPU at most (each is an epoll loop), never more than connections."""
    return max(1, min(connections, os.cpu_count() or 1))


def wrk_arguments(target: Target, scenario: Scenario, sessions: list[str]) -> list[str]:
    """The script's arguments (see ``bench/wrk/jsonrpc_post.lua``): check text, body around the id, headers, sessions."""
    body = call_body(target, 123456789, scenario.modern).decode()
    head, tail = body.split("123456789")
    if scenario.modern:
        headers = {
            **BASE_HEADERS,
            "MCP-Protocol-Version": MODERN_VERSION,
            "Mcp-Method": "tools/call",
            "Mcp-Name": target.tool,
        }
    else:
        headers = {**BASE_HEADERS, "MCP-Protocol-Version": LEGACY_VERSION}
    return [target.answer, head, tail, str(len(headers)), *(f"{k}: {v}" for k, v in headers.items()), *sessions]


def run_wrk(wrk: str, server: ServerProcess, scenario: Scenario, seconds: int) -> Run:
    """``scenario`` against ``server`` for ``seconds`` with wrk; legacy sessions are opened first and
    ended (DELETE) after. Every response must be a 200 with the echoed text."""
    target = server.target
    clients: list[Client] = []
    try:
        for _ in range(1 if scenario.modern else wrk_threads(scenario.connections)):
            client = Client(target, server.port, scenario.modern)
            clients.append(client)
            client.handshake()
            client.calls(1, 1, None)  # one checked call by the Python client: the server answers right
        sessions = [c.session_id for c in clients if c.session_id is not None]
        command = [
            wrk,
            "--threads",
            str(wrk_threads(scenario.connections)),
            "--connections",
            str(scenario.connections),
            "--duration",
            f"{seconds}s",
            "--timeout",
            f"{IO_TIMEOUT:g}s",
            "--script",
            str(WRK_SCRIPT),
            f"http://{HOST}:{server.port}/mcp",
            "--",
            *wrk_arguments(target, scenario, sessions),
        ]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + IO_TIMEOUT * 3)
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"{target.label}: wrk did not finish") from exc
    finally:
        for client in clients:
            client.close()
    server.check_alive()
    lines = [line for line in done.stdout.splitlines() if line.startswith("WRK_RESULT ")]
    if done.returncode != 0 or not lines:
        raise BenchError(f"{target.label}: wrk failed ({done.returncode}): {(done.stderr or done.stdout)[-500:]}")
    result = json.loads(lines[-1].removeprefix("WRK_RESULT "))
    if result["bad"] or result["socket_errors"] or not result["requests"]:
        raise BenchError(
            f"{target.label}: {scenario.label}: {result['bad']} bad responses, {result['socket_errors']} socket "
            f"errors in {result['requests']} (first bad: {result['first_bad']!r})"
        )
    return Run(
        calls_per_s=result["requests"] / (result["duration_us"] / 1e6),
        p50_ms=result["p50_us"] / 1000,
        p99_ms=result["p99_us"] / 1000,
    )


def idle_session_kib(server: ServerProcess, count: int) -> float:
    """The RSS (KiB) each of ``count`` idle legacy sessions adds: VmRSS after opening them (initialize and
    notifications/initialized, each session on a connection of its own, closed after; no session ended)
    minus before, over ``count``. The sessions are ended (DELETE) afterwards."""
    before = server.rss_mib("VmRSS")
    clients = []
    try:
        for _ in range(count):
            client = Client(server.target, server.port, modern=False)
            client.handshake()
            client.connection.close()  # the session stays open on the server; the socket does not
            clients.append(client)
        time.sleep(0.2)  # let the server finish the last exchange's bookkeeping
        after = server.rss_mib("VmRSS")
    finally:
        for client in clients:
            client.connection = http.client.HTTPConnection(HOST, server.port, timeout=IO_TIMEOUT)
            client.close()
    return (after - before) * 1024 / count


@dataclass
class Samples:
    """Every wrk run per target and scenario, and the RSS figures."""

    targets: tuple[Target, ...] = TARGETS
    runs: dict[str, dict[str, list[Run]]] = field(default_factory=dict)
    rss: dict[str, dict[str, float]] = field(default_factory=dict)
    idle_session_kib: dict[str, float | None] = field(default_factory=dict)
    #: Per scenario key, the calls/s ratio (log on / log off) of each back-to-back pair of runs.
    log_ratios: dict[str, list[float]] = field(default_factory=dict)

    def add(self, target: Target, scenario: Scenario, run: Run) -> None:
        self.runs.setdefault(target.key, {}).setdefault(scenario.key, []).append(run)

    def value(self, target: Target, scenario: Scenario, metric: str) -> float:
        """The median over the repetitions of calls/s, or of each run's p50 / p99 (ms)."""
        return statistics.median(getattr(run, metric) for run in self.runs[target.key][scenario.key])


def measure(wrk: str, settings: Settings, samples: Samples, deadline: float) -> None:
    """Start every server, run every scenario against each, round-robin; stop the servers. Then the
    idle-session RSS on fresh processes."""
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
        for server in servers:
            for scenario in SCENARIOS:
                progress(f"warm-up: {server.target.label}, {scenario.label}")
                run_wrk(wrk, server, scenario, settings.warmup_seconds)
        step = 0
        for rep in range(settings.reps):
            for scenario in SCENARIOS:
                order = servers[step % len(servers) :] + servers[: step % len(servers)]
                step += 1
                for server in order:
                    samples.add(server.target, scenario, run_wrk(wrk, server, scenario, settings.seconds))
                    progress(f"rep {rep + 1}/{settings.reps}: {scenario.label}")
        measure_log_cost(wrk, settings, samples, {server.target.key: server for server in servers})
        for server in servers:
            samples.rss[server.target.key]["peak_rss_mib"] = server.rss_mib("VmHWM")
        for server in servers:
            server.stop()
        servers.clear()
        for target in RSS_TARGETS:
            progress(f"idle sessions: {target.label}")
            server = ServerProcess(target)
            servers.append(server)
            server.wait_ready(time.monotonic() + STARTUP_SECONDS)
            try:
                samples.idle_session_kib[target.key] = idle_session_kib(server, settings.idle_sessions)
            except BenchError:
                if target is PLAIN:
                    raise
                samples.idle_session_kib[target.key] = None  # e.g. an SDK session cap: shown as n/a
    finally:
        for server in servers:
            server.stop()
        watchdog.cancel()


def measure_log_cost(wrk: str, settings: Settings, samples: Samples, servers: dict[str, ServerProcess]) -> None:
    """The access log's cost: runs of the shipped server with the log on and off, back to back, the order
    alternating, their calls/s ratio per pair. Round-robin medians put a whole round of other servers
    between the two, and on a shared machine the noise of a few seconds is larger than the 5% asked."""
    on, off = servers.get(EVERYTHING.key), servers.get(EVERYTHING_QUIET.key)
    if on is None or off is None:
        return
    for scenario in SCENARIOS:
        if scenario.connections != LOG_PAIR_CONNECTIONS:
            continue
        ratios = samples.log_ratios.setdefault(scenario.key, [])
        for pair in range(settings.log_pairs):
            progress(f"log cost {pair + 1}/{settings.log_pairs}: {scenario.label}")
            first, second = (on, off) if pair % 2 == 0 else (off, on)
            runs = {server.target.key: run_wrk(wrk, server, scenario, LOG_PAIR_SECONDS) for server in (first, second)}
            ratios.append(runs[EVERYTHING.key].calls_per_s / runs[EVERYTHING_QUIET.key].calls_per_s)


# ---------------------------------------------------------------------------------- evaluation


def goal_value(samples: Samples, goal: Goal) -> float:
    if goal.scenario is None:
        value = samples.idle_session_kib[goal.ours.key]
        assert value is not None
        return value
    if goal.paired and goal.scenario.key in samples.log_ratios:
        return statistics.median(samples.log_ratios[goal.scenario.key])
    ours = samples.value(goal.ours, goal.scenario, goal.metric)
    return ours / samples.value(goal.against, goal.scenario, goal.metric) if goal.against else ours


def evaluate(samples: Samples) -> list[dict[str, Any]]:
    rows = []
    for goal in GOALS:
        value = goal_value(samples, goal)
        row = {"goal": goal.key, "value": value, "target": goal.describe(), "met": goal.met(value)}
        rows.append(row | {"judged": goal.judged})
    return rows


def stack_line() -> str:
    import httptools
    import uvicorn
    import uvloop

    wrk = wrk_tool.locate() or "wrk"
    return (
        f"uvicorn {uvicorn.__version__} on httptools {httptools.__version__} and uvloop {uvloop.__version__} "
        f"(plainmcp, both SDK servers, the floor); {wrk_tool.version(wrk)}"
    )


def print_report(samples: Samples, verdicts: list[dict[str, Any]], settings: Settings, load: float | None) -> None:
    print(environment_line())
    print(stack_line())
    if warning := load_warning(load):
        print(warning)
    print(
        f"Streamable HTTP on {HOST}, driven by wrk ({settings.seconds} s per run, "
        f"one thread per CPU, legacy: one session per wrk thread); {settings.reps} interleaved repetition(s), "
        "medians over them of calls/s and of each run's p50/p99\n"
    )
    width = 24
    header = f"{'scenario':<30}{'unit':>8}" + "".join(f"{t.label:>{width}}" for t in samples.targets)
    print(header)
    print("-" * len(header))
    for scenario in SCENARIOS:
        for metric, unit, name in (
            ("calls_per_s", "calls/s", "throughput"),
            ("p50_ms", "ms", "p50"),
            ("p99_ms", "ms", "p99"),
        ):
            cells = "".join(
                f"{samples.value(t, scenario, metric):>{width},.{0 if unit == 'calls/s' else 2}f}"
                for t in samples.targets
            )
            print(f"{scenario.label + ': ' + name:<30}{unit:>8}{cells}")
    for metric, label in (("start_rss_mib", "RSS after startup"), ("peak_rss_mib", "peak RSS (end of run)")):
        cells = "".join(f"{samples.rss[t.key][metric]:>{width},.1f}" for t in samples.targets)
        print(f"{label:<30}{'MiB':>8}{cells}")
    cells = ""
    for t in samples.targets:
        kib = samples.idle_session_kib.get(t.key)
        cells += f"{'' if t not in RSS_TARGETS else 'n/a' if kib is None else f'{kib:,.1f}':>{width}}"
    print(f"{f'RSS per idle session ({settings.idle_sessions})':<30}{'KiB':>8}{cells}")
    print()
    header = f"{'issue 20 and 31 targets':<62}{'target':>10}{'measured':>12}"
    print(header)
    print("-" * (len(header) + 8))
    by_key = {v["goal"]: v for v in verdicts}
    for goal in GOALS:
        verdict = by_key[goal.key]
        unit = "x" if goal.against else ""
        outcome = "met" if verdict["met"] else "MISSED"
        if not goal.judged:
            outcome = f"{outcome.lower()} (information: issue 20, closed blocked)"
        print(f"{goal.label:<62}{goal.describe():>10}{verdict['value']:>11.2f}{unit:1}  {outcome}")
    print_log_pairs(samples)
    print_information(samples)
    judged = [v for v in verdicts if v["judged"]]
    missed = [v for v in judged if not v["met"]]
    print()
    if missed:
        print(f"{len(missed)} of {len(judged)} targets missed.")
    else:
        print(f"All {len(judged)} targets met.")


def print_log_pairs(samples: Samples) -> None:
    """The log-cost pairs behind the ``log warning`` targets: their median, spread and every ratio."""
    for key, ratios in samples.log_ratios.items():
        scenario = next(s for s in SCENARIOS if s.key == key)
        quartiles = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        print(
            f"  log on / log off, {scenario.label}, {len(ratios)} back-to-back pairs of {LOG_PAIR_SECONDS} s: "
            f"median {statistics.median(ratios):.3f}, quartiles {quartiles[0]:.3f}-{quartiles[2]:.3f} "
            f"({' '.join(f'{r:.2f}' for r in ratios)})"
        )


def print_information(samples: Samples) -> None:
    """Ratios with no target: plainmcp over each SDK server (the default-run one included), and the
    ceiling, the floor's calls/s over each, which no MCP code on this stack can exceed."""
    others = (SDK_LOWLEVEL, SDK_MCPSERVER, SDK_DEFAULT)
    print()
    columns = [("everything / " + t.key.removeprefix("sdk_"), EVERYTHING, t) for t in others]
    columns += [("echo / " + t.key.removeprefix("sdk_"), PLAIN, t) for t in others]
    columns += [("floor / " + t.key.removeprefix("sdk_"), FLOOR, t) for t in SDK_TARGETS]
    columns += [("log on / log off", EVERYTHING, EVERYTHING_QUIET)]
    print("calls/s ratios for information (no target); floor / SDK is the ceiling no MCP code on this stack passes")
    header = f"{'scenario':<30}" + "".join(f"{name:>25}" for name, _, _ in columns)
    print(header)
    print("-" * len(header))
    for scenario in SCENARIOS:
        cells = "".join(
            f"{samples.value(ours, scenario, 'calls_per_s') / samples.value(theirs, scenario, 'calls_per_s'):>24.2f}x"
            for _, ours, theirs in columns
        )
        print(f"{scenario.label:<30}{cells}")


def json_report(
    samples: Samples, verdicts: list[dict[str, Any]], settings: Settings, load: float | None
) -> dict[str, Any]:
    metrics = ("calls_per_s", "p50_ms", "p99_ms")
    return {
        "environment": environment_line(),
        "stack": stack_line(),
        "load_average_at_start": load,
        "settings": vars(settings),
        "results": {
            t.key: {s.key: {m: samples.value(t, s, m) for m in metrics} for s in SCENARIOS}
            | samples.rss[t.key]
            | {"idle_session_kib": samples.idle_session_kib.get(t.key)}
            for t in samples.targets
        },
        "runs": {t: {s: [vars(r) for r in runs] for s, runs in per.items()} for t, per in samples.runs.items()},
        "targets": verdicts,
        "log_ratios": samples.log_ratios,
        "all_met": all(v["met"] for v in verdicts if v["judged"]),
    }


# ------------------------------------------------------------------------------------------ main


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="short runs, one repetition: a smoke run, not a measurement"
    )
    parser.add_argument("--json", action="store_true", help="also print the results as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if any target of issues 20 and 31 is missed")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    settings = QUICK if args.quick else FULL
    try:
        wrk = wrk_tool.ensure()
    except wrk_tool.WrkError as exc:
        print(f"benchmark needs wrk: {exc}", file=sys.stderr)
        return 2
    samples = Samples()
    load = load_average()
    try:
        measure(wrk, settings, samples, time.monotonic() + RUN_TIMEOUT)
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
    if args.check and not all(v["met"] for v in verdicts if v["judged"]):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
