"""Every server's command line is complete and consistent: ``--help`` works without a network or a
database, lists the options every server shares, and names the environment variable of every option
(clients such as Claude Desktop often pass only environment variables)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

SERVERS = ["everything", "filesystem", "prompts", "sqlite", "weather"]
SHARED = ["--transport", "--host", "--port", "--log-level", "--log-format", "--allowed-host", "--auth-token"]


def help_text(name: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", f"plainmcp_{name}", "--help"],
        capture_output=True, text=True, timeout=30, env={**os.environ, "COLUMNS": "200"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("name", SERVERS)
def test_help_lists_the_shared_options(name: str) -> None:
    text = help_text(name)
    assert text.startswith(f"usage: plainmcp-{name} ")
    for option in SHARED:
        assert option in text, option


@pytest.mark.parametrize("name", SERVERS)
def test_every_option_names_its_environment_variable(name: str) -> None:
    prefix = f"PLAINMCP_{name.upper()}_"
    blocks = re.split(r"\n(?=  -)", help_text(name))[1:]  # one block per option, its help included
    options = [block for block in blocks if not block.lstrip().startswith(("-h", "--version"))]
    assert len(options) >= len(SHARED)
    for block in options:
        assert f"[env: {prefix}" in " ".join(block.split()), block.splitlines()[0]
