#!/usr/bin/env python3
"""What plainmcp's HTTP app itself costs per call: the echo server's ``MCPApp`` driven by direct ASGI
calls in one process, with no sockets, no uvicorn and no client in the way.

``http_bench.py`` measures end to end, where the HTTP stack and the client take most of each call and
machine noise moves the numbers; this isolates the part our code decides, so a change to the
transports can be judged in microseconds. Both eras: a 2026-07-28 stateless ``tools/call`` POST, and a
``tools/call`` POST in a legacy (2025-11-25) session.

    .venv/bin/python bench/http_app_cost.py [--calls N] [--profile]

Prints the median over 5 rounds of the microseconds per call; ``--profile`` adds a cProfile of one
round per era (the functions that take the most time of their own). A benchmark, not a test: exit 0.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent / "servers"))

from plainmcp.http.app import MCPApp
from plainmcp_echo import server  # bench/servers: the echo server of every benchmark

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
ROUNDS = 5
BASE_HEADERS = [
    (b"host", b"127.0.0.1:8000"),
    (b"accept", b"application/json, text/event-stream"),
    (b"content-type", b"application/json"),
]


async def post(app: MCPApp, body: bytes, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """One POST /mcp through the app; returns the response start message."""
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()  # the client stays connected
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": BASE_HEADERS + headers,
        "query_string": b"",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "scheme": "http",
        "http_version": "1.1",
        "root_path": "",
    }
    await app(scope, receive, send)
    return sent[0]


def call_body(request_id: int, modern: bool) -> bytes:
    params: dict[str, Any] = {"name": "echo", "arguments": {"text": "hello, benchmark"}}
    if modern:
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


async def legacy_headers(app: MCPApp) -> list[tuple[bytes, bytes]]:
    """Open a legacy session (initialize, initialized); the headers its calls carry."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "cost", "version": "1"}},
    }
    start = await post(app, json.dumps(init).encode(), [])
    session = dict(start["headers"])[b"mcp-session-id"]
    headers = [(b"mcp-session-id", session), (b"mcp-protocol-version", LEGACY.encode())]
    await post(app, b'{"jsonrpc":"2.0","method":"notifications/initialized"}', headers)
    return headers


async def measure(calls: int, profile: bool) -> None:
    app = MCPApp(server)
    async with app.running():
        modern_headers = [
            (b"mcp-protocol-version", MODERN.encode()),
            (b"mcp-method", b"tools/call"),
            (b"mcp-name", b"echo"),
        ]
        eras: list[tuple[str, bool, list[tuple[bytes, bytes]]]] = [
            ("2026-07-28 stateless tools/call", True, modern_headers),
            ("2025-11-25 session tools/call", False, await legacy_headers(app)),
        ]
        for label, modern, headers in eras:
            next_id = 1

            async def round_of(
                count: int, headers: list[tuple[bytes, bytes]] = headers, modern: bool = modern, label: str = label
            ) -> float:
                nonlocal next_id
                bodies = [call_body(next_id + i, modern) for i in range(count)]
                next_id += count
                started = time.perf_counter()
                for body in bodies:
                    start = await post(app, body, headers)
                    if start["status"] != 200:
                        raise SystemExit(f"{label}: HTTP {start['status']}")
                return (time.perf_counter() - started) / count * 1e6

            await round_of(300)  # warm-up
            samples = [await round_of(calls) for _ in range(ROUNDS)]
            print(
                f"{label:<34} {statistics.median(samples):8.1f} us per call  (rounds: "
                + ", ".join(f"{s:.1f}" for s in samples)
                + ")"
            )
            if profile:
                await profiled(round_of, calls)


async def profiled(round_of: Callable[[int], Awaitable[float]], calls: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    await round_of(calls)
    profiler.disable()
    pstats.Stats(profiler).sort_stats("tottime").print_stats(20)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000, help="calls per round (default 3000)")
    parser.add_argument("--profile", action="store_true", help="also profile one round per era")
    args = parser.parse_args(argv)
    anyio.run(measure, args.calls, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
