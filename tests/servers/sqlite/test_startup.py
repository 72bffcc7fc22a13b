"""Start-up through the real console script (issue 14): a ``--db`` that is not a SQLite database, is
a directory or cannot be read is one clear line on stderr and exit status 1, before serving;
a real database (empty, or locked by another process) starts."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .support import make_shop

SCRIPT = str(Path(sys.executable).parent / "plainmcp-sqlite")
#: Who runs the script when these tests run as root, for whom permission bits do not count.
NOBODY = 65534


def start(*args: str, as_nobody: bool = False) -> subprocess.CompletedProcess[str]:
    """The console script with stdin at end of file: a server that starts serves stdio, sees the
    end of its input and exits 0."""
    user = {"user": NOBODY, "group": NOBODY, "extra_groups": []} if as_nobody else {}
    return subprocess.run([SCRIPT, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=30, **user)


def refused(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


@pytest.mark.parametrize("allow_write", [False, True], ids=["read-only", "allow-write"])
def test_db_that_is_not_a_database_fails_at_start(tmp_path, allow_write):
    path = tmp_path / "notes.txt"
    path.write_text("these are notes, not a database\n")
    line = refused(start("--db", str(path), *(["--allow-write"] if allow_write else [])))
    assert line.startswith("plainmcp-sqlite: ")
    assert f"--db {path} is not a SQLite database" in line
    assert path.read_text() == "these are notes, not a database\n"  # never turned into one


@pytest.mark.parametrize("allow_write", [False, True], ids=["read-only", "allow-write"])
def test_db_that_is_a_directory_fails_at_start(tmp_path, allow_write):
    line = refused(start("--db", str(tmp_path), *(["--allow-write"] if allow_write else [])))
    assert f"--db {tmp_path} is a directory" in line


def test_db_that_cannot_be_read_fails_at_start():
    # Outside pytest's private temporary folder, so that another user may reach the file.
    folder = Path(tempfile.mkdtemp(prefix="plainmcp-sqlite-"))
    try:
        folder.chmod(0o755)
        path = make_shop(folder)
        path.chmod(0o000)
        line = refused(start("--db", str(path), as_nobody=os.geteuid() == 0))
        assert f"--db {path} cannot be read" in line
    finally:
        for item in folder.iterdir():
            item.unlink()
        folder.rmdir()


def test_real_databases_start(tmp_path):
    empty = tmp_path / "empty.db"
    empty.touch()  # a file of zero bytes is an empty SQLite database
    assert start("--db", str(empty)).returncode == 0
    # Held under an exclusive lock by another process: still a database; statements wait for it.
    path = make_shop(tmp_path)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        result = start("--db", str(path))
    finally:
        holder.close()
    assert result.returncode == 0, result.stderr
