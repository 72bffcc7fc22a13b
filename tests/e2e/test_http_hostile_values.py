"""Hostile values on the HTTP transports (issue 15, Low): each is a clear error, never HTTP 500,
never ``-32603``, never a traceback in the log.

- ids, methods and ``Last-Event-ID`` values with lone surrogates, odd digits or absurd lengths;
- malformed params answered ``-32602``: ``logging/setLevel`` with a non-string level, a lone
  surrogate in arguments (every transport, both eras), a resource URI whose percent-escapes are
  not UTF-8;
- a mirrored header sent twice (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
  ``Mcp-Session-Id``) is refused, in both eras;
- JWTs without ``sub`` are distinct principals: one cannot use another's legacy session.

The server is the everything fixture in a real process (its log is checked for tracebacks), or the
auth suite's app on a thread for the JWT case. Bodies are written with ``json.dumps``, which
escapes a lone surrogate as ``\\ud800``, as a hostile client would send it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from plainmcp.http.app import MCPApp
from plainmcp.http.auth import BearerAuth
from plainmcp.http.jwt_auth import JWTVerifier

from .http_server import (
    dumps,
    initialize_body,
    legacy_headers,
    modern_body,
    modern_headers,
    rpc,
    server_process,
)
from .ops_harness import build_server, serve_app

LONE = "\ud800"
JSON = {"Content-Type": "application/json"}
SSE = {"Accept": "text/event-stream"}


def hostile(obj: Any) -> bytes:
    return json.dumps(obj).encode("ascii")  # \ud800 stays an escape: valid JSON, not valid text


@pytest.fixture(scope="module")
def served() -> Iterator[Any]:
    with server_process() as server:
        yield server
        server.stop()  # every log line is out at exit (the log is written in batches)
        assert "Traceback" not in server.log(), server.log()[-3000:]


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0) as client:
        yield client


@pytest.fixture
def session(served: Any, http: httpx.Client) -> dict[str, str]:
    opened = http.post(served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
    headers = legacy_headers(opened.headers["mcp-session-id"])
    http.post(served.url, content=dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), headers=headers)
    return headers


def error_of(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 500, response.text[:300]
    return response.json()["error"]


# ---------------------------------------------------------------- ids, methods, Last-Event-ID


@pytest.mark.parametrize("request_id", [LONE, "x" * 1_000_000], ids=["lone-surrogate", "one-megabyte"])
def test_odd_ids_are_answered_not_crashed_on(served, http, session, request_id):
    pong = http.post(served.url, content=hostile(rpc(request_id, "ping")), headers=session)
    assert pong.status_code == 200 and pong.json() == {"jsonrpc": "2.0", "id": request_id, "result": {}}
    unknown = http.post(served.url, content=hostile(rpc(request_id, "no/such" + LONE)), headers=session)
    assert error_of(unknown)["code"] == -32601
    # 2026-07-28: a header mismatch is answered with the request's id too.
    body = modern_body(request_id, "tools/call", {"name": "test_simple_text", "arguments": {}})
    mismatch = http.post(served.url, content=hostile(body), headers={**modern_headers(body), "Mcp-Name": "other"})
    assert mismatch.status_code == 400 and mismatch.json()["id"] == request_id
    assert mismatch.json()["error"]["code"] == -32020
    # The gateway echoes the id of a call whose tool does not exist.
    gateway = http.post(f"{served.base_url}/mcp/call", content=hostile(rpc(request_id, "nothing" + LONE)), headers=JSON)
    assert gateway.status_code < 500 and gateway.json()["id"] == request_id


@pytest.mark.parametrize("method", [LONE, "m" * 1_000_000], ids=["lone-surrogate", "one-megabyte"])
def test_odd_methods_are_method_not_found(served, http, session, method):
    assert error_of(http.post(served.url, content=hostile(rpc(1, method)), headers=session))["code"] == -32601


@pytest.mark.parametrize("value", ["0a1b2c-" + "9" * 5000, "0a1b2c-\xb2", "x" * 8000, "-1", "a--1", "0a1b2c-"])
def test_a_last_event_id_we_never_issued_is_a_clear_404(served, http, session, value):
    headers = {**session, **SSE, "Last-Event-ID": value.encode("latin-1")}
    with http.stream("GET", served.url, headers=headers) as response:
        response.read()
    assert response.status_code == 404
    assert response.json()["error"] == {"code": -32600, "message": "Unknown or expired Last-Event-ID"}


# -------------------------------------------------------------------------- -32602, not -32603


@pytest.mark.parametrize("level", [[], {}, 3, None, LONE, "x" * 100_000])
def test_set_level_with_a_level_that_is_not_one_of_the_names_is_invalid_params(served, http, session, level):
    reply = http.post(served.url, content=hostile(rpc(1, "logging/setLevel", {"level": level})), headers=session)
    error = error_of(reply)
    assert error["code"] == -32602 and len(error["message"]) < 200


LONE_ARGUMENTS = [
    ("tools/call", {"name": "test_simple_text", "arguments": {"text": LONE}}),
    ("tools/call", {"name": "json_schema_2020_12_tool", "arguments": {"name": "a" + LONE, "email": "a@b.c"}}),
    ("tools/call", {"name": "test_simple_text", "arguments": {LONE: "key"}}),
    ("prompts/get", {"name": "test_prompt_with_arguments", "arguments": {"arg1": LONE, "arg2": "x"}}),
    ("resources/read", {"uri": "test://template/" + LONE + "/data"}),
]


@pytest.mark.parametrize(("method", "params"), LONE_ARGUMENTS)
def test_a_lone_surrogate_in_params_is_invalid_params_in_both_eras(served, http, session, method, params):
    legacy = http.post(served.url, content=hostile(rpc(1, method, params)), headers=session)
    assert error_of(legacy) == {
        "code": -32602,
        "message": "Invalid params: a string holds a lone surrogate escape (\\ud800-\\udfff without its pair); send Unicode text",
    }
    body = modern_body(2, method, params)
    # A header cannot carry the surrogate: the headers are those of the same request without it,
    # and the body is judged first.
    headers = modern_headers(json.loads(json.dumps(body).replace("\\ud800", "x")))
    modern = http.post(served.url, content=hostile(body), headers=headers)
    assert modern.status_code == 400 and error_of(modern)["code"] == -32602


def test_a_lone_surrogate_in_params_is_invalid_params_on_the_sse_transport(served, http):
    with http.stream("GET", f"{served.base_url}/sse", headers=SSE) as stream:
        lines = stream.iter_lines()
        endpoint = next(line for line in lines if line.startswith("data: "))[6:]
        post = f"{served.base_url}{endpoint}"
        assert http.post(post, content=dumps(initialize_body()), headers=JSON).status_code == 202
        call = rpc(7, "tools/call", {"name": "test_simple_text", "arguments": {"text": LONE}})
        assert http.post(post, content=hostile(call), headers=JSON).status_code == 202
        answer = next(json.loads(line[6:]) for line in lines if line.startswith("data: ") and '"id":7' in line)
        assert answer["error"]["code"] == -32602


def test_paired_surrogate_escapes_are_ordinary_text(served, http, session):
    # Clients that escape all non-ASCII send an emoji as a \ud83d\ude00 pair: that is text.
    body = rpc(
        1, "tools/call", {"name": "json_schema_2020_12_tool", "arguments": {"name": "\U0001f600", "email": "a@b.c"}}
    )
    reply = http.post(served.url, content=hostile(body), headers=session)
    assert reply.status_code == 200 and "\U0001f600" in reply.json()["result"]["content"][0]["text"]


@pytest.mark.parametrize(
    "uri", ["test://template/%FF%FE/data", "test://template/%C3/data", "test://template/%ED%A0%80/data"]
)
def test_a_uri_whose_escapes_are_not_utf8_is_invalid_params(served, http, session, uri):
    for method in ("resources/read", "resources/subscribe"):
        error = error_of(http.post(served.url, content=dumps(rpc(1, method, {"uri": uri})), headers=session))
        assert error["code"] == -32602 and "UTF-8" in error["message"]


# ------------------------------------------------------------------------ repeated headers


@pytest.mark.parametrize("name", ["MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"])
def test_a_mirrored_header_sent_twice_is_a_header_mismatch_in_2026(served, http, name):
    body = modern_body(1, "tools/call", {"name": "test_simple_text", "arguments": {}})
    headers = [(key, value) for key, value in modern_headers(body).items()]
    value = next(v for k, v in headers if k.lower() == name.lower())
    reply = http.post(served.url, content=dumps(body), headers=[*headers, (name, value)])
    assert reply.status_code == 400
    assert error_of(reply) == {"code": -32020, "message": f"Header mismatch: the {name} header was sent more than once"}
    # The same request with each header once is served.
    assert http.post(served.url, content=dumps(body), headers=headers).status_code == 200


@pytest.mark.parametrize("name", ["Mcp-Session-Id", "MCP-Protocol-Version"])
def test_a_session_header_sent_twice_is_refused_in_the_legacy_era(served, http, session, name):
    headers = list(session.items())
    value = next(v for k, v in headers if k.lower() == name.lower())
    listing = dumps(rpc(3, "tools/list"))
    refused = http.post(served.url, content=listing, headers=[*headers, (name, value)])
    assert refused.status_code == 400
    assert error_of(refused) == {"code": -32600, "message": f"Bad Request: the {name} header was sent more than once"}
    stream = http.get(served.url, headers=[*headers, (name, value), ("Accept", "text/event-stream")])
    assert stream.status_code == 400
    assert http.post(served.url, content=listing, headers=headers).status_code == 200


# ------------------------------------------------------------------------------ JWTs without sub

SECRET = "hs256-shared-secret-0123456789abcdef-xyz"
AUDIENCE = "https://mcp.example/mcp"


def token_without_sub(nonce: str) -> str:
    now = int(time.time())
    return jwt.encode({"aud": AUDIENCE, "iat": now, "exp": now + 300, "jti": nonce}, SECRET, algorithm="HS256")


def test_jwts_without_sub_cannot_use_each_others_sessions():
    verifier = JWTVerifier(secret=SECRET, audience=AUDIENCE, leeway=5)
    mine, theirs = token_without_sub("a"), token_without_sub("b")
    with serve_app(MCPApp(build_server(), auth=BearerAuth([verifier]))) as served, httpx.Client(timeout=10.0) as http:
        opened = http.post(
            served.url,
            content=dumps(initialize_body()),
            headers={**legacy_headers(version=None), "Authorization": f"Bearer {mine}"},
        )
        session = opened.headers["mcp-session-id"]
        listing = dumps(rpc(2, "tools/list"))
        stolen = http.post(
            served.url, content=listing, headers={**legacy_headers(session), "Authorization": f"Bearer {theirs}"}
        )
        assert stolen.status_code == 404
        own = http.post(
            served.url, content=listing, headers={**legacy_headers(session), "Authorization": f"Bearer {mine}"}
        )
        assert own.status_code == 200
        with http.stream("GET", f"{served.base_url}/sse", headers={**SSE, "Authorization": f"Bearer {mine}"}) as stream:
            lines = stream.iter_lines()
            endpoint = next(line for line in lines if line.startswith("data: "))[6:]
            body = dumps(initialize_body())
            other = http.post(
                served.base_url + endpoint, content=body, headers={**JSON, "Authorization": f"Bearer {theirs}"}
            )
            assert other.status_code == 404
            assert (
                http.post(
                    served.base_url + endpoint, content=body, headers={**JSON, "Authorization": f"Bearer {mine}"}
                ).status_code
                == 202
            )
