"""Secure by default over HTTP: bearer tokens (static and JWT), the RFC 9728 metadata document,
sessions bound to their credentials, TLS, and tokens kept out of the logs.

Real uvicorn servers on 127.0.0.1 (a thread, or a process with the shared command line), real
httpx clients, keys and certificates made in the test, a JWKS document served locally.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from plainmcp.http.app import MCPApp
from plainmcp.http.auth import BearerAuth, StaticTokens
from plainmcp.http.jwt_auth import JWTVerifier

from .http_server import (
    ACCEPT_BOTH,
    dumps,
    initialize_body,
    legacy_headers,
    modern_body,
    modern_headers,
    rpc,
)
from .ops_harness import (
    SERVER_NAME,
    JWKSServer,
    build_server,
    client,
    ec_key,
    jwk,
    public_pem,
    rsa_key,
    run_to_exit,
    self_signed_certificate,
    serve_app,
    server_process,
    trusting,
)

TOKEN = "tok-alpha-0123456789abcdef0123"
OTHER_TOKEN = "tok-beta-0123456789abcdef01234"
SECRET = "hs256-shared-secret-0123456789abcdef-xyz"
ISSUER = "https://issuer.example"
AUDIENCE = "https://mcp.example/mcp"
AUTH_SERVER = "https://auth.example.com"


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    values = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "iat": now, "exp": now + 300, **overrides}
    return {key: value for key, value in values.items() if value is not None}


def protected_requests() -> list[tuple[str, str, bytes | None, dict[str, str]]]:
    """One request per protected path and method: (method, path, body, headers)."""
    modern = modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    return [
        ("POST", "/mcp", dumps(initialize_body()), legacy_headers(version=None)),
        ("POST", "/mcp", dumps(modern), modern_headers(modern)),
        ("GET", "/mcp", None, {"Accept": "text/event-stream", "Mcp-Session-Id": "x"}),
        ("DELETE", "/mcp", None, {"Mcp-Session-Id": "x"}),
        ("GET", "/sse", None, {"Accept": "text/event-stream"}),
        ("POST", "/messages?session_id=x", dumps(initialize_body()), {"Content-Type": "application/json"}),
        ("GET", "/mcp/server-info", None, {}),
        ("POST", "/mcp/call", dumps(rpc(1, "echo", {"text": "hi"})), {"Content-Type": "application/json"}),
        ("GET", "/metrics", None, {}),
    ]


# ------------------------------------------------------------------------------ static tokens


@pytest.fixture(scope="module")
def static_srv() -> Iterator[Any]:
    app = MCPApp(build_server(), auth=BearerAuth([StaticTokens([TOKEN, OTHER_TOKEN])]))
    with serve_app(app) as served:
        yield served


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with client() as c:
        yield c


def test_every_protected_path_without_a_token_is_401_with_a_bare_challenge(static_srv, http):
    for method, path, body, headers in protected_requests():
        response = http.request(method, static_srv.base_url + path, content=body, headers=headers)
        assert response.status_code == 401, (method, path)
        # No token at all: no error code in the challenge (RFC 6750 3.1), no metadata configured.
        assert response.headers["www-authenticate"] == "Bearer", (method, path)
        assert response.json() == {"error": "invalid_token", "error_description": "Bearer token required"}
        assert "mcp-session-id" not in response.headers


def test_a_wrong_token_is_401_invalid_token_on_every_path(static_srv, http):
    for method, path, body, headers in protected_requests():
        response = http.request(method, static_srv.base_url + path, content=body, headers={**headers, **bearer("nope")})
        assert response.status_code == 401, (method, path)
        assert (
            response.headers["www-authenticate"]
            == 'Bearer error="invalid_token", error_description="Invalid access token"'
        )
        assert response.json() == {"error": "invalid_token", "error_description": "Invalid access token"}


@pytest.mark.parametrize(
    "authorization",
    [f"Basic {TOKEN}", TOKEN, f"Token {TOKEN}"],
    ids=["basic", "no-scheme", "other-scheme"],
)
def test_a_token_not_sent_as_bearer_counts_as_no_token(static_srv, http, authorization):
    response = http.get(f"{static_srv.base_url}/mcp/server-info", headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"


@pytest.mark.parametrize(
    "authorization",
    [f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Bearer {TOKEN.upper()}", f"Bearer {TOKEN} {TOKEN}", "Bearer"],
    ids=["prefix", "longer", "case", "twice", "empty"],
)
def test_a_token_close_to_a_valid_one_is_refused(static_srv, http, authorization):
    response = http.get(f"{static_srv.base_url}/mcp/server-info", headers={"Authorization": authorization})
    assert response.status_code == 401
    assert response.headers["www-authenticate"].startswith('Bearer error="invalid_token", error_description=')


def test_each_configured_token_opens_every_protected_path(static_srv, http):
    for token in (TOKEN, OTHER_TOKEN):
        for method, path, body, headers in protected_requests():
            if path == "/sse":
                continue  # a stream: checked on its own below
            response = http.request(
                method, static_srv.base_url + path, content=body, headers={**headers, **bearer(token)}
            )
            assert response.status_code != 401, (method, path)
            assert "www-authenticate" not in response.headers
    assert (
        http.post(
            static_srv.url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), **bearer(TOKEN)}
        ).status_code
        == 200
    )
    assert http.get(f"{static_srv.base_url}/mcp/server-info", headers=bearer(TOKEN)).json()["name"] == SERVER_NAME
    call = http.post(
        f"{static_srv.base_url}/mcp/call",
        content=dumps(rpc(5, "add", {"a": 2, "b": 3})),
        headers={"Content-Type": "application/json", **bearer(OTHER_TOKEN)},
    )
    assert call.json() == {"jsonrpc": "2.0", "id": 5, "result": {"sum": 5}}


def test_the_sse_stream_opens_with_a_token(static_srv, http):
    with http.stream(
        "GET", f"{static_srv.base_url}/sse", headers={"Accept": "text/event-stream", **bearer(TOKEN)}
    ) as response:
        assert response.status_code == 200
        first = next(response.iter_lines())
        assert first == "event: endpoint"


def test_health_needs_no_token(static_srv, http):
    response = http.get(f"{static_srv.base_url}/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_host_and_origin_are_checked_before_the_token(static_srv, http):
    # A DNS-rebinding page learns nothing about authentication: it is turned away first.
    assert http.get(f"{static_srv.base_url}/mcp/server-info", headers={"Host": "evil.example"}).status_code == 421
    assert (
        http.get(
            f"{static_srv.base_url}/mcp/server-info", headers={"Origin": "https://evil.example", **bearer(TOKEN)}
        ).status_code
        == 403
    )


def test_a_legacy_session_cannot_be_used_with_other_credentials(static_srv, http):
    url = static_srv.url
    opened = http.post(url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), **bearer(TOKEN)})
    session = opened.headers["mcp-session-id"]
    listing = dumps(rpc(2, "tools/list"))
    stolen = http.post(url, content=listing, headers={**legacy_headers(session), **bearer(OTHER_TOKEN)})
    assert stolen.status_code == 404
    for method in ("GET", "DELETE"):
        assert (
            http.request(
                method, url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": session, **bearer(OTHER_TOKEN)}
            ).status_code
            == 404
        )
    own = http.post(url, content=listing, headers={**legacy_headers(session), **bearer(TOKEN)})
    assert own.status_code == 200
    assert [tool["name"] for tool in own.json()["result"]["tools"]][:2] == ["add", "echo"]


def test_an_sse_session_cannot_be_posted_to_with_other_credentials(static_srv, http):
    with http.stream(
        "GET", f"{static_srv.base_url}/sse", headers={"Accept": "text/event-stream", **bearer(TOKEN)}
    ) as stream:
        lines = stream.iter_lines()
        assert next(lines) == "event: endpoint"
        endpoint = next(lines).removeprefix("data: ")
        body = dumps(initialize_body())
        headers = {"Content-Type": "application/json"}
        assert (
            http.post(
                static_srv.base_url + endpoint, content=body, headers={**headers, **bearer(OTHER_TOKEN)}
            ).status_code
            == 404
        )
        assert (
            http.post(static_srv.base_url + endpoint, content=body, headers={**headers, **bearer(TOKEN)}).status_code
            == 202
        )


# --------------------------------------------------------------- protected resource metadata


@pytest.fixture(scope="module")
def prm_srv() -> Iterator[Any]:
    auth = BearerAuth([StaticTokens([TOKEN])], authorization_servers=[AUTH_SERVER])
    with serve_app(MCPApp(build_server(), auth=auth)) as served:
        yield served


def test_protected_resource_metadata_document(prm_srv, http):
    expected = {
        "resource": f"{prm_srv.base_url}/mcp",
        "authorization_servers": [AUTH_SERVER],
        "bearer_methods_supported": ["header"],
        "resource_name": SERVER_NAME,
    }
    for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
        response = http.get(prm_srv.base_url + path)  # no token: the document is public
        assert response.status_code == 200, path
        assert response.headers["content-type"] == "application/json"
        assert response.json() == expected
    assert http.post(f"{prm_srv.base_url}/.well-known/oauth-protected-resource").status_code == 405
    assert (
        http.get(
            f"{prm_srv.base_url}/.well-known/oauth-protected-resource", headers={"Host": "evil.example"}
        ).status_code
        == 421
    )


def test_challenges_point_to_the_metadata_document(prm_srv, http):
    metadata = f"{prm_srv.base_url}/.well-known/oauth-protected-resource/mcp"
    missing = http.post(prm_srv.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
    wrong = http.get(f"{prm_srv.base_url}/metrics", headers=bearer("nope"))
    assert wrong.headers["www-authenticate"] == (
        f'Bearer error="invalid_token", error_description="Invalid access token", resource_metadata="{metadata}"'
    )


def test_a_configured_resource_url_names_the_resource_and_its_metadata(http):
    auth = BearerAuth(
        [StaticTokens([TOKEN])], authorization_servers=[AUTH_SERVER], resource_url="https://mcp.example.com/api/mcp"
    )
    with serve_app(MCPApp(build_server(), auth=auth)) as served:
        document = http.get(f"{served.base_url}/.well-known/oauth-protected-resource/api/mcp").json()
        assert document["resource"] == "https://mcp.example.com/api/mcp"
        challenge = http.get(f"{served.base_url}/mcp/server-info").headers["www-authenticate"]
        assert (
            challenge
            == 'Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp"'
        )


def test_no_metadata_document_without_an_authorization_server(static_srv, http):
    assert http.get(f"{static_srv.base_url}/.well-known/oauth-protected-resource").status_code == 404


# ------------------------------------------------------------------------------------ JWT HS256


@pytest.fixture(scope="module")
def hs_srv() -> Iterator[Any]:
    verifier = JWTVerifier(secret=SECRET, audience=AUDIENCE, issuer=ISSUER, leeway=5)
    with serve_app(MCPApp(build_server(), auth=BearerAuth([verifier]))) as served:
        yield served


def server_info_status(served: Any, token: str) -> httpx.Response:
    with client() as c:
        return c.get(f"{served.base_url}/mcp/server-info", headers=bearer(token))


def test_a_valid_hs256_token_is_accepted(hs_srv):
    response = server_info_status(hs_srv, jwt.encode(claims(), SECRET, algorithm="HS256"))
    assert response.status_code == 200
    assert response.json()["name"] == SERVER_NAME


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _compact(header: dict[str, Any], payload: dict[str, Any], sign: Any = None) -> str:
    """A JWS made by hand, for what PyJWT refuses to make (``none``, HS256 keyed with a public key)."""
    signing_input = f"{_b64(json.dumps(header).encode())}.{_b64(json.dumps(payload).encode())}"
    signature = _b64(sign(signing_input.encode())) if sign is not None else ""
    return f"{signing_input}.{signature}"


def _unsigned(payload: dict[str, Any]) -> str:
    return _compact({"alg": "none", "typ": "JWT"}, payload)


JWT_FAILURES = {
    "expired": (
        lambda: jwt.encode(claims(exp=int(time.time()) - 3600), SECRET, algorithm="HS256"),
        "The access token expired",
    ),
    "wrong-issuer": (
        lambda: jwt.encode(claims(iss="https://elsewhere.example"), SECRET, algorithm="HS256"),
        "The access token comes from an untrusted issuer",
    ),
    "wrong-audience": (
        lambda: jwt.encode(claims(aud="https://other-server.example/mcp"), SECRET, algorithm="HS256"),
        "The access token was not issued for this server (audience)",
    ),
    "wrong-signature": (
        lambda: jwt.encode(claims(), "another-secret-of-enough-length-0123456789", algorithm="HS256"),
        "The access token signature is invalid",
    ),
    "not-yet-valid": (
        lambda: jwt.encode(claims(nbf=int(time.time()) + 3600), SECRET, algorithm="HS256"),
        "The access token is not valid yet",
    ),
    "no-expiry": (
        lambda: jwt.encode(claims(exp=None), SECRET, algorithm="HS256"),
        "The access token lacks a required claim",
    ),
    "no-audience": (
        lambda: jwt.encode(claims(aud=None), SECRET, algorithm="HS256"),
        "The access token lacks a required claim",
    ),
    "alg-none": (lambda: _unsigned(claims()), "The access token uses an algorithm this server does not accept"),
    "garbage": (lambda: "not.a.jwt", "Malformed access token"),
    "opaque": (lambda: "an-opaque-token-0123456789", "Invalid access token"),
}


@pytest.mark.parametrize("case", list(JWT_FAILURES))
def test_a_bad_hs256_token_is_refused_with_the_reason(hs_srv, case):
    make, description = JWT_FAILURES[case]
    response = server_info_status(hs_srv, make())
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == f'Bearer error="invalid_token", error_description="{description}"'
    assert response.json()["error_description"] == description


def test_jwt_configuration_mistakes_are_refused():
    with pytest.raises(ValueError, match="32 bytes"):
        JWTVerifier(secret="short", audience=AUDIENCE)
    with pytest.raises(ValueError, match="audience"):
        JWTVerifier(secret=SECRET, audience="")
    with pytest.raises(ValueError, match="exactly one"):
        JWTVerifier(secret=SECRET, jwks_url="https://keys.example/jwks.json", audience=AUDIENCE)
    with pytest.raises(ValueError, match="https"):
        JWTVerifier(jwks_url="http://keys.example/jwks.json", audience=AUDIENCE)


# --------------------------------------------------------------------------- RS256 via JWKS


def rs_token(key: Any, kid: str | None, **overrides: Any) -> str:
    headers = {"kid": kid} if kid is not None else None
    return jwt.encode(claims(**overrides), key, algorithm="RS256", headers=headers)


def test_rs256_tokens_are_checked_against_a_jwks_url_with_caching_and_rotation():
    first, second = rsa_key(), rsa_key()
    with JWKSServer() as keys:
        keys.keys = [jwk(first, "k1")]
        verifier = JWTVerifier(jwks_url=keys.url, audience=AUDIENCE, issuer=ISSUER, jwks_min_refresh=0.2)
        with serve_app(MCPApp(build_server(), auth=BearerAuth([verifier]))) as served:
            assert server_info_status(served, rs_token(first, "k1")).status_code == 200
            assert server_info_status(served, rs_token(first, "k1", sub="bob")).status_code == 200
            assert keys.fetches == 1  # cached

            expired = server_info_status(served, rs_token(first, "k1", exp=int(time.time()) - 3600))
            assert expired.status_code == 401
            assert "The access token expired" in expired.headers["www-authenticate"]

            forged = server_info_status(served, rs_token(second, "k1"))  # right kid, wrong key
            assert forged.status_code == 401
            assert "signature is invalid" in forged.headers["www-authenticate"]

            time.sleep(0.3)
            unknown = server_info_status(served, rs_token(second, "k2"))
            assert unknown.status_code == 401
            assert "unknown key" in unknown.headers["www-authenticate"]
            assert keys.fetches == 2  # an unknown kid made it look again

            keys.keys = [jwk(first, "k1"), jwk(second, "k2")]  # the issuer rotates in a new key
            time.sleep(0.3)
            assert server_info_status(served, rs_token(second, "k2")).status_code == 200
            assert keys.fetches == 3
            assert server_info_status(served, rs_token(second, "k2")).status_code == 200
            assert keys.fetches == 3


def test_a_hs256_token_made_with_the_public_key_is_refused_by_a_jwks_verifier():
    # Algorithm confusion: "HS256 keyed with the RSA public key" must not pass for RS256.
    key = rsa_key()
    with JWKSServer() as keys:
        keys.keys = [jwk(key, "k1")]
        verifier = JWTVerifier(jwks_url=keys.url, audience=AUDIENCE, issuer=ISSUER)
        with serve_app(MCPApp(build_server(), auth=BearerAuth([verifier]))) as served:
            token = _compact(
                {"alg": "HS256", "typ": "JWT", "kid": "k1"},
                claims(),
                lambda data: hmac.new(public_pem(key), data, hashlib.sha256).digest(),
            )
            response = server_info_status(served, token)
            assert response.status_code == 401
            assert "algorithm this server does not accept" in response.headers["www-authenticate"]


def test_an_unreachable_jwks_url_is_503_not_401():
    with JWKSServer() as keys:
        keys.status = 500
        verifier = JWTVerifier(jwks_url=keys.url, audience=AUDIENCE, issuer=ISSUER)
        with serve_app(MCPApp(build_server(), auth=BearerAuth([verifier]))) as served:
            response = server_info_status(served, rs_token(rsa_key(), "k1"))
            assert response.status_code == 503
            assert response.headers["retry-after"] == "5"
            assert response.json()["error"] == "temporarily_unavailable"
            assert keys.fetches == 1
            assert server_info_status(served, rs_token(rsa_key(), "k1")).status_code == 503
            assert keys.fetches == 1  # a failing endpoint is not hammered


# ------------------------------------------------------------------------------- ES256 by PEM


def test_es256_tokens_are_checked_against_a_pem_public_key(tmp_path):
    key = ec_key()
    pem = tmp_path / "es256.pem"
    pem.write_bytes(public_pem(key))
    with server_process(
        "--jwt-public-key",
        str(pem),
        "--jwt-audience",
        AUDIENCE,
        "--jwt-issuer",
        ISSUER,
    ) as served:
        good = jwt.encode(claims(), key, algorithm="ES256")
        assert server_info_status(served, good).status_code == 200
        other = jwt.encode(claims(), ec_key(), algorithm="ES256")
        refused = server_info_status(served, other)
        assert refused.status_code == 401
        assert "signature is invalid" in refused.headers["www-authenticate"]
        rsa_signed = server_info_status(served, jwt.encode(claims(), rsa_key(), algorithm="RS256"))
        assert rsa_signed.status_code == 401
        assert "algorithm this server does not accept" in rsa_signed.headers["www-authenticate"]


# ------------------------------------------------------------------- the command line, logs


def test_tokens_from_the_environment_and_never_in_the_logs():
    env_tokens = ["env-token-one-0123456789abcdef", "env-token-two-0123456789abcdef"]
    wrong_token = "wrong-token-that-must-not-be-logged-0123"
    jwt_secret = "jwt-secret-for-the-log-test-0123456789abcdef"
    valid_jwt = jwt.encode(claims(), jwt_secret, algorithm="HS256")
    expired_jwt = jwt.encode(claims(exp=int(time.time()) - 3600), jwt_secret, algorithm="HS256")
    env = {
        "PLAINMCP_EVERYTHING_AUTH_TOKENS": ",".join(env_tokens),
        "PLAINMCP_EVERYTHING_JWT_SECRET": jwt_secret,
        "PLAINMCP_EVERYTHING_JWT_AUDIENCE": AUDIENCE,
    }
    with server_process("--log-level", "debug", "--log-format", "json", env=env) as served, client() as http:
        for token in [*env_tokens, valid_jwt]:
            response = http.post(
                served.url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), **bearer(token)}
            )
            assert response.status_code == 200
            session = response.headers["mcp-session-id"]
            listed = http.post(
                served.url, content=dumps(rpc(1, "tools/list")), headers={**legacy_headers(session), **bearer(token)}
            )
            assert listed.status_code == 200
        for token in (wrong_token, expired_jwt):
            assert http.get(f"{served.base_url}/metrics", headers=bearer(token)).status_code == 401
        assert (
            http.get(f"{served.base_url}/metrics", headers={"Authorization": f"Basic {wrong_token}"}).status_code == 401
        )
        served.stop()  # the log is written by a thread of its own, in batches: every line is out at exit
        lines = served.json_lines()
        text = served.stderr()
    assert [line["subject"] for line in lines if line.get("path") == "/mcp" and line.get("status") == 200][:6] == [
        "static-token-1",
        "static-token-1",
        "static-token-2",
        "static-token-2",
        "jwt:alice",
        "jwt:alice",
    ]
    assert sum(1 for line in lines if line["message"].startswith("refused a request to /metrics")) == 2
    for secret in [*env_tokens, wrong_token, jwt_secret, valid_jwt, expired_jwt]:
        assert secret not in text
        for part in secret.split("."):
            assert part not in text  # not even a JWT's header, payload or signature


def test_a_flag_token_replaces_the_environment_tokens():
    env = {"PLAINMCP_EVERYTHING_AUTH_TOKENS": "env-token-0123456789abcdef"}
    with server_process("--auth-token", TOKEN, "--auth-token", OTHER_TOKEN, env=env) as served:
        assert server_info_status(served, TOKEN).status_code == 200
        assert server_info_status(served, OTHER_TOKEN).status_code == 200
        assert server_info_status(served, "env-token-0123456789abcdef").status_code == 401


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jwt-issuer", ISSUER], "--jwt-issuer and --jwt-audience need a key"),
        (["--jwt-secret", "short", "--jwt-audience", AUDIENCE], "at least 32 bytes"),
        (["--jwt-secret", SECRET], "needs an audience"),
        (["--authorization-server", AUTH_SERVER], "--authorization-server needs token checking"),
        (["--certfile", "cert.pem"], "TLS needs both --certfile and --keyfile"),
        (["--jwt-public-key", "/nonexistent/key.pem", "--jwt-audience", AUDIENCE], "No such file"),
    ],
)
def test_options_that_do_not_fit_together_stop_the_server_at_once(args, message):
    result = run_to_exit(*args)
    assert result.returncode == 1
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


# ------------------------------------------------------------------------------------------ TLS


def test_tls_with_a_certificate_and_key(tmp_path):
    certfile, keyfile = self_signed_certificate(tmp_path)
    context = trusting(certfile)
    with server_process(
        "--certfile",
        str(certfile),
        "--keyfile",
        str(keyfile),
        "--auth-token",
        TOKEN,
        verify=context,
        tls=True,
    ) as served:
        assert served.base_url.startswith("https://")
        with client(verify=context) as https:
            assert https.get(f"{served.base_url}/health").status_code == 200
            assert (
                https.post(
                    served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None)
                ).status_code
                == 401
            )
            response = https.post(
                served.url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), **bearer(TOKEN)}
            )
            assert response.status_code == 200
            assert response.json()["result"]["serverInfo"]["name"] == "plainmcp-everything"
            call = https.post(
                f"{served.base_url}/mcp/call",
                content=dumps(rpc(1, "test_simple_text", {})),
                headers={"Content-Type": "application/json", "Accept": ACCEPT_BOTH, **bearer(TOKEN)},
            )
            assert call.json()["result"] == "This is a simple text response for testing."
        with client() as untrusting, pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            untrusting.get(f"{served.base_url}/health")
        with client() as plain, pytest.raises(httpx.HTTPError):
            plain.get(f"http://127.0.0.1:{served.port}/health")
