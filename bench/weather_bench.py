"""plainmcp-weather's own costs, against the local stand-in (no network), for before/after comparisons.

    .venv/bin/python bench/weather_bench.py [--quick] [--json] [--source DIR]
    python3 dev.py bench-weather --quick

Measured on the real server process over stdio (plainmcp's client), the stand-in on 127.0.0.1:

- cold start: spawn to the answer of the first ``tools/list`` (median);
- cached calls per second: ``get_current_weather`` for one place, answered from the server's cache
  (the per-call cost of the server itself: validation, handler, summary, serialization);
- upstream calls per second: ``get_forecast`` for a new point each time (geocoding skipped, one
  forecast request to the stand-in per call: the HTTP client and the answer's parsing included);
- the ``tools/list`` answer's size;
- peak RSS (VmHWM) of the server process at the end.

``--source DIR`` runs the server from another checkout's ``servers/weather/src`` (put first on the
server's ``PYTHONPATH``), to compare a change against the code before it.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from plainmcp import connect_stdio
from plainmcp_weather.standin import StandIn


def server_command(url: str) -> list[str]:
    urls = [word for name in ("geocoding", "forecast", "nws") for word in (f"--{name}-url", url)]
    return [sys.executable, "-m", "plainmcp_weather", *urls, "--log-level", "warning"]


def environment(source: str | None) -> dict[str, str] | None:
    if source is None:
        return None
    return {"PYTHONPATH": os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))}


def peak_rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


async def cold_start(command: list[str], env: dict[str, str] | None, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        async with connect_stdio(command, env=env, stderr="discard") as client:
            await client.list_tools()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def rate(client: Any, seconds: float, arguments: Any, tool: str) -> float:
    """Calls per second of ``tool`` over about ``seconds``; ``arguments(i)`` gives call i's arguments."""
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        result = await client.call_tool(tool, arguments(calls))
        assert not result.get("isError"), result
        calls += 1
    return calls / (time.perf_counter() - started)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    seconds = 0.5 if args.quick else 3.0
    env = environment(args.source)
    with StandIn() as standin:
        command = server_command(standin.url)
        report: dict[str, Any] = {"cold_start_s": await cold_start(command, env, 3 if args.quick else 10)}
        async with connect_stdio(command, env=env, stderr="discard") as client:
            tools = await client.list_all_tools()
            report["tools"] = len(tools)
            report["tools_list_bytes"] = len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
            await client.call_tool("get_current_weather", {"location": "Paris, France"})  # warm the cache
            report["cached_calls_per_s"] = await rate(
                client, seconds, lambda i: {"location": "Paris, France"}, "get_current_weather"
            )
            report["upstream_calls_per_s"] = await rate(
                client, seconds, lambda i: {"latitude": 10 + i * 0.001, "longitude": 20, "days": 7}, "get_forecast"
            )
            report["peak_rss_kib"] = peak_rss_kib(client.process.pid)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs, half a second per rate (a smoke run)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--source", help="another checkout's servers/weather/src, run instead of this one")
    args = parser.parse_args()
    report = anyio.run(run, args)
    if args.json:
        print(json.dumps(report, indent=2))
        return
    for name, value in report.items():
        print(f"{name:24} {value:.4g}" if isinstance(value, float) else f"{name:24} {value}")


if __name__ == "__main__":
    main()
