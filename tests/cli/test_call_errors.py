"""``plainmcp call`` when things go wrong as users make them: a mistyped tool gets a "did you mean", an
ordinary JSON-RPC error does not show the server's start-up log as its "last words", and Ctrl-C exits
130 (documented) with one line."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from .support import EVERYTHING, plainmcp

BIN = Path(sys.executable).parent


def _sqlite(tmp_path: Path) -> str:
    with sqlite3.connect(tmp_path / "shop.db") as db:
        db.execute("create table items (name text)")
    return f"{BIN / 'plainmcp-sqlite'} --db {tmp_path / 'shop.db'}"


def test_call_mistyped_tool_suggests_the_close_name(tmp_path) -> None:
    ran = plainmcp("call", _sqlite(tmp_path), "list_table")
    assert ran.code == 1
    assert "Unknown tool: list_table (did you mean list_tables?)" in ran.err


def test_call_jsonrpc_error_prints_no_last_words(tmp_path) -> None:
    ran = plainmcp("call", _sqlite(tmp_path), "no_such_tool_at_all")
    assert ran.code == 1
    assert "last words" not in ran.err
    assert "serving on stdio" not in ran.err  # the server's start-up log line
    assert len(ran.err.splitlines()) == 1


def test_call_server_that_dies_still_shows_its_last_words(tmp_path) -> None:
    ran = plainmcp("call", f"{BIN / 'plainmcp-sqlite'} --db {tmp_path / 'missing.db'}", "list_tables")
    assert ran.code == 1
    assert "the server's last words on stderr:" in ran.err


def test_call_ctrl_c_exits_130_with_one_line() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "plainmcp.cli", "call", "--arg", "seconds=60", "slow_compute", "--", *EVERYTHING],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        time.sleep(3)  # started, and the call is out (the tool works for 60 s)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines()[-1] == "plainmcp: interrupted"
    assert "Traceback" not in err and out == ""
