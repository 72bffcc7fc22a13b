#!/usr/bin/env python3
"""Benchmark: plainmcp-prompts against a prompt server written with the official MCP SDK.

Both serve the bundled library of plainmcp-prompts over stdio (the peer is
``bench/servers/prompts_sdk_peer.py``, SDK low-level ``Server``) and are driven by the same raw
client (newline-delimited JSON-RPC over pipes), so only the server differs. Measured, per server:

* ``prompts/list`` per second, sequential (send one, wait for its answer, repeat);
* ``prompts/get`` per second, sequential, of a multi-turn prompt with three arguments
  (``sql-from-question``).

Servers are interleaved round-robin; each figure is the median over the repetitions; the ratio
is plainmcp / SDK (higher is better for plainmcp). A benchmark, not a test: nothing is asserted.

    .venv/bin/python bench/prompts_bench.py [--quick] [--calls N] [--reps N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LIBRARY = ROOT / "servers" / "prompts" / "src" / "plainmcp_prompts" / "library"
TIMEOUT = 300.0

TARGETS = {
    "plainmcp-prompts": [sys.executable, "-m", "plainmcp_prompts"],
    "SDK low-level Server": [sys.executable, str(HERE / "servers" / "prompts_sdk_peer.py"), str(LIBRARY)],
}
GET_ARGUMENTS = {
    "question": "Which customers ordered twice last month?",
    "schema": "CREATE TABLE orders (id INTEGER, customer TEXT, placed DATE);",
    "dialect": "sqlite",
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


class RawClient:
    def __init__(self, command: list[str]) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr)
        self.watchdog = threading.Timer(TIMEOUT, self.process.kill)
        self.watchdog.daemon = True
        self.watchdog.start()
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(_line(message))
        self.process.stdin.flush()
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.stderr.seek(0)
                raise SystemExit(f"server closed stdout:\n{self.stderr.read().decode()[-2000:]}")
            answer = json.loads(line)
            if answer.get("id") == self.next_id and "method" not in answer:
                if "error" in answer:
                    raise SystemExit(f"{method} failed: {answer['error']}")
                return answer["result"]

    def handshake(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "prompts-bench", "version": "1"},
            },
        )
        assert self.process.stdin
        self.process.stdin.write(_line({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        self.process.stdin.flush()

    def close(self) -> None:
        assert self.process.stdin
        self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.watchdog.cancel()
        self.stderr.close()


def rate(client: RawClient, calls: int, method: str, params: dict[str, Any] | None) -> float:
    started = time.perf_counter()
    for _ in range(calls):
        client.request(method, params)
    return calls / (time.perf_counter() - started)


def measure(command: list[str], calls: int) -> dict[str, float]:
    client = RawClient(command)
    try:
        client.handshake()
        listed = client.request("prompts/list")["prompts"]
        assert any(p["name"] == "sql-from-question" for p in listed), "the library is not served"
        got = client.request("prompts/get", {"name": "sql-from-question", "arguments": GET_ARGUMENTS})
        assert len(got["messages"]) == 3, got
        rate(client, max(10, calls // 10), "prompts/list", None)  # warm-up
        return {
            "prompts/list": rate(client, calls, "prompts/list", None),
            "prompts/get": rate(
                client, calls, "prompts/get", {"name": "sql-from-question", "arguments": GET_ARGUMENTS}
            ),
        }
    finally:
        client.close()


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few calls), not a measurement")
    parser.add_argument("--calls", type=int, default=2000, help="requests per measurement")
    parser.add_argument("--reps", type=int, default=5, help="repetitions per server (interleaved)")
    args = parser.parse_args(argv)
    calls, reps = (50, 1) if args.quick else (args.calls, args.reps)
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in TARGETS}
    names = list(TARGETS)
    for rep in range(reps):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            for metric, value in measure(TARGETS[name], calls).items():
                samples[name].setdefault(metric, []).append(value)
        print(f"repetition {rep + 1}/{reps} done", file=sys.stderr)
    plain, sdk = names
    print(f"\nprompts over stdio, {calls} sequential requests, median of {reps} (requests/s)")
    print(f"{'metric':<14}{plain:>20}{sdk:>24}{'ratio':>10}")
    for metric in ("prompts/list", "prompts/get"):
        ours, theirs = (statistics.median(samples[n][metric]) for n in (plain, sdk))
        print(f"{metric:<14}{ours:>20,.0f}{theirs:>24,.0f}{ours / theirs:>9.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
