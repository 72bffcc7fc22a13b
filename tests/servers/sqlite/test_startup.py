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
    return subprocess.run([SCRIPT, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, **user)


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


def test_db_missing_in_read_only_mode_fails_at_start(tmp_path):
    path = tmp_path / "typo.db"
    line = refused(start("--db", str(path)))
    assert line == f"plainmcp-sqlite: --db {path}: no such file (read-only mode does not create one)"
    assert not path.exists()


def test_allow_write_creates_a_missing_database(tmp_path):
    path = tmp_path / "new.db"
    result = start("--allow-write", "--db", str(path))
    assert result.returncode == 0, result.stderr
    assert f"created an empty database at {path}" in result.stderr
    with sqlite3.connect(path) as connection:  # a database, with nothing in it
        assert connection.execute("select count(*) from sqlite_master").fetchone() == (0,)


def test_allow_write_where_no_file_can_be_made_fails_at_start(tmp_path):
    path = tmp_path / "no such folder" / "new.db"
    line = refused(start("--allow-write", "--db", str(path)))
    assert line.startswith(f"plainmcp-sqlite: --db {path} cannot be created: ")
    assert not path.parent.exists()


@pytest.mark.parametrize(
    ("args", "env", "named"),
    [
        (["--timeout", "0"], {}, "--timeout"),
        (["--max-rows", "0"], {}, "--max-rows"),
        (["--allow-write"], {}, "--allow-write needs --db"),
        ([], {"PLAINMCP_SQLITE_TIMEOUT": "nan"}, "--timeout"),
    ],
    ids=["timeout", "max-rows", "allow-write-without-db", "timeout-from-env"],
)
def test_a_wrong_option_value_is_a_usage_error(args, env, named):
    result = subprocess.run(
        [SCRIPT, *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30, env={**os.environ, **env}
    )
    assert result.returncode == 2, result
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("plainmcp-sqlite: error: ") and named in line
