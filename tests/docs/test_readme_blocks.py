"""Docs are tests: every fenced block of every README either runs here, as a user would run it, or says why not.

The blocks run against the installed commands (the ``user`` fixture), in a scratch home, never in the repository.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from .http_servers import serving_http
from .readme import KINDS, ROOT, Block, all_blocks
from .user_env import UserEnv, stdio_handshake

BLOCKS = all_blocks()


def _of(kind: str) -> list[Block]:
    return [block for block in BLOCKS if block.kind == kind]


def _ids(blocks: list[Block]) -> list[str]:
    return [block.id for block in blocks]


def test_every_block_says_how_it_is_checked() -> None:
    unmarked = [block.id for block in BLOCKS if block.kind not in KINDS]
    assert not unmarked, f"blocks without a <!-- docs: ... --> marker (see tests/docs/readme.py): {unmarked}"
    no_reason = [block.id for block in _of("illustrative") if len(block.detail) < 8]
    assert not no_reason, f"illustrative blocks must say why they are not run: {no_reason}"


@pytest.mark.parametrize("block", _of("tested by"), ids=_ids(_of("tested by")))
def test_tested_by_names_a_test_that_exists(block: Block) -> None:
    path, _, name = block.detail.partition("::")
    test_file = ROOT / path
    assert test_file.is_file(), f"{block.id}: {path} does not exist"
    assert re.search(rf"^(async )?def {re.escape(name)}\(", test_file.read_text(), re.M), (
        f"{block.id}: {path} has no test {name}"
    )


@pytest.mark.parametrize("block", _of("shell"), ids=_ids(_of("shell")))
def test_shell_block_runs(block: Block, user: UserEnv) -> None:
    script = "set -euo pipefail\n" + "\n".join(user.as_in_test(command) for command in block.commands())
    result = subprocess.run(
        ["bash", "-c", script],
        cwd=user.work,
        env=user.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, (
        f"{block.id} failed ({result.returncode}):\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"
    )


@pytest.mark.parametrize("block", _of("server"), ids=_ids(_of("server")))
def test_server_block_starts_and_answers(block: Block, user: UserEnv) -> None:
    for command in block.commands():
        if re.search(r"--transport\s+(http|sse)\b", command):
            _serve_http_until_healthy(block, command, user)
        else:
            answered = stdio_handshake(["bash", "-c", f"exec {command}"], env=user.env, cwd=user.work)
            name = answered["initialize"]["serverInfo"]["name"]
            assert command.split()[0].startswith(name), f"{block.id}: {command!r} answered as {name}"


@pytest.mark.parametrize("block", _of("config"), ids=_ids(_of("config")))
def test_client_config_starts_each_server(block: Block, user: UserEnv) -> None:
    config = json.loads(block.text)
    entries = config.get("mcpServers") or config.get("servers")
    assert entries, f"{block.id}: neither mcpServers nor servers"
    for key, entry in entries.items():
        argv = [_client_expand(entry["command"], user), *(_client_expand(arg, user) for arg in entry.get("args", []))]
        env = {**user.env, **{name: _client_expand(value, user) for name, value in entry.get("env", {}).items()}}
        answered = stdio_handshake(argv, env=env, cwd=user.work)
        assert answered["initialize"]["serverInfo"]["name"].startswith("plainmcp"), f"{block.id}: {key}"
        assert answered["tools"] or "prompts" in answered["initialize"]["capabilities"], (
            f"{block.id}: {key} offers nothing"
        )


@pytest.mark.parametrize("block", _of("python"), ids=_ids(_of("python")))
def test_python_block_runs(block: Block, user: UserEnv) -> None:
    script = user.work / "snippet.py"
    script.write_text(block.text)
    result = subprocess.run(
        [user.which("python"), str(script)],
        cwd=user.work,
        env=user.env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, f"{block.id}:\n{result.stdout[-2000:]}\n{result.stderr[-3000:]}"


def _client_expand(value: str, user: UserEnv) -> str:
    """What Claude Desktop, Cursor and VS Code substitute before starting a server (nothing else: no shell, no ~)."""
    value = value.replace("${workspaceFolder}", str(user.work))
    return re.sub(r"\$\{input:[^}]+\}", "docs-test-secret", value)


def _serve_http_until_healthy(block: Block, command: str, user: UserEnv) -> None:
    with serving_http(command, user):
        pass
