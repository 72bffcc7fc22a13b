"""Hostile input against the filesystem server (issue 15, classes 3 and 4 and the Medium items).

Most attacks run against a real server process (``python -m plainmcp_filesystem``): memory is read
from ``/proc/<pid>/status`` (``VmHWM``, the peak resident set), liveness is ``ping`` answered within
a second while the attack runs, and the 4 MiB stdio message limit is the real one.
"""

from __future__ import annotations

import base64
import bz2
import os
import sys
import time
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import MCPError, Server, connect_stdio
from plainmcp.testing import connect_in_memory

from tests.proc_status import memory_mib

from .conftest import Tree, text_of

pytestmark = pytest.mark.anyio

#: The issue's bound for any attack.
MAX_RSS_MIB = 300
WAIT = 10


def command(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", str(root), "--no-watch", *extra]


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used (``/proc/<pid>/stat``), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def grep_workers() -> list[int]:
    """This process's children that are regular-expression search workers."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                line = cmdline.read()
        except OSError:
            continue
        if parent == os.getpid() and b"grep_worker" in line:
            found.append(int(entry))
    return found


async def while_pinging(client: Any, work: Callable[[], Awaitable[Any]]) -> tuple[Any, float]:
    """Run ``work()`` while pinging every 50 ms; each ping must be answered within 1 s.
    Returns the work's result and the slowest ping."""
    slowest = 0.0
    done = anyio.Event()
    outcome: list[Any] = []

    async def pinger() -> None:
        nonlocal slowest
        while not done.is_set():
            started = time.monotonic()
            with anyio.fail_after(1.0):
                await client.ping()
            slowest = max(slowest, time.monotonic() - started)
            await anyio.sleep(0.05)

    async def worker() -> None:
        try:
            outcome.append(await work())
        finally:
            done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(pinger)
        group.start_soon(worker)
    return outcome[0], slowest


# ------------------------------------------------------------------------------ class 3: codecs


def write_bombs(root: Path) -> None:
    # 49 bytes of bz2 hold 10 MB of zeros, and the codec decodes concatenated streams: ~100 KB is 20 GB.
    (root / "bomb.txt").write_bytes(bz2.compress(b"\0" * 10_000_000, 9) * 2000)
    packer = zlib.compressobj(9)
    (root / "zbomb.txt").write_bytes(b"".join(packer.compress(b"\0" * (1 << 20)) for _ in range(64)) + packer.flush())


async def test_encoding_only_text_encodings_and_memory_stays_bounded(tmp_path: Path) -> None:
    write_bombs(tmp_path)
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    async with connect_stdio(command(tmp_path)) as client:
        pid = client.process.pid
        for name in ("bomb.txt", "zbomb.txt"):
            for encoding in (
                "bz2",
                "bz2_codec",
                "zlib",
                "zip",
                "base64",
                "hex",
                "rot13",
                "uu",
                "quopri",
                "punycode",
                "idna",
                "unicode_escape",
            ):
                with anyio.fail_after(WAIT):
                    refused = await client.call_tool("read_text_file", {"path": name, "encoding": encoding})
                assert refused.get("isError") is True, encoding
                assert "Not a text encoding" in text_of(refused), (encoding, text_of(refused))
        latin = await client.call_tool("read_text_file", {"path": "latin.txt", "encoding": "cp1252"})
        assert latin["structuredContent"]["content"] == "café\n"
        unknown = await client.call_tool("read_text_file", {"path": "latin.txt", "encoding": "no-such-codec"})
        assert unknown["isError"] and "Unknown encoding" in text_of(unknown)
        with anyio.fail_after(1.0):
            await client.ping()
        peak = memory_mib(pid)["VmHWM"]
    assert peak < MAX_RSS_MIB, f"peak RSS {peak} MiB"


# ------------------------------------------------------------------------ class 4: globs, regexes

#: 25 stars before a "b" that never comes: a backtracking engine tries every way to place them.
CRAFTED_GLOB = "*a" * 25 + "b"


async def test_glob_crafted_patterns_do_not_backtrack(tmp_path: Path) -> None:
    (tmp_path / "deep" / ("a" * 120)).mkdir(parents=True)
    (tmp_path / ("a" * 200)).write_text("x\n")
    (tmp_path / "deep" / ("a" * 120) / ("a" * 200)).write_text("x\n")
    path_glob = "**/" + CRAFTED_GLOB + "/**/" + CRAFTED_GLOB
    calls = [
        ("search_files", {"path": ".", "pattern": CRAFTED_GLOB}),
        ("search_files", {"path": ".", "pattern": path_glob}),
        ("search_files", {"path": ".", "pattern": "*", "excludePatterns": [CRAFTED_GLOB, path_glob]}),
        ("directory_tree", {"path": ".", "excludePatterns": [CRAFTED_GLOB, path_glob]}),
        ("search_content", {"path": ".", "query": "x", "include": [CRAFTED_GLOB, path_glob]}),
    ]
    async with connect_stdio(command(tmp_path)) as client:
        for name, arguments in calls:

            async def run(name: str = name, arguments: dict[str, Any] = arguments) -> Any:
                with anyio.fail_after(WAIT):
                    return await client.call_tool(name, arguments)

            result, slowest = await while_pinging(client, run)
            assert not result.get("isError"), (name, text_of(result))
            assert slowest < 1.0
        found = await client.call_tool("search_files", {"path": ".", "pattern": "*a"})
        assert len(found["structuredContent"]["matches"]) == 3
        too_long = await client.call_tool("search_files", {"path": ".", "pattern": "*" * 1001})
        assert too_long["isError"]


@pytest.fixture
def crafted(tree: Tree) -> Tree:
    """A line that makes ``(a+)+$`` backtrack for longer than anyone waits (2^40 ways to split it)."""
    (tree.root / "crafted.txt").write_text("a" * 40 + "!\n")
    return tree


async def test_regex_search_runs_out_of_the_event_loop_and_stops_at_its_deadline(
    make_server: Callable[..., Server], crafted: Tree
) -> None:
    async with connect_in_memory(make_server(search_timeout=1.0)) as client:
        started = time.monotonic()

        async def search() -> Any:
            return await client.call_tool("search_content", {"path": ".", "query": "(a+)+$", "regex": True})

        result, slowest = await while_pinging(client, search)
        elapsed = time.monotonic() - started
    assert result["isError"] and "longer than 1 s" in text_of(result)
    assert slowest < 1.0 and elapsed < 4.0
    assert grep_workers() == []


async def test_regex_search_cancelled_stops_its_worker(make_server: Callable[..., Server], crafted: Tree) -> None:
    async with connect_in_memory(make_server(search_timeout=60.0)) as client:
        with anyio.move_on_after(0.5):
            await client.call_tool("search_content", {"path": ".", "query": "(a+)+$", "regex": True})
        assert grep_workers()  # the worker was running the search when the call was cancelled ...
        with anyio.fail_after(1.0):
            await client.ping()
        for _ in range(40):  # ... and is gone shortly after
            if not grep_workers():
                break
            await anyio.sleep(0.05)
        assert grep_workers() == []
        quick = await client.call_tool("search_content", {"path": ".", "query": "^a+!$", "regex": True})
    assert quick["structuredContent"]["matches"][0]["path"].endswith("crafted.txt")


async def test_regex_searches_at_once_share_two_workers(make_server: Callable[..., Server], crafted: Tree) -> None:
    results: list[dict[str, Any]] = []
    peak = 0
    async with connect_in_memory(make_server(search_timeout=1.0)) as client:

        async def search() -> None:
            results.append(await client.call_tool("search_content", {"path": ".", "query": "(a+)+$", "regex": True}))

        async with anyio.create_task_group() as group:
            for _ in range(6):
                group.start_soon(search)
            for _ in range(15):
                peak = max(peak, len(grep_workers()))
                await anyio.sleep(0.05)
    assert 1 <= peak <= 2
    assert len(results) == 6 and all(result["isError"] for result in results)
    assert grep_workers() == []


async def test_regex_search_deadline_is_the_search_timeout_option(crafted: Tree) -> None:
    async with connect_stdio(command(crafted.root, "--search-timeout", "1.5")) as client:
        result = await client.call_tool("search_content", {"path": ".", "query": "(a+)+$", "regex": True})
    # The default deadline is 10 s: the message names the one the command line set.
    assert result["isError"] and "longer than 1.5 s" in text_of(result)


# ---------------------------------------------------------------- Medium: sizes, huge files, kills


async def test_media_and_resources_above_the_message_limit_are_clear_errors(tmp_path: Path) -> None:
    (tmp_path / "big.png").write_bytes(b"\x89PNG" + os.urandom(3_200_000))
    (tmp_path / "fits.png").write_bytes(b"\x89PNG" + os.urandom(3_000_000))
    async with connect_stdio(command(tmp_path)) as client:
        big = await client.call_tool("read_media_file", {"path": "big.png"})
        assert big["isError"] and "read_media_file returns files up to" in text_of(big)
        with pytest.raises(MCPError) as refused:
            await client.read_resource((tmp_path / "big.png").as_uri())
        assert refused.value.code == -32602 and "returns files up to" in refused.value.message
        fits = await client.call_tool("read_media_file", {"path": "fits.png"})
        assert len(base64.b64decode(fits["content"][0]["data"])) == 3_000_004
        read = await client.read_resource((tmp_path / "fits.png").as_uri())
        assert len(base64.b64decode(read["contents"][0]["blob"])) == 3_000_004


async def test_binary_text_and_huge_listings_are_cut_not_internal_errors(tmp_path: Path) -> None:
    (tmp_path / "binary.txt").write_bytes(bytes(range(32)) * 32768)  # 1 MiB, six JSON bytes each
    for index in range(8):
        (tmp_path / f"large{index}.txt").write_text("x" * 1_000_000)
    crowd = tmp_path / "crowd"
    crowd.mkdir()
    for index in range(1400):  # names of control characters: six JSON bytes each, twice per entry
        os.close(os.open(crowd / ("\x01" * 250 + f"{index:04d}"), os.O_CREAT | os.O_WRONLY))
    os.close(os.open(os.fsencode(tmp_path) + b"/a-undecodable-\xff\xfe", os.O_CREAT | os.O_WRONLY))
    async with connect_stdio(command(tmp_path)) as client:
        binary = await client.call_tool("read_text_file", {"path": "binary.txt"})
        assert not binary.get("isError") and binary["structuredContent"]["truncated"] is True
        assert "read_media_file" in text_of(binary)
        several = await client.call_tool("read_multiple_files", {"paths": [f"large{i}.txt" for i in range(8)]})
        assert not several.get("isError")
        assert any(file["truncated"] for file in several["structuredContent"]["files"])
        for name, arguments in [
            ("list_directory", {"path": "crowd"}),
            ("list_directory", {"path": "crowd", "sizes": True}),
            ("directory_tree", {"path": "crowd"}),
            ("search_files", {"path": "crowd", "pattern": "*"}),
        ]:
            listed = await client.call_tool(name, arguments)
            assert not listed.get("isError"), name
            assert listed["structuredContent"]["truncated"] is True, name
        read = await client.read_resource(crowd.as_uri())
        assert read["contents"][0]["text"].count("\n") >= 1000
        # A name that is not UTF-8 is listed by the tools, but has no resource URI a client could send.
        listed = await client.call_tool("list_directory", {"path": "."})
        assert "bytes:a-undecodable-%FF%FE" in listed["structuredContent"]["files"]
        resources = await client.list_all_resources()
        assert resources and not any("undecodable" in resource["uri"] for resource in resources)


async def test_line_range_of_a_huge_file_never_blocks_and_stops_when_cancelled(tmp_path: Path) -> None:
    huge = tmp_path / "huge.log"
    with open(huge, "wb") as file:  # sparse: 64 GiB of zeros, no newline, costing no disk
        file.truncate(64 << 30)
    near = tmp_path / "near.log"
    with open(near, "wb") as file:  # 256 MiB of zeros, then two lines
        file.truncate(256 << 20)
        file.seek(0, os.SEEK_END)
        file.write(b"\nsecond\nthird\n")
    async with connect_stdio(command(tmp_path)) as client:
        pid = client.process.pid
        ranged = await client.call_tool("read_text_file", {"path": "near.log", "startLine": 2, "endLine": 3})
        assert ranged["structuredContent"]["content"] == "second\nthird\n"

        async def read_far() -> None:
            with anyio.move_on_after(1.5):  # then cancelled: the client sends notifications/cancelled
                await client.call_tool("read_text_file", {"path": "huge.log", "startLine": 2})

        _, slowest = await while_pinging(client, read_far)
        assert slowest < 1.0
        await anyio.sleep(0.3)
        before = cpu_seconds(pid)
        await anyio.sleep(0.5)
        assert cpu_seconds(pid) - before < 0.2, "the cancelled read kept running"
        with anyio.fail_after(1.0):
            await client.ping()


#: The real server, killed (SIGKILL, by itself) at the moment it flushes a written file to disk:
#: after the data is written, before it gets its name. Nothing may be left behind.
KILLED_AT_FSYNC = (
    "import os, signal, sys\n"
    "os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)\n"
    "from plainmcp_filesystem.__main__ import main\n"
    "main()\n"
)


async def test_write_killed_mid_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("old content\n")
    before = sorted(os.listdir(tmp_path))
    for arguments in (
        {"path": "kept.txt", "content": "y" * 3_000_000},
        {"path": "new.txt", "content": "z" * 3_000_000},
    ):
        killed = [sys.executable, "-c", KILLED_AT_FSYNC, str(tmp_path), "--no-watch", "--allow-write"]
        with pytest.raises(Exception):  # noqa: B017 - the connection ends however the client reports it
            async with connect_stdio(killed) as client:
                with anyio.fail_after(WAIT):
                    await client.call_tool("write_file", arguments)
        assert sorted(os.listdir(tmp_path)) == before
        assert (tmp_path / "kept.txt").read_text() == "old content\n"


#: Killed at the only moment a temporary name exists: after the unnamed file got it, before the rename.
KILLED_AT_RENAME = (
    "import os, signal\n"
    "os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)\n"
    "from plainmcp_filesystem.__main__ import main\n"
    "main()\n"
)


async def test_write_killed_before_its_rename_is_cleaned_up_by_the_next_server(tmp_path: Path) -> None:
    (tmp_path / "kept.txt").write_text("old content\n")
    killed = [sys.executable, "-c", KILLED_AT_RENAME, str(tmp_path), "--no-watch", "--allow-write"]
    with pytest.raises(Exception):  # noqa: B017 - the connection ends however the client reports it
        async with connect_stdio(killed) as client:
            with anyio.fail_after(WAIT):
                await client.call_tool("write_file", {"path": "kept.txt", "content": "new"})
    leftovers = [name for name in os.listdir(tmp_path) if name.endswith(".plainmcp-tmp")]
    assert len(leftovers) == 1 and (tmp_path / "kept.txt").read_text() == "old content\n"
    hour_ago = time.time() - 3600  # the server was restarted an hour later
    os.utime(tmp_path / leftovers[0], (hour_ago, hour_ago))
    async with connect_stdio(command(tmp_path, "--allow-write")) as client:
        for _ in range(40):
            if not (tmp_path / leftovers[0]).exists():
                break
            await anyio.sleep(0.05)
        assert await client.call_tool("read_text_file", {"path": "kept.txt"})
    assert sorted(os.listdir(tmp_path)) == ["kept.txt"]


async def test_root_replaced_while_serving_keeps_serving_the_directory_opened(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    server = make_server(allow_write=True)
    os.rename(tree.root, tree.base / "moved")
    os.symlink(tree.outside, tree.root)  # the allowed directory's name now leads outside
    async with connect_in_memory(server) as client:
        read = await client.call_tool("read_text_file", {"path": "hello.txt"})
        assert read["structuredContent"]["content"] == "line 1\nline 2\nline 3\n"
        listed = await client.call_tool("list_directory", {"path": str(tree.root)})
        assert "secret.txt" not in listed["structuredContent"]["files"]
        await client.call_tool("write_file", {"path": "written.txt", "content": "inside"})
    assert (tree.base / "moved" / "written.txt").read_text() == "inside"
    assert not (tree.outside / "written.txt").exists()


async def test_a_deadline_during_the_worker_spawn_leaves_no_worker(
    make_server: Callable[..., Server], crafted: Tree
) -> None:
    """A deadline so short it lands while the worker process is being started: the spawn is shielded,
    so the process is still killed and reaped (it used to be lost, running, with nothing to kill it)."""
    async with connect_in_memory(make_server(search_timeout=0.001)) as client:
        for _ in range(5):
            result = await client.call_tool("search_content", {"path": ".", "query": "(a+)+$", "regex": True})
            assert result["isError"] and "longer than 0.001 s" in text_of(result)
            assert grep_workers() == []
