"""The READMEs' first line of "Configure your client": `plainmcp-<name> config --client claude -- <args>`.

Each line runs as written, in the user's shell; the snippet it prints must name the server by an absolute path and
start under the minimal PATH a desktop client gives it (no ~/.local/bin), answering `initialize` as itself.
"""

from __future__ import annotations

import json
import subprocess

import pytest

from .readme import Block, all_blocks
from .user_env import UserEnv, stdio_handshake

TEST = "tests/docs/test_config_lines.py::test_config_lines_print_a_snippet_that_starts"
BLOCKS = [block for block in all_blocks() if block.kind == "tested by" and block.detail == TEST]
#: What Claude Desktop gives a server it starts on Linux and macOS: the system's directories only.
MINIMAL_PATH = "/usr/local/bin:/usr/bin:/bin"


def test_every_server_readme_has_a_config_line() -> None:
    readmes = {block.path.parent.name for block in BLOCKS if block.path.name == "README.md"}
    assert {"everything", "filesystem", "prompts", "sqlite", "weather"} <= readmes


@pytest.mark.parametrize("block", BLOCKS, ids=[block.id for block in BLOCKS])
def test_config_lines_print_a_snippet_that_starts(block: Block, user: UserEnv) -> None:
    for line in block.commands():
        server = line.split()[0]
        _skip_unless_config_exists(server, user)
        printed = subprocess.run(
            ["bash", "-c", line], cwd=user.work, env=user.env, capture_output=True, text=True, timeout=60
        )
        assert printed.returncode == 0, f"{block.id}: {line!r} failed:\n{printed.stderr[-2000:]}"
        (entry,) = json.loads(printed.stdout)["mcpServers"].values()
        assert entry["command"].startswith("/"), f"{block.id}: the snippet names {entry['command']!r}, not a path"
        env = {**user.env, "PATH": MINIMAL_PATH, **entry.get("env", {})}
        answered = stdio_handshake([entry["command"], *entry.get("args", [])], env=env, cwd=user.home)
        assert answered["initialize"]["serverInfo"]["name"] == server, block.id


def _skip_unless_config_exists(server: str, user: UserEnv) -> None:
    """Skip, saying so, while the server's `config` command does not exist yet (it is being added in issue 27)."""
    helped = subprocess.run(
        [user.which(server), "config", "--help"], env=user.env, capture_output=True, text=True, timeout=30
    )
    if helped.returncode != 0:
        pytest.skip(f"{server} has no `config` command yet: {helped.stderr.strip().splitlines()[-1:]}")
