#!/usr/bin/env python3
"""What one HTTP access line costs the event loop's thread, in one process, microseconds per line.

Four ways to write the same line (``POST /mcp 200 0.1 ms request_id=...`` with the access line's
fields), interleaved in rounds, stderr sent where the shell sends it (``2>/dev/null`` or a file):

* ``record``: ``logger.log(..., extra=fields)`` through a ``logging.StreamHandler`` with plainmcp's
  formatter, a write and a flush per line (the access log before issue 31);
* ``record, buffered``: the same record through :class:`plainmcp.logs.StderrLines` (any other log
  line now: no system call, written by the log writer's thread);
* ``later``: :func:`plainmcp.log_sink.log_later` on a running event loop, the access line's path now:
  ``later, caller`` is what the request pays (its values kept), ``later, batch`` what making the
  lines together costs afterwards, per line (:func:`plainmcp.log_sink.make_pending_lines`: no
  LogRecord, one formatting pass, written at once when the stream has room).

    .venv/bin/python bench/access_log_cost.py [text|json] 2>/dev/null

The end-to-end cost (calls/s with the access log on and off) is ``http_bench.py``'s. A benchmark,
not a test: exit 0.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import sys
import time
from typing import Any

from plainmcp import log_sink, logs

FORMAT = "%s %s %s %.1f ms"
ARGS = ("POST", "/mcp", 200, 0.123)
ROUNDS, LINES = 12, 5000


def fields() -> dict[str, Any]:
    return {
        "request_id": "7d569c7d-7efb-4b42-9383-24ee3a0a9b88",
        "method": "POST",
        "path": "/mcp",
        "status": 200,
        "duration_ms": 0.12,
        "bytes_in": 229,
        "bytes_out": 239,
        "mcp_method": "tools/call",
    }


def main(fmt: str) -> None:
    logger = logging.getLogger("plainmcp.http.exchange")
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    formatter_type = logs.JsonFormatter if fmt == "json" else logs.TextFormatter
    cap = logs.DependencyCap()
    stream = logging.StreamHandler(sys.stderr)
    buffered = logs.StderrLines(sys.stderr)
    for handler in (stream, buffered):
        handler.setFormatter(formatter_type())
        handler.addFilter(cap)

    def record() -> None:
        logger.log(logging.INFO, FORMAT, *ARGS, extra=fields())

    def render(*values: Any, brief: bool) -> tuple[str, dict[str, Any]]:
        return FORMAT % values, fields()

    async def later() -> tuple[float, float]:
        started = time.perf_counter()
        for _ in range(LINES):
            log_sink.log_later(logger, logging.INFO, render, ARGS)
        called = time.perf_counter()
        log_sink.make_pending_lines()  # the batches the loop's callbacks would make
        return called - started, time.perf_counter() - called

    ways = (("record", record, stream), ("record, buffered", record, buffered))
    samples: dict[str, list[float]] = {
        name: [] for name in ("record", "record, buffered", "later, caller", "later, batch")
    }
    for _ in range(ROUNDS):
        for name, way, handler in ways:
            root.handlers[:] = [handler]
            started = time.perf_counter()
            for _ in range(LINES):
                way()
            samples[name].append((time.perf_counter() - started) / LINES * 1e6)
            buffered.flush()
        root.handlers[:] = [buffered]
        caller, batch = asyncio.run(later())
        samples["later, caller"].append(caller / LINES * 1e6)
        samples["later, batch"].append(batch / LINES * 1e6)
        buffered.flush()
    for name, values in samples.items():
        print(f"{fmt:<5} {name:<17} min {min(values):6.2f} us  median {statistics.median(values):6.2f} us per line")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "text")
