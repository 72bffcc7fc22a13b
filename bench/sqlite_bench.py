"""plainmcp-sqlite against the official ``mcp-server-sqlite`` (PyPI), side by side in one run.

    .venv/bin/python bench/sqlite_bench.py [--quick]

The peer is installed into its own venv under ``.ci-cache/sqlite-bench`` (first run only); the
databases are generated there too. Both servers are driven over stdio by the same client
(plainmcp's), so the client's cost is the same on both sides. Reported, as ratios (peer / ours):

- cold start: spawn to the answer of the first ``tools/list``;
- ``list_tables`` calls per second;
- a 1,000-row ``SELECT`` per second (ours: ``query`` with ``max_rows`` 1000; the peer: ``read_query``);
- peak RSS (VmHWM) of the server process after a ``SELECT *`` on a 1,000,000-row table (ours returns
  its capped first rows; the peer materializes every row).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from plainmcp import connect_stdio

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".ci-cache" / "sqlite-bench"
PEER_VENV = CACHE / "peer-venv"
# The peer was written against mcp 1.x; mcp 2 removed the decorators it uses.
PEER_SPECS = ["mcp-server-sqlite==2025.4.25", "mcp>=1.6,<2"]


def peer_command(db: Path) -> list[str]:
    return [str(PEER_VENV / "bin" / "mcp-server-sqlite"), "--db-path", str(db)]


def our_command(db: Path) -> list[str]:
    # The result budget raised to the size limit: the 1,000-row SELECT must return all 1,000 rows, as the
    # peer does (the default budget, about 10k tokens, would cut it to about 550 rows and flatter us).
    return [
        sys.executable,
        "-m",
        "plainmcp_sqlite",
        "--db",
        str(db),
        "--log-level",
        "warning",
        "--result-budget",
        "1000000",
    ]


def install_peer() -> None:
    if (PEER_VENV / "bin" / "mcp-server-sqlite").exists():
        return
    CACHE.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], check=True)
    subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", *PEER_SPECS], check=True)


def make_db(path: Path, rows: int) -> Path:
    if path.exists():
        return path
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    connection = sqlite3.connect(partial)
    connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)")
    connection.execute("CREATE TABLE tags (item_id INTEGER REFERENCES items(id), tag TEXT)")
    connection.executemany(
        "INSERT INTO items (name, price) VALUES (?, ?)", ((f"item {i}", i * 0.25) for i in range(rows))
    )
    connection.commit()
    connection.close()
    partial.replace(path)
    return path


def peak_rss_kib(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


async def cold_start(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        async with connect_stdio(command) as client:
            await client.list_tools()
            times.append(time.perf_counter() - start)
    return sorted(times)[len(times) // 2]


async def rate(command: list[str], tool: str, arguments: dict, seconds: float) -> float:
    async with connect_stdio(command) as client:
        await client.call_tool(tool, arguments)  # warm
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            result = await client.call_tool(tool, arguments)
            assert not result.get("isError"), result
            count += 1
        return count / (time.perf_counter() - start)


async def peak_memory(command: list[str], tool: str, arguments: dict) -> int:
    async with connect_stdio(command) as client:
        try:
            await client.call_tool(tool, arguments, timeout=30)
        except Exception as failure:  # the peer's answer can pass the client's message-size limit
            print(f"  ({' '.join(command[:1])}: {type(failure).__name__}; memory measured anyway)", file=sys.stderr)
        return peak_rss_kib(client.process.pid)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs and a 100,000-row table")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="also measure the least any server can do (bench/servers/sqlite_floor.py): "
        "its calls/s over the peer's is the highest ratio reachable",
    )
    options = parser.parse_args()
    install_peer()
    small = make_db(CACHE / "items-10k.db", 10_000)
    big_rows = 100_000 if options.quick else 1_000_000
    big = make_db(CACHE / f"items-{big_rows}.db", big_rows)
    runs, seconds = (3, 1.0) if options.quick else (7, 3.0)
    select = "SELECT id, name, price FROM items ORDER BY id LIMIT 1000"
    results = {}
    for label, ours, peer in [
        (
            "cold start (s, median)",
            lambda: cold_start(our_command(small), runs),
            lambda: cold_start(peer_command(small), runs),
        ),
        (
            "list_tables per second",
            lambda: rate(our_command(small), "list_tables", {}, seconds),
            lambda: rate(peer_command(small), "list_tables", {}, seconds),
        ),
        (
            "1,000-row SELECT per second",
            lambda: rate(our_command(small), "query", {"sql": select, "max_rows": 1000}, seconds),
            lambda: rate(peer_command(small), "read_query", {"query": select}, seconds),
        ),
        (
            f"peak RSS after SELECT * on {big_rows:,} rows (MiB)",
            lambda: peak_memory(our_command(big), "query", {"sql": "SELECT * FROM items"}),
            lambda: peak_memory(peer_command(big), "read_query", {"query": "SELECT * FROM items"}),
        ),
    ]:
        print(f"measuring {label} ...", file=sys.stderr, flush=True)
        mine, theirs = await ours(), await peer()
        if "RSS" in label:
            mine, theirs = mine / 1024, theirs / 1024
        results[label] = (mine, theirs)
    print(f"{'measure':48} {'plainmcp-sqlite':>16} {'mcp-server-sqlite':>18} {'advantage':>10}")
    for label, (mine, theirs) in results.items():
        better = mine / theirs if "per second" in label else theirs / mine
        print(f"{label:48} {mine:16.3f} {theirs:18.3f} {better:9.1f}x")
    if options.floor:
        await print_floor(small, select, seconds, results)


async def print_floor(db: Path, select: str, seconds: float, results: dict[str, tuple[float, float]]) -> None:
    """The floor server's rates and the ceilings they set (floor calls/s over the peer's)."""
    floor = [sys.executable, str(ROOT / "bench" / "servers" / "sqlite_floor.py"), str(db)]
    rates = {
        "list_tables per second": await rate(floor, "list_tables", {}, seconds),
        "1,000-row SELECT per second": await rate(floor, "query", {"sql": select}, seconds),
    }
    print(f"\n{'floor (sqlite3 + structured rows only)':48} {'floor':>16} {'ceiling vs peer':>18}")
    for label, floor_rate in rates.items():
        print(f"{label:48} {floor_rate:16.3f} {floor_rate / results[label][1]:17.1f}x")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    asyncio.run(main())
