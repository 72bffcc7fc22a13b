"""Searches, trees and listings say what they could not read (issue 27, item 9).

The tests run as root, where ``chmod 000`` stops nothing. So the server reads as the unprivileged
user ``nobody``: in memory, the calls run in a thread whose file-system uid is set to nobody
(``setfsuid`` is per thread on Linux and drops the file capabilities with it); over stdio, the server
process runs under ``setpriv``. Each test checks first that the locked entries really fail with EACCES
for that reader. Files that vanish during a walk are removed between the walk's listing and its
open, in the walk itself (race-free).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.anchored import DIR_FLAGS
from plainmcp_filesystem.config import Config
from plainmcp_filesystem.search import Grep, GrepRequest
from plainmcp_filesystem.server import build_server
from plainmcp_filesystem.skipped import FIRST
from plainmcp_filesystem.walk import walk

from .conftest import text_of

NOBODY = 65534
SETPRIV = shutil.which("setpriv")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="setfsuid and setpriv are Linux")


@pytest.fixture
def locked_tree() -> Iterator[Path]:
    """A tree nobody can reach (in /tmp, mode 755), holding a locked directory and a locked file."""
    base = Path(tempfile.mkdtemp(prefix="plainmcp-skipped-"))
    base.chmod(0o755)
    root = base / "root"
    (root / "open").mkdir(parents=True)
    (root / "locked").mkdir()
    (root / "a.txt").write_text("needle a\n")
    (root / "open" / "b.txt").write_text("needle b\n")
    (root / "locked" / "c.txt").write_text("needle c\n")
    (root / "secret.txt").write_text("needle secret\n")
    for path in (root, root / "open"):
        path.chmod(0o755)
    (root / "locked").chmod(0o000)
    (root / "secret.txt").chmod(0o000)
    try:
        yield root
    finally:
        (root / "locked").chmod(0o755)
        shutil.rmtree(base)


def _setfsuid(uid: int) -> None:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.setfsuid(uid)


def as_nobody(work: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``work`` on its own event loop in a thread that reads files as nobody."""
    outcome: list[Any] = []

    def run() -> None:
        _setfsuid(NOBODY)
        try:
            outcome.append(anyio.run(work))
        except BaseException as problem:  # handed to the test thread
            outcome.append(problem)
        finally:
            _setfsuid(0)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(60)
    assert outcome, "the call did not finish within 60 s"
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def _really_refused(root: Path) -> None:
    """Raise AssertionError unless the locked entries fail with EACCES for this thread."""
    for path, flags in ((root / "locked", DIR_FLAGS), (root / "secret.txt", os.O_RDONLY)):
        try:
            os.close(os.open(path, flags))
        except PermissionError:
            continue
        raise AssertionError(f"{path} was readable: the test would prove nothing")


def _server(root: Path) -> Any:
    return build_server(Config(roots=(str(root),), watch=False))


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search_files", {"pattern": "*.txt"}),
    ("search_content", {"query": "needle"}),
    ("search_content", {"query": "need+le", "regex": True}),  # in the worker process
    ("directory_tree", {}),
    ("list_directory", {"dirSizes": True}),
]


