"""The authorization flow end to end against real HTTP servers on 127.0.0.1 (``scene.py``): what
the client asks for, in which order, and what it refuses."""

from __future__ import annotations

import json
import logging
from typing import Any

import anyio
import pytest
from plainmcp.http_client import connect_http
from plainmcp.oauth import AssertionRequest, AuthorizationError, IdJagExchange, MemoryTokenStore, OAuth

from .scene import ID_TOKEN, JWT_BEARER, WORKLOAD_JWT, Scene, Settings, scene

pytestmark = pytest.mark.anyio


async def call_hello(s: Scene, oauth: OAuth, **options: Any) -> str:
    async with connect_http(s.url, auth=oauth, **options) as client:
        result = await client.call_tool("hello", {})
    return result["content"][0]["text"]


async def test_flow_authorizes_then_calls_with_pkce_resource_and_registration() -> None:
    with scene() as s:
        assert await call_hello(s, OAuth()) == "hello"
        register = s.recorder.of("as", "/register")[0]
        authorize = s.recorder.of("as", "/authorize")[0]["query"]
        token = s.recorder.of("as", "/token")[0]["form"]
    assert authorize["code_challenge_method"] == "S256" and len(authorize["code_challenge"]) == 43
    assert authorize["resource"] == token["resource"] == s.url
    assert token["grant_type"] == "authorization_code" and len(token["code_verifier"]) >= 43
    assert json.loads(register["body"])["application_type"] == "native"
    assert "scope" not in authorize  # neither the challenge nor the PRM names scopes


async def test_discovery_resource_metadata_path_aware_then_root_without_challenge_url() -> None:
    settings = Settings(prm_paths=("/.well-known/oauth-protected-resource",), prm_in_challenge=False)
    with scene(settings) as s:
        await call_hello(s, OAuth())
        prm = [p for p in s.recorder.paths("rs") if p.startswith("/.well-known")]
    assert prm == ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]


async def test_discovery_uses_the_challenge_url_first() -> None:
    settings = Settings(prm_paths=("/custom/prm.json",))
    with scene(settings) as s:
        await call_hello(s, OAuth())
        prm = [p for p in s.recorder.paths("rs") if p != "/mcp"]
    assert prm == ["/custom/prm.json"]


async def test_discovery_metadata_order_for_an_issuer_with_a_path() -> None:
    settings = Settings(issuer_path="/tenant1", metadata_paths=("/tenant1/.well-known/openid-configuration",))
    with scene(settings) as s:
        await call_hello(s, OAuth())
        asked = [p for p in s.recorder.paths("as") if ".well-known" in p]
    assert asked == [
        "/.well-known/oauth-authorization-server/tenant1",
        "/.well-known/openid-configuration/tenant1",
        "/tenant1/.well-known/openid-configuration",
    ]


async def test_metadata_issuer_mismatch_is_refused_before_any_endpoint_is_used() -> None:
    with scene(Settings(issuer_override="https://attacker.example")) as s:
        with pytest.raises(AuthorizationError) as raised:
            await call_hello(s, OAuth())
        used = [p for p in s.recorder.paths("as") if ".well-known" not in p]
    assert raised.value.reason == "issuer_mismatch" and used == []


async def test_resource_mismatch_is_refused_before_authorization() -> None:
    with scene(Settings(prm_resource="https://evil.example/mcp")) as s:
        with pytest.raises(AuthorizationError) as raised:
            await call_hello(s, OAuth())
        assert s.recorder.paths("as") == []
    assert raised.value.reason == "resource_mismatch"


async def test_a_parent_resource_covers_the_endpoint() -> None:
    settings = Settings(prm_paths=("/.well-known/oauth-protected-resource",), prm_in_challenge=False)
    with scene(settings) as s:
        s.settings.prm_resource = s.resource_server.base
        assert await call_hello(s, OAuth()) == "hello"
        assert s.recorder.of("as", "/authorize")[0]["query"]["resource"] == s.resource_server.base


async def test_pkce_without_s256_is_refused() -> None:
    with scene(Settings(metadata={"code_challenge_methods_supported": ["plain"]})) as s:
        with pytest.raises(AuthorizationError) as raised:
            await call_hello(s, OAuth())
        assert "/authorize" not in s.recorder.paths("as")
    assert raised.value.reason == "no_pkce"


