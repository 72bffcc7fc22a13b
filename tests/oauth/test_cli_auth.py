"""``plainmcp auth`` without servers: usage errors, an empty or unsafe token file, each one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.support import plainmcp


def env_for(tmp_path: Path) -> dict[str, str]:
    return {"PLAINMCP_TOKEN_FILE": str(tmp_path / "state" / "tokens.json")}


def test_cli_auth_status_without_logins_exits_1(tmp_path) -> None:
    ran = plainmcp("auth", "status", env=env_for(tmp_path))
    assert (ran.code, ran.out.strip()) == (1, "no login kept")
    ran = plainmcp("auth", "logout", env=env_for(tmp_path))
    assert (ran.code, ran.out.strip()) == (0, "forgot 0 logins")


def test_cli_auth_refuses_a_token_file_others_can_read(tmp_path) -> None:
    path = tmp_path / "state" / "tokens.json"
    path.parent.mkdir(mode=0o700)
    path.write_text(json.dumps({"version": 1, "entries": []}))
    path.chmod(0o644)
    for command in (["auth", "status"], ["auth", "logout"]):
        ran = plainmcp(*command, env=env_for(tmp_path))
        assert ran.code == 1 and "Traceback" not in ran.err
        assert f"chmod 600 {path}" in ran.err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["auth", "login", "ftp://example.test/mcp"], "http:// or https:// URL"),
        (["auth", "login", "https://example.test/mcp", "--client-secret", "s"], "--client-secret needs --client-id"),
        (["inspect", "some-command", "--client-id", "c"], "apply to a URL"),
        (["inspect", "https://example.test/mcp", "--client-secret", "s"], "--client-secret needs --client-id"),
    ],
)
def test_cli_auth_usage_errors_exit_2(tmp_path, argv, message) -> None:
    ran = plainmcp(*argv, env=env_for(tmp_path))
    assert ran.code == 2 and message in ran.err


def test_cli_auth_help_names_the_token_file_and_every_action() -> None:
    ran = plainmcp("auth", "--help")
    assert ran.code == 0
    for text in ("login", "status", "logout", "~/.local/state/plainmcp/tokens.json", "PLAINMCP_TOKEN_FILE"):
        assert text in ran.out
