"""Issue 26, Low: the JSON-RPC gateway against deep arguments and mirrored headers, and a
2026-07-28 ``logLevel`` of the wrong type, on a real server process over both HTTP stacks.

- 990-deep tool arguments answered 500 (a ``RecursionError`` in validation, with a traceback in
  the log); they are an invalid request now, and the server keeps serving.
- The gateway ran a call whose ``Mcp-Param-Region`` header disagreed with its ``region`` argument
  (an intermediary routing on the header acts on another value than the tool); it checks them as
  Streamable HTTP does.
- A ``logLevel`` given as an object was -32603 (an unhashable lookup); it is -32602.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

import httpx
import pytest

from tests.e2e.http_server import ServerProcess, dumps, modern_body, modern_headers, server_process

JSON = {"Content-Type": "application/json"}


@pytest.fixture(params=["httptools", "h11"], scope="module")
def served(request) -> Iterator[ServerProcess]:
    with server_process(env={"PLAINMCP_HTTP_PARSER": request.param}) as process:
        yield process


@contextlib.contextmanager
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10.0, trust_env=False) as http:
        yield http


def call(method: str, params: object, request_id: int = 1) -> bytes:
    return dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})


@pytest.mark.parametrize("depth", [300, 990, 5000])
def test_r3_http_gateway_deep_arguments_are_an_invalid_request_not_a_500(served, depth):
    nested = "[" * depth + "]" * depth
    body = b'{"jsonrpc":"2.0","id":3,"method":"test_simple_text","params":{"text":%s}}' % nested.encode()
    with client() as http:
        reply = http.post(f"{served.base_url}/mcp/call", content=body, headers=JSON)
        assert reply.status_code == 400, reply.text
        error = reply.json()["error"]
        assert error["code"] in (-32700, -32600), error
        assert "Traceback" not in reply.text and "RecursionError" not in served.log()
        # Just inside the limit is served as usual (here: the tool refuses a list for its text).
        shallow = {"text": json.loads("[" * 200 + "]" * 200)}
        answered = http.post(f"{served.base_url}/mcp/call", content=call("test_simple_text", shallow), headers=JSON)
        assert answered.status_code == 200 and answered.json()["error"]["code"] == -32602


def test_r3_http_gateway_checks_mcp_param_headers_like_streamable_http(served):
    url = f"{served.base_url}/mcp/call"
    arguments = {"region": "eu-west"}
    with client() as http:
        agreed = http.post(
            url, content=call("test_custom_header", arguments), headers={**JSON, "Mcp-Param-Region": "eu-west"}
        )
        assert agreed.status_code == 200 and agreed.json()["result"] == "Region: eu-west"
        for headers, why in (
            ({"Mcp-Param-Region": "us-east"}, "does not match"),
            ({}, "missing"),
            ({"Mcp-Param-Region": "=?base64?!!!?="}, "invalid Base64"),
        ):
            refused = http.post(url, content=call("test_custom_header", arguments), headers={**JSON, **headers})
            assert refused.status_code == 400, refused.text
            assert refused.json()["error"]["code"] == -32020 and why in refused.json()["error"]["message"]
        twice = httpx.Headers([*JSON.items(), ("Mcp-Param-Region", "eu-west"), ("Mcp-Param-Region", "eu-west")])
        repeated = http.post(url, content=call("test_custom_header", arguments), headers=twice)
        assert repeated.json()["error"]["code"] == -32020 and "more than once" in repeated.json()["error"]["message"]
        # On Streamable HTTP the same disagreement is refused the same way.
        body = modern_body(5, "tools/call", {"name": "test_custom_header", "arguments": arguments})
        streamable = http.post(
            served.url, content=dumps(body), headers={**modern_headers(body), "Mcp-Param-Region": "x"}
        )
        assert streamable.status_code == 400 and streamable.json()["error"]["code"] == -32020


@pytest.mark.parametrize("level", [{"level": "debug"}, ["debug"], 3, None])
def test_r3_http_modern_log_level_of_the_wrong_type_is_invalid_params(served, level):
    body = modern_body(9, "tools/call", {"name": "test_simple_text", "arguments": {}}, meta={})
    body["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = level
    with client() as http:
        reply = http.post(served.url, content=dumps(body), headers=modern_headers(body))
    assert reply.json()["error"]["code"] == -32602, reply.text
    assert "Invalid log level" in reply.json()["error"]["message"]
