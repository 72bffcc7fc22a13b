"""The bridge's ``"oauth"`` field in an ``mcpServers`` entry."""

from __future__ import annotations

import pytest
from plainmcp_bridge.servers_config import parse_config


def spec(entry: dict) -> object:
    return parse_config({"mcpServers": {"remote": {"url": "https://mcp.example/mcp", **entry}}})[0]


def test_bridge_config_oauth_is_on_by_default_and_takes_a_preregistered_client() -> None:
    assert spec({}).oauth == {}
    given = spec({"oauth": {"clientId": "c1", "clientSecret": "s", "scopes": ["a", "b"], "openBrowser": False}})
    assert given.oauth == {"client_id": "c1", "client_secret": "s", "scopes": ["a", "b"], "open_browser": False}
    assert spec({"oauth": False}).oauth is None


@pytest.mark.parametrize(
    "oauth, message",
    [
        ("yes", "must be false or an object"),
        ({"client_id": "x"}, "unknown field 'client_id'"),
        ({"clientId": ""}, "clientId must be a non-empty string"),
        ({"clientSecret": "s"}, "clientSecret needs clientId"),
        ({"scopes": "a b"}, "scopes must be a list of strings"),
        ({"openBrowser": "no"}, "openBrowser must be true or false"),
    ],
)
def test_bridge_config_oauth_mistakes_name_the_entry_and_field(oauth, message) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        spec({"oauth": oauth})
    assert "mcpServers.remote.oauth" in str(caught.value)