def _expected(root: Path, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    locked, secret = str(root / "locked"), str(root / "secret.txt")
    if tool == "search_content":
        return {"count": 2, "reasons": {"permissionDenied": 2}, "first": [locked, secret]}
    return {"count": 1, "reasons": {"permissionDenied": 1}, "first": [locked]}


def _check(root: Path, tool: str, args: dict[str, Any], answer: dict[str, Any]) -> None:
    assert not answer.get("isError"), answer
    expected = _expected(root, tool, args)
    assert answer["structuredContent"]["skipped"] == expected
    n = expected["count"]
    last = text_of(answer).splitlines()[-1]
    assert last == (
        f"{n} {'entry' if n == 1 else 'entries'} could not be read (permission denied: {n}); "
        f"first: {', '.join(expected['first'])}"
    )


def test_skipped_entries_are_reported_in_memory(locked_tree: Path) -> None:
    server = _server(locked_tree)

    # Not the regex search: its worker process is exec'd, and exec resets the file-system uid to root
    # (the stdio test below runs the whole server, worker included, as nobody).
    calls = [(tool, args) for tool, args in CALLS if not args.get("regex")]

    async def work() -> list[dict[str, Any]]:
        _really_refused(locked_tree)
        async with connect_in_memory(server) as client:
            return [await client.call_tool(tool, {"path": str(locked_tree), **args}) for tool, args in calls]

    for (tool, args), answer in zip(calls, as_nobody(work), strict=True):
        _check(locked_tree, tool, args, answer)


@pytest.mark.anyio
@pytest.mark.skipif(SETPRIV is None, reason="setpriv is not installed")
async def test_skipped_entries_are_reported_over_stdio_as_an_unprivileged_server(locked_tree: Path) -> None:
    nobody = [str(SETPRIV), f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    probe = "import os,sys\ntry: os.listdir(sys.argv[1])\nexcept PermissionError: sys.exit(13)"
    refused = subprocess.run([*nobody, sys.executable, "-c", probe, str(locked_tree / "locked")], timeout=30)
    assert refused.returncode == 13, "the locked directory was readable by nobody: the test would prove nothing"
    command = [*nobody, sys.executable, "-m", "plainmcp_filesystem", str(locked_tree), "--no-watch"]
    async with connect_stdio(command, cwd=str(locked_tree)) as client:
        for tool, args in CALLS:
            _check(locked_tree, tool, args, await client.call_tool(tool, {"path": str(locked_tree), **args}))


def test_skipped_paths_are_bounded_and_counted_whole(locked_tree: Path) -> None:
    for n in range(FIRST + 3):
        (locked_tree / "open" / f"shut{n}").mkdir(mode=0o000)
    server = _server(locked_tree)

    async def work() -> dict[str, Any]:
        async with connect_in_memory(server) as client:
            return await client.call_tool("directory_tree", {"path": str(locked_tree)})

    answer = as_nobody(work)
    skipped = answer["structuredContent"]["skipped"]
    assert skipped["count"] == FIRST + 4 and skipped["reasons"] == {"permissionDenied": FIRST + 4}
    assert len(skipped["first"]) == FIRST
    assert text_of(answer).splitlines()[-1].endswith(f" (and {FIRST + 4 - FIRST} more)")


@pytest.mark.anyio
async def test_skipped_nothing_leaves_the_result_as_it_was(tmp_path: Path) -> None:
    """A tree with nothing unreadable: the exact text of before, and no ``skipped`` field."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text("needle\n")
    (tmp_path / "sub" / "b.txt").write_text("no\n")
    root = str(tmp_path)
    expected = {
        "search_files": f"{root}/a.txt\n{root}/sub/b.txt",
        "search_content": f"{root}/a.txt:1:needle\n1 matching lines in 1 of 2 files searched; "
        "skipped 0 binary and 0 large files",
        "directory_tree": "a.txt\nsub/\n  b.txt",
        "list_directory": "sub/\na.txt\n\n1 file, 1 directory, 0 others",
    }
    calls = {
        "search_files": {"pattern": "*.txt"},
        "search_content": {"query": "needle"},
        "directory_tree": {},
        "list_directory": {},
    }
    async with connect_in_memory(_server(tmp_path)) as client:
        for tool, args in calls.items():
            answer = await client.call_tool(tool, {"path": root, **args})
            assert text_of(answer) == expected[tool], tool
            assert "skipped" not in answer["structuredContent"], tool


def _request(**options: Any) -> GrepRequest:
    fields: dict[str, Any] = {"query": "needle", "flags": 0, "include": (), "exclude": (), "context": 0}
    fields |= {"max_depth": 10, "max_results": 100, "max_file_bytes": 1 << 20, "max_bytes": 1 << 20}
    return GrepRequest(**fields, shown_length=1, **options)


def test_skipped_counts_files_and_directories_gone_during_the_walk(tmp_path: Path) -> None:
    """Removed after the walk listed them, before it opened them: counted as vanished, and the search
    goes on (a file gone here once failed the whole search_content)."""
    for name in ("a.txt", "b.txt", "d.txt"):
        (tmp_path / name).write_text("needle\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.txt").write_text("needle\n")
    grep = Grep(_request())
    fd = os.open(tmp_path, DIR_FLAGS)
    try:
        for entry in walk(fd, max_depth=10, skipped=grep.outcome.skipped):
            if entry.name == "a.txt":
                os.unlink(tmp_path / "b.txt")
                shutil.rmtree(tmp_path / "c")
            grep.feed(entry)
    finally:
        os.close(fd)
    outcome = grep.outcome
    assert [match["path"] for match in outcome.matches] == ["a.txt", "d.txt"]
    assert (outcome.skipped.count, outcome.skipped.reasons) == (2, {"vanished": 2})
    assert outcome.skipped.first == ["b.txt", "c"]


def test_skipped_counts_a_directory_swapped_for_a_link_during_the_walk(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x\n")
    (tmp_path / "b").mkdir()
    grep = Grep(_request())
    fd = os.open(tmp_path, DIR_FLAGS)
    try:
        for entry in walk(fd, max_depth=10, skipped=grep.outcome.skipped):
            if entry.name == "a.txt":
                (tmp_path / "b").rmdir()
                (tmp_path / "b").symlink_to("/etc")
    finally:
        os.close(fd)
    assert (grep.outcome.skipped.reasons, grep.outcome.skipped.first) == ({"changed": 1}, ["b"])
