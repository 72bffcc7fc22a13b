"""Which values are secrets, and the VS Code prompts that stand in for them."""

from __future__ import annotations

import pytest
from plainmcp.cli.secrets import Prompts, looks_secret, secret_values
from plainmcp.cli.targets import UsageError


@pytest.mark.parametrize(
    "name",
    [
        "PLAINMCP_WEATHER_OPEN_METEO_API_KEY",
        "--auth-token",
        "--jwt-secret",
        "Authorization",
        "X-API-Key",
        "DB_PASSWORD",
        "Cookie",
    ],
)
def test_looks_secret_names_holding_credentials(name) -> None:
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["PLAINMCP_SQLITE_LOG_LEVEL", "--language", "X-Team", "--db"])
def test_looks_secret_leaves_ordinary_names(name) -> None:
    assert not looks_secret(name)


def test_prompts_ids_are_unique_and_short() -> None:
    prompts = Prompts("remote")
    assert prompts.header("Authorization", "Bearer abc") == "Bearer ${input:remote-token}"
    assert prompts.header("Proxy-Authorization", "Basic xyz") == "Basic ${input:remote-proxy-token}"
    assert prompts.env("TOKEN") == "${input:remote-token-2}"  # the id "remote-token" is taken
    assert prompts.env("PLAINMCP_REMOTE_API_KEY") == "${input:remote-api-key}"
    assert prompts.header("X-Team", "blue") == "blue"
    assert [entry["id"] for entry in prompts.inputs] == [
        "remote-token",
        "remote-proxy-token",
        "remote-token-2",
        "remote-api-key",
    ]
    assert all(entry["password"] is True and entry["type"] == "promptString" for entry in prompts.inputs)


def test_secret_values_for_each_client(monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "v")
    assert secret_values(["MY_KEY"], "vscode") == {"MY_KEY": ""}
    assert secret_values(["MY_KEY"], "claude") == {"MY_KEY": "v"}
    monkeypatch.delenv("MY_KEY")
    with pytest.raises(UsageError, match="set MY_KEY in this shell"):
        secret_values(["MY_KEY"], "cursor")
    with pytest.raises(UsageError, match="expected an environment variable name"):
        secret_values(["NOT-A-NAME"], "vscode")