@pytest.mark.parametrize(
    ("advertised", "sent", "reason"),
    [
        (True, "correct", None),
        (None, "omit", None),
        (True, "omit", "iss_missing"),
        (True, "wrong", "iss_mismatch"),
        (None, "wrong", "iss_mismatch"),
        (True, "slash", "iss_mismatch"),  # no normalization: a trailing slash is another issuer
    ],
)
async def test_iss_in_the_authorization_response(advertised: bool | None, sent: str, reason: str | None) -> None:
    settings = Settings(iss_in_redirect=sent, metadata={"authorization_response_iss_parameter_supported": advertised})
    with scene(settings) as s:
        if reason is None:
            assert await call_hello(s, OAuth()) == "hello"
        else:
            with pytest.raises(AuthorizationError) as raised:
                await call_hello(s, OAuth())
            assert raised.value.reason == reason
        token_requests = len(s.recorder.of("as", "/token"))
    assert token_requests == (1 if reason is None else 0)


async def test_scopes_from_the_challenge_else_scopes_supported_and_offline_access() -> None:
    with scene(Settings(challenge_scope="mcp:basic", scopes_supported=["mcp:other"])) as s:
        await call_hello(s, OAuth())
        assert s.recorder.of("as", "/authorize")[0]["query"]["scope"] == "mcp:basic"
    settings = Settings(scopes_supported=["mcp:a", "mcp:b"], metadata={"scopes_supported": ["mcp:a", "offline_access"]})
    with scene(settings) as s:
        await call_hello(s, OAuth())
        assert s.recorder.of("as", "/authorize")[0]["query"]["scope"] == "mcp:a mcp:b offline_access"


async def test_step_up_asks_for_the_union_of_scopes() -> None:
    settings = Settings(challenge_scope="mcp:basic", required_scopes={"tools/call": ["mcp:write"]})
    with scene(settings) as s:
        assert await call_hello(s, OAuth()) == "hello"
        scopes = [q["query"].get("scope") for q in s.recorder.of("as", "/authorize")]
    assert scopes == ["mcp:basic", "mcp:basic mcp:write"]


async def test_step_up_stops_after_max_step_ups() -> None:
    settings = Settings(required_scopes={"tools/call": ["mcp:admin"]}, withheld_scopes=["mcp:admin"])
    with scene(settings) as s:
        with pytest.raises(AuthorizationError) as raised:
            await call_hello(s, OAuth(max_step_ups=2))
        authorizations = len(s.recorder.of("as", "/authorize"))
    assert raised.value.reason == "insufficient_scope"
    assert authorizations == 3  # the first authorization, then two step-ups


async def test_refresh_comes_before_a_new_authorization() -> None:
    store = MemoryTokenStore()
    with scene() as s:
        await call_hello(s, OAuth(store=store))
        s.tokens.clear()  # the server forgets every access token: the next request gets 401
        assert await call_hello(s, OAuth(store=store)) == "hello"
        grants = [f["form"]["grant_type"] for f in s.recorder.of("as", "/token")]
        authorizations = len(s.recorder.of("as", "/authorize"))
    assert grants == ["authorization_code", "refresh_token"] and authorizations == 1


async def test_a_refused_refresh_falls_back_to_authorizing() -> None:
    store = MemoryTokenStore()
    with scene() as s:
        await call_hello(s, OAuth(store=store))
        s.tokens.clear()
        s.settings.reject_refresh = True
        assert await call_hello(s, OAuth(store=store)) == "hello"
        grants = [f["form"]["grant_type"] for f in s.recorder.of("as", "/token")]
    assert grants == ["authorization_code", "refresh_token", "authorization_code"]


async def test_a_stored_token_is_used_without_authorizing_again() -> None:
    store = MemoryTokenStore()
    with scene() as s:
        await call_hello(s, OAuth(store=store))
        await call_hello(s, OAuth(store=store))
        assert len(s.recorder.of("as", "/authorize")) == 1 and len(s.recorder.of("as", "/register")) == 1


async def test_concurrent_refusals_share_one_authorization() -> None:
    with scene() as s:
        async with connect_http(s.url, auth=OAuth(), protocol_version="2026-07-28") as client:
            s.tokens.clear()
            results: list[str] = []

            async def call() -> None:
                results.append((await client.call_tool("hello", {}))["content"][0]["text"])

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(call)
        assert results == ["hello"] * 5
        refreshes = [f for f in s.recorder.of("as", "/token") if f["form"]["grant_type"] == "refresh_token"]
    assert len(refreshes) == 1


