"""Unreadable prompt directories, through the real console script (issue 14): a ``--dir`` that cannot
be read is one warning line at start-up and is skipped; the bundled library and the other directories
keep being served, and the server does not die after ``initialize``. A folder that cannot be read
inside a watched directory makes the watcher poll instead of ending the server.

Permissions mean nothing to root, so as root the server runs as the unprivileged user 65534.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .stdio_process import StdioServer
from .support import write

CONSOLE_SCRIPT = Path(sys.executable).parent / "plainmcp-prompts"
NOBODY = 65534


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A directory every user can read (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="plainmcp-prompts-"))
    path.chmod(0o755)
    yield path
    for folder, _, _ in os.walk(path):
        os.chmod(folder, 0o755)
    shutil.rmtree(path)


def unprivileged() -> dict[str, Any]:
    """Popen options under which a directory of mode 000 cannot be read."""
    if os.geteuid() != 0:
        return {}
    return {"user": NOBODY, "group": NOBODY, "extra_groups": [], "cwd": "/"}


def start(*args: str) -> StdioServer:
    assert CONSOLE_SCRIPT.exists(), f"the console script is not installed: {CONSOLE_SCRIPT}"
    return StdioServer([str(CONSOLE_SCRIPT), "--debounce-ms", "50", *args], **unprivileged())


def names(server: StdioServer) -> list[str]:
    return [prompt["name"] for prompt in server.request("prompts/list")["prompts"]]


def test_an_unreadable_dir_is_one_warning_and_everything_else_keeps_serving(scratch):
    locked, good = scratch / "locked", scratch / "good"
    write(locked, "hidden-away.md", "Never {{served}}")
    write(good, "greet.md", "Hello {{who}}")
    locked.chmod(0)
    with start("--dir", str(locked), "--dir", str(good)) as server:
        server.initialize()
        # The watcher starts once the server is served: the moment the old server died.
        server.wait_for_stderr("watching")
        time.sleep(0.3)
        served = names(server)
        assert "greet" in served and "code-review" in served  # the other dir and the bundled library
        assert "hidden-away" not in served
        assert server.ping_seconds() < 1.0
        assert server.process.poll() is None
    about_locked = [line for line in server.stderr.splitlines() if str(locked) in line and "watching" not in line]
    assert len(about_locked) == 1 and "cannot be read (permission denied)" in about_locked[0], server.stderr
    assert "Traceback" not in server.stderr


def test_an_unreadable_folder_inside_a_watched_dir_falls_back_to_polling(scratch):
    good = scratch / "good"
    write(good, "greet.md", "Hello {{who}}")
    (good / "private").mkdir()
    (good / "private").chmod(0)
    with start("--no-bundled", "--dir", str(good)) as server:
        server.initialize()
        server.wait_for_stderr("rescanning every")
        for name in ("later", "even-later"):  # the second one needs a rescan of its own
            write(good, f"{name}.md", "Added later")
            deadline = time.monotonic() + 10
            while name not in names(server):
                assert time.monotonic() < deadline, server.stderr
                time.sleep(0.1)
        assert server.ping_seconds() < 1.0
    assert "private: the folder cannot be read (permission denied); skipped" in server.stderr
    assert "Traceback" not in server.stderr
