"""The flow's pure parts: the challenge parser, the resource and metadata URL rules, and the
optional dependency."""

from __future__ import annotations

import subprocess
import sys

import pytest
from plainmcp.oauth import AuthorizationError, OAuth
from plainmcp.oauth.callback import authorization_code
from plainmcp.oauth.challenge import parse
from plainmcp.oauth.discovery import canonical_resource, metadata_urls, prm_urls, resource_matches

pytestmark = pytest.mark.anyio


def test_challenge_reads_the_bearer_parameters() -> None:
    header = 'Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x.example/prm"'
    challenge = parse([header])
    assert challenge.error == "insufficient_scope" and challenge.scopes == ["a", "b"]
    assert challenge.resource_metadata == "https://x.example/prm"


def test_challenge_finds_bearer_among_other_schemes_and_headers() -> None:
    challenge = parse(['Basic realm="r"', 'DPoP algs="ES256", Bearer scope=x, error="e\\"q"'])
    assert challenge.scopes == ["x"] and challenge.error == 'e"q'


@pytest.mark.parametrize("header", ["", "Basic realm=x", '"""', "Bearer", "=,=,=", "Bearer " + "a=" * 10000])
def test_challenge_of_garbage_is_empty_never_an_exception(header: str) -> None:
    challenge = parse([header])
    assert challenge.resource_metadata is None and challenge.scopes == [] and challenge.error is None


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://MCP.Example.COM:443/mcp/#frag") == "https://mcp.example.com/mcp"
    assert canonical_resource("http://127.0.0.1:8080") == "http://127.0.0.1:8080"


@pytest.mark.parametrize(
    ("declared", "server", "matches"),
    [
        ("https://a.example/mcp", "https://a.example/mcp", True),
        ("https://a.example", "https://a.example/mcp", True),
        ("https://a.example/", "https://a.example/mcp", True),
        ("https://a.example/mc", "https://a.example/mcp", False),
        ("https://a.example/mcp/sub", "https://a.example/mcp", False),
        ("https://evil.example/mcp", "https://a.example/mcp", False),
        ("http://a.example/mcp", "https://a.example/mcp", False),
        ("https://a.example:8443/mcp", "https://a.example/mcp", False),
    ],
)
def test_resource_matches(declared: str, server: str, matches: bool) -> None:
    assert resource_matches(declared, server) is matches


def test_prm_urls_challenge_then_path_aware_then_root() -> None:
    assert prm_urls("https://a.example/x/mcp", "https://a.example/custom") == [
        "https://a.example/custom",
        "https://a.example/.well-known/oauth-protected-resource/x/mcp",
        "https://a.example/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("https://a.example", None) == ["https://a.example/.well-known/oauth-protected-resource"]


def test_metadata_urls_without_a_path() -> None:
    assert metadata_urls("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]


def test_authorization_response_with_an_error_names_it() -> None:
    with pytest.raises(AuthorizationError) as raised:
        authorization_code({"error": "access_denied", "state": "s"}, "s", "https://as.example", {})
    assert raised.value.reason == "denied" and "access_denied" in raised.value.message


def test_authorization_response_with_another_state_is_refused() -> None:
    with pytest.raises(AuthorizationError) as raised:
        authorization_code({"code": "c", "state": "other"}, "ours", "https://as.example", {})
    assert raised.value.reason == "state_mismatch"


def test_core_imports_do_not_import_authlib() -> None:
    code = "import sys, plainmcp.http_client, plainmcp.oauth; print('authlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "False\n"


async def test_without_authlib_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from plainmcp.oauth import grants

    monkeypatch.setitem(sys.modules, "authlib.integrations.httpx_client", None)
    with pytest.raises(AuthorizationError) as raised:
        grants._oauth_client({"client_id": "x"}, {})
    assert raised.value.reason == "missing_dependency" and "pip install 'plainmcp[oauth]'" in raised.value.message


def test_oauth_refuses_an_unknown_grant() -> None:
    with pytest.raises(ValueError, match="grant"):
        OAuth(grant="password")