async def test_concurrent_insufficient_scope_shares_one_step_up() -> None:
    settings = Settings(challenge_scope="mcp:basic", required_scopes={"tools/call": ["mcp:write"]})
    with scene(settings) as s:
        async with connect_http(s.url, auth=OAuth(), protocol_version="2026-07-28") as client:
            await client.list_all_tools()

            async def call() -> None:
                await client.call_tool("hello", {})

            async with anyio.create_task_group() as group:
                for _ in range(4):
                    group.start_soon(call)
        scopes = [q["query"].get("scope") for q in s.recorder.of("as", "/authorize")]
    assert scopes == ["mcp:basic", "mcp:basic mcp:write"]


async def test_migration_to_another_authorization_server_registers_again() -> None:
    store = MemoryTokenStore()
    with scene() as first, scene() as second:
        oauth = OAuth(store=store)
        await call_hello(first, oauth)
        # The resource now names the second server's AS; its tokens are the only ones it accepts.
        first.resource_server.issuer = lambda: second.auth_server.issuer
        first.resource_server.tokens = second.tokens
        first.tokens.clear()
        assert await call_hello(first, oauth) == "hello"
        registered_second = second.auth_server.clients
        seen_ids = {q["query"].get("client_id") for q in second.recorder.of("as", "/authorize")}
    assert len(registered_second) == 1 and seen_ids == {"client-0"}
    entries = {issuer for issuer, _, _ in await store.entries()}
    assert entries == {first.auth_server.issuer, second.auth_server.issuer}


async def test_2025_03_26_server_without_metadata_uses_the_default_endpoints() -> None:
    settings = Settings(no_prm=True, metadata_paths=("/nowhere",))
    with scene(settings) as s:
        assert await call_hello(s, OAuth(), protocol_version="2025-03-26") == "hello"
        asked = [p for who, p, _ in s.recorder.requests if who == "as"]
    assert asked == [
        "/.well-known/oauth-protected-resource/mcp",  # no PRM (404s), so 2025-03-26 discovery:
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",  # at the server's root, then the defaults
        "/register",
        "/authorize",
        "/token",
    ]


async def test_a_server_without_any_oauth_gets_a_clear_error() -> None:
    with scene(Settings(no_prm=True, metadata_paths=("/nowhere",))) as s:
        s.resource_server.legacy_auth = None  # no /register, /authorize, /token either: 404s
        with pytest.raises(AuthorizationError) as raised:
            await call_hello(s, OAuth())
    assert raised.value.reason == "discovery" and "publishes no OAuth metadata" in raised.value.message


async def test_preregistered_client_with_basic_auth_skips_registration() -> None:
    with scene(Settings(metadata={"token_endpoint_auth_methods_supported": ["client_secret_basic"]})) as s:
        await call_hello(s, OAuth(client_id="pre", client_secret="pre-secret"))
        token = s.recorder.of("as", "/token")[0]
        assert s.recorder.of("as", "/register") == []
    assert token["headers"]["authorization"].startswith("Basic ") and "client_secret" not in token["form"]


async def test_client_metadata_document_is_the_client_id_when_supported() -> None:
    url = "https://client.example/metadata.json"
    with scene(Settings(metadata={"client_id_metadata_document_supported": True})) as s:
        await call_hello(s, OAuth(client_metadata_url=url))
        assert s.recorder.of("as", "/authorize")[0]["query"]["client_id"] == url
        assert s.recorder.of("as", "/register") == []


async def test_client_credentials_grant() -> None:
    with scene(Settings(metadata={"token_endpoint_auth_methods_supported": ["client_secret_post"]})) as s:
        oauth = OAuth(grant="client_credentials", client_id="machine", client_secret="machine-secret")
        assert await call_hello(s, oauth) == "hello"
        token = s.recorder.of("as", "/token")[0]["form"]
        assert "/authorize" not in s.recorder.paths("as")
    assert token["grant_type"] == "client_credentials" and token["client_secret"] == "machine-secret"
    assert token["resource"] == s.url


