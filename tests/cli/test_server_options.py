"""Options every server gets from the shared command line: ``--log-file`` with rotation (and its
environment variables), and ``--help`` showing each option's default."""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from plainmcp.command_line import server_arguments

BIN = Path(sys.executable).parent
SERVERS = ("everything", "filesystem", "prompts", "sqlite", "weather")


def _session(count: int) -> str:
    """An initialize, then ``count`` pings."""
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        *({"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(1, count + 1)),
    ]
    return "".join(json.dumps(message) + "\n" for message in messages)


def _everything(*args: str, env: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "plainmcp-everything"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


def test_log_file_gets_the_lines_and_stderr_keeps_warnings_only(tmp_path) -> None:
    log = tmp_path / "server.log"
    ran = _everything("--log-file", str(log), stdin=_session(1))
    assert ran.returncode == 0, ran.stderr
    assert " INFO " not in ran.stderr
    assert "plainmcp-everything 0.1.0 serving on stdio" in log.read_text()


def test_log_file_rotates_at_the_size_keeping_the_backups(tmp_path) -> None:
    log = tmp_path / "server.log"
    env = {"PLAINMCP_EVERYTHING_LOG_FILE": str(log), "PLAINMCP_EVERYTHING_LOG_MAX_BYTES": "200"}
    for _ in range(3):  # each run appends about four lines of ~90 bytes: a rollover every second line
        ran = _everything("--log-level", "debug", "--log-backups", "2", env=env, stdin=_session(1))
        assert ran.returncode == 0, ran.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["server.log", "server.log.1", "server.log.2"]
    for path in tmp_path.iterdir():
        lines = path.read_text().splitlines()
        assert lines and all(re.match(r"\d{4}-\d\d-\d\d ", line) for line in lines)
        assert path.stat().st_size <= 200 + len(max(lines, key=len)) + 1  # one record may cross the bound


def test_log_file_that_cannot_be_opened_is_one_line_and_exit_1(tmp_path) -> None:
    ran = _everything("--log-file", str(tmp_path / "missing" / "server.log"), stdin="")
    assert ran.returncode == 1
    assert ran.stderr.strip() == f"--log-file {tmp_path / 'missing' / 'server.log'}: No such file or directory"


@pytest.mark.parametrize("server", SERVERS)
def test_help_shows_the_default_of_every_option_that_has_one(server) -> None:
    config = importlib.import_module(f"plainmcp_{server}.config")
    parser = server_arguments(f"plainmcp-{server}", env_prefix=config.ENV_PREFIX)
    config.Config.add_arguments(parser)
    silent = [
        action.option_strings
        for action in parser._actions
        if action.default not in (None, False, "", [], argparse.SUPPRESS)
        and "default" not in (action.help or "").lower()
    ]
    assert silent == []
    assert "(default: 8000)" in " ".join(parser.format_help().split())


def test_help_shows_the_declared_default_not_a_secret_from_the_environment() -> None:
    ran = _everything(
        "--help", env={"PLAINMCP_EVERYTHING_JWT_SECRET": "s3cret-" * 6, "PLAINMCP_EVERYTHING_PORT": "9999"}
    )
    assert ran.returncode == 0, ran.stderr
    text = " ".join(ran.stdout.split())
    assert "(default: 8000)" in text and "9999" not in text and "s3cret" not in text
