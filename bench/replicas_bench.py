"""What replicas cost and give: calls/s through a real proxy at 1, 2 and 3 replicas sharing a real Redis,
beside one process without Redis, and the time Redis adds per call, in one run.

    python3 dev.py bench-replicas [--seconds 5] [--connections 32] [--proxy nginx|haproxy]

The shipped ``plainmcp-everything`` (its defaults, ``--log-level warning`` so the access log does not
dominate) is driven by wrk (``bench/wrk/jsonrpc_post.lua``: every response checked) with ``tools/call
test_simple_text``, in two eras:

- 2026-07-28: stateless requests; Redis is on no request's path, so its cost should be ~0;
- 2025-11-25: calls in legacy sessions (one per wrk thread), each looked up in the shared session
  directory on whichever replica it lands.

Configurations, each started fresh: one process without Redis called directly; the same through the
proxy; then 1, 2 and 3 replicas with ``--redis`` through the proxy. "Redis adds" is the difference of
the per-call time (1/throughput) between 1 replica with Redis and one process without it, both through
the proxy. On a 2-core machine every process (wrk, proxy, replicas, Redis) shares the same two cores, so
more replicas cannot mean more calls/s here: the overhead ratio is the figure to read, not scaling.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))  # the replica harness lives with the tests: one copy of how a cluster starts
sys.path.insert(0, str(ROOT / "tools"))
import wrk_tool  # noqa: E402

from tests.e2e.http_server import free_port, wait_healthy  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402
from tests.replicas.cluster import Replica, server_command, start_proxy  # noqa: E402

SCRIPT = HERE / "wrk" / "jsonrpc_post.lua"
CHECK = "This is a simple text response for testing."
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ACCEPT = "application/json, text/event-stream"


@dataclass
class Result:
    label: str
    modern: float  # calls/s
    legacy: float


def call_body(modern: bool) -> str:
    params: dict = {"name": "test_simple_text", "arguments": {}}
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
        }
    return json.dumps(
        {"jsonrpc": "2.0", "id": 123456789, "method": "tools/call", "params": params}, separators=(",", ":")
    )


def legacy_session(url: str) -> str:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}  # fmt: skip
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    with httpx.Client(trust_env=False, timeout=10) as client:
        reply = client.post(url, json=init, headers=headers)
        reply.raise_for_status()
        session = reply.headers["mcp-session-id"]
        note = client.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                           headers={**headers, "Mcp-Session-Id": session, "MCP-Protocol-Version": LEGACY})  # fmt: skip
        note.raise_for_status()
    return session


def wrk(url: str, modern: bool, seconds: int, connections: int) -> float:
    threads = max(1, min(connections, os.cpu_count() or 1))
    head, tail = call_body(modern).split("123456789")
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    sessions: list[str] = []
    if modern:
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call", "Mcp-Name": "test_simple_text"})
    else:
        headers["MCP-Protocol-Version"] = LEGACY
        sessions = [legacy_session(url) for _ in range(threads)]
    command = [
        wrk_tool.ensure(), "--threads", str(threads), "--connections", str(connections), "--duration", f"{seconds}s",
        "--timeout", "10s", "--script", str(SCRIPT), url, "--",
        CHECK, head, tail, str(len(headers)), *(f"{k}: {v}" for k, v in headers.items()), *sessions,
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=seconds + 60)
    lines = [line for line in done.stdout.splitlines() if line.startswith("WRK_RESULT ")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"wrk failed: {done.stderr[-400:]}")
    result = json.loads(lines[-1].removeprefix("WRK_RESULT "))
    if result["bad"] or result["socket_errors"]:
        raise SystemExit(
            f"{url}: {result['bad']} bad responses, {result['socket_errors']} socket errors ({result['first_bad']!r})"
        )
    return result["requests"] / (result["duration_us"] / 1e6)


def measure(
    label: str, count: int, redis_url: str | None, proxy: str | None, args: argparse.Namespace, work: Path
) -> Result:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    members = [
        Replica(
            i,
            free_port(),
            server_command("everything", redis_url, "--log-level", "warning"),
            env,
            work / f"{label}-{i}.log",
        )
        for i in range(1, count + 1)
    ]
    front = None
    try:
        for member in members:
            member.start()
        if proxy is not None:
            front = start_proxy(proxy, [m.port for m in members], work)
            url = front.url
        else:
            url = members[0].base_url + "/mcp"
        wait_healthy(url.rsplit("/", 1)[0], time.monotonic() + 10)
        wrk(url, True, 1, args.connections)  # warm-up
        modern = wrk(url, True, args.seconds, args.connections)
        legacy = wrk(url, False, args.seconds, args.connections)
        return Result(label, modern, legacy)
    finally:
        if front is not None:
            front.stop()
        for member in members:
            member.stop()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--proxy", choices=("nginx", "haproxy"), default="nginx")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="plainmcp-bench-replicas-") as scratch:
        work = Path(scratch)
        (work / "redis").mkdir()
        redis = RedisServer(work / "redis")
        redis.start()
        try:
            results = [
                measure("1 process, no Redis, direct", 1, None, None, args, work),
                measure(f"1 process, no Redis, {args.proxy}", 1, None, args.proxy, args, work),
            ]
            for count in (1, 2, 3):
                redis.flush()
                results.append(
                    measure(
                        f"{count} replica{'s' if count > 1 else ''} + Redis, {args.proxy}",
                        count,
                        redis.url,
                        args.proxy,
                        args,
                        work,
                    )
                )
        finally:
            redis.stop()
    print(f"\n{'configuration':<36} {'2026-07-28 calls/s':>20} {'legacy calls/s':>16}")
    for result in results:
        print(f"{result.label:<36} {result.modern:>20,.0f} {result.legacy:>16,.0f}")
    base, shared = results[1], results[2]
    for era, a, b in (("2026-07-28", base.modern, shared.modern), ("legacy", base.legacy, shared.legacy)):
        added = 1e6 / b - 1e6 / a
        print(f"Redis adds per call ({era}): {added:+.0f} us ({b / a:.2f}x the throughput of one process without it)")
    print(
        f"(wrk: {args.connections} connections, {args.seconds} s per run; {os.cpu_count()} CPUs shared by everything)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