async def test_jwt_bearer_grant_presents_the_workload_assertion_once() -> None:
    reads: list[int] = []

    async def current_jwt(request: AssertionRequest) -> str:
        assert request.resource == s.url and request.issuer == s.auth_server.issuer
        reads.append(1)
        return WORKLOAD_JWT

    with scene() as s:
        assert await call_hello(s, OAuth(grant="jwt_bearer", client_id="workload", assertion=current_jwt)) == "hello"
        token = s.recorder.of("as", "/token")[0]["form"]
    assert token["grant_type"] == JWT_BEARER and token["assertion"] == WORKLOAD_JWT and reads == [1]
    with scene() as s:
        with pytest.raises(AuthorizationError) as raised:
            await call_hello(s, OAuth(grant="jwt_bearer", client_id="workload", assertion="a-stale-jwt"))
        assert len(s.recorder.of("as", "/token")) == 1  # refused once: no retry, no other grant
    assert raised.value.reason == "token_request" and "invalid_grant" in raised.value.message


async def test_dpop_binds_the_token_and_proves_every_request_with_the_servers_nonces() -> None:
    with scene(Settings(dpop=True, as_nonce="as-nonce-1", rs_nonce="rs-nonce-1")) as s:
        async with connect_http(s.url, auth=OAuth(), protocol_version="2026-07-28") as client:
            await client.list_all_tools()
            assert (await client.call_tool("hello", {}))["content"][0]["text"] == "hello"
        token_requests = s.recorder.of("as", "/token")
        proofs = s.resource_server.proofs
    assert [("dpop" in t["headers"]) for t in token_requests] == [True, True]  # challenged once for the nonce
    assert len(proofs) >= 2 and all(p["nonce"] == "rs-nonce-1" for p in proofs)
    assert len({p["jti"] for p in proofs}) == len(proofs)  # a fresh proof on every request


async def test_dpop_is_not_used_when_the_resource_does_not_ask_for_it() -> None:
    with scene(Settings(metadata={"dpop_signing_alg_values_supported": ["ES256"]})) as s:
        await call_hello(s, OAuth())
        assert "dpop" not in s.recorder.of("as", "/token")[0]["headers"]


async def test_enterprise_managed_authorization_exchanges_the_id_token_then_presents_the_grant() -> None:
    with scene() as s:
        exchange = IdJagExchange(f"{s.auth_server.base}/idp/token", ID_TOKEN, "idp-client")
        oauth = OAuth(grant="jwt_bearer", assertion=exchange, client_id="xaa-client", client_secret="xaa-secret")
        assert await call_hello(s, oauth) == "hello"
        exchanged = s.recorder.of("as", "/idp/token")[0]["form"]
        token = s.recorder.of("as", "/token")[0]
    assert exchanged["audience"] == s.auth_server.issuer and exchanged["resource"] == s.url
    assert exchanged["subject_token_type"] == "urn:ietf:params:oauth:token-type:id_token"
    assert token["form"]["assertion"] == f"id-jag:{s.auth_server.issuer}:{s.url}"
    assert token["headers"]["authorization"].startswith("Basic ")


async def test_no_secret_reaches_the_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with scene(Settings(metadata={"token_endpoint_auth_methods_supported": ["client_secret_basic"]})) as s:
        await call_hello(s, OAuth(client_id="pre", client_secret="pre-secret-value"))
        secrets_seen = list(s.tokens) + list(s.auth_server.refresh_tokens) + ["pre-secret-value"]
        secrets_seen += [f["form"].get("code") for f in s.recorder.of("as", "/token")]
        secrets_seen += [f["form"].get("code_verifier") for f in s.recorder.of("as", "/token")]
    # httpcore's DEBUG wire trace (opted into by whoever enables it) prints raw response headers,
    # the redirect's Location among them; every other record is judged, httpx's request lines too.
    text = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("httpcore"))
    assert text  # the flow does log
    assert all(secret for secret in secrets_seen)
    assert [secret for secret in secrets_seen if secret in text] == []


async def test_login_status_logout_without_a_session() -> None:
    store = MemoryTokenStore()
    with scene(Settings(scopes_supported=["mcp:x"])) as s:
        oauth = OAuth(store=store)
        entry = await oauth.login(s.url)
        assert s.recorder.of("rs", "/mcp") == []  # no MCP request was needed
        assert entry["issuer"] == s.auth_server.issuer and entry["resource"] == s.url
        assert entry["scopes"] == ["mcp:x"] and entry["refreshable"] and not entry["expired"]
        assert "access_token" not in str(await oauth.status()) and list(s.tokens)[0] not in str(await oauth.status())
        assert await oauth.logout(s.url) == 1
        assert await oauth.status(s.url) == []
