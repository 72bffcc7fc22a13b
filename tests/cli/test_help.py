"""Every command's ``--help`` is complete: usage, options and the exit codes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .support import plainmcp

COMMANDS = ("inspect", "call", "read", "prompt", "tap", "config", "demo")


def test_help_console_script_lists_every_command_and_the_exit_codes() -> None:
    script = Path(sys.executable).parent / "plainmcp"
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0
    for command in COMMANDS:
        assert f"    {command} " in result.stdout
    assert "3  the tool ran and reported a failure (isError: true)" in result.stdout


@pytest.mark.parametrize("command", COMMANDS[:-1])
def test_help_of_each_command_states_its_exit_codes(command) -> None:
    ran = plainmcp(command, "--help")
    assert ran.code == 0
    assert f"usage: plainmcp {command}" in ran.out
    assert "exit codes" in ran.out


@pytest.mark.parametrize("command", ["inspect", "call", "read", "prompt"])
def test_help_connection_options_are_shared(command) -> None:
    out = plainmcp(command, "--help").out
    for option in ("--era", "--protocol-version", "--transport", "--header", "--env", "--timeout", "--verbose"):
        assert option in out


def test_help_unknown_command_is_a_usage_error() -> None:
    assert plainmcp("frobnicate").code == 2
