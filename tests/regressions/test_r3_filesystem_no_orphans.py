"""Issue 26.11: a filesystem server killed with ``SIGKILL`` left its regex worker running (seen at 36%
of a core for 15 minutes, with PPID 1). Every helper process must die with its server, however the
server ends. A real server process runs a backtracking search in its worker; the server is killed
(``SIGKILL``, ``SIGTERM``, or its stdin closed) and ``/proc`` must show the worker gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.servers.filesystem.test_hardening import command

#: How long a dead server's worker may take to go (the kernel's signal is immediate; the watcher thread
#: checks twice a second).
GONE_WITHIN = 5.0


def children_named(parent: int, word: bytes) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                ppid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                line = cmdline.read()
        except OSError:
            continue
        if ppid == parent and word in line:
            found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for a reaper that never comes counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def start_search(tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    """A server (plain pipes, no client library) whose worker runs ``(a+)+$`` on a crafted line."""
    (tmp_path / "crafted.txt").write_text("a" * 40 + "!\n")
    server = subprocess.Popen(
        command(tmp_path, "--search-timeout", "120"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None
    messages = [
        b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}',
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"search_content",'
        b'"arguments":{"path":".","query":"(a+)+$","regex":true}}}',
    ]
    server.stdin.write(b"\n".join(messages) + b"\n")
    server.stdin.flush()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        workers = children_named(server.pid, b"grep_worker")
        if workers:
            return server, workers[0]
        time.sleep(0.05)
    server.kill()
    raise AssertionError("no worker started")


def wait_gone(pid: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["SIGKILL", "SIGTERM", "stdin closed"])
def test_r3_filesystem_regex_worker_dies_with_its_server(tmp_path: Path, how: str) -> None:
    server, worker = start_search(tmp_path)
    try:
        time.sleep(0.3)
        assert alive(worker)  # it is backtracking
        if how == "stdin closed":
            assert server.stdin is not None
            server.stdin.close()
        else:
            server.send_signal(getattr(signal, how))
        server.wait(timeout=15)
        assert wait_gone(worker), f"the worker {worker} outlived its server ({how})"
    finally:
        if alive(worker):
            os.kill(worker, signal.SIGKILL)
        if server.poll() is None:
            server.kill()
        server.wait()


def test_r3_filesystem_worker_started_for_a_parent_already_gone_exits_at_once(tmp_path: Path) -> None:
    # The parent the worker is told of is not its parent (gone before the worker could ask the kernel):
    # it exits at once instead of searching.
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        worker = subprocess.run(
            [sys.executable, "-m", "plainmcp_filesystem.grep_worker", str(fd), "1"],
            input=b"{}",
            pass_fds=(fd,),
            capture_output=True,
            timeout=30,
        )
    finally:
        os.close(fd)
    assert worker.returncode == 1 and worker.stdout == b""
