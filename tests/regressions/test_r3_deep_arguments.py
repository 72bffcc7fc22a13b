"""Issue 26 (Low): tool arguments nested 990 levels deep were -32603 on Streamable HTTP and stdio (a
RecursionError while validating them); they are invalid params (-32602), and the server goes on."""

from __future__ import annotations

import json

from tests.e2e.http_server import modern_body, modern_headers, server_process, sync_client

DEEP = '{"a":' * 990 + "{}" + "}" * 990  # written as text: encoders of both sides stop far earlier


def test_deep_tool_arguments_are_invalid_params_over_streamable_http() -> None:
    with server_process() as server, sync_client() as client:
        body = modern_body(
            1, "tools/call", {"name": "json_schema_2020_12_tool", "arguments": {"name": "x", "address": "@"}}
        )
        text = json.dumps(body).replace('"@"', DEEP)
        response = client.post(server.url, content=text, headers=modern_headers(body))
        assert response.json()["error"]["code"] == -32602, response.text
        assert "nested too deeply" in response.json()["error"]["message"]
        after = modern_body(2, "tools/call", {"name": "test_simple_text", "arguments": {}})
        assert client.post(server.url, content=json.dumps(after), headers=modern_headers(after)).status_code == 200
        assert "Traceback" not in server.log()


def test_deep_tool_arguments_are_invalid_params_over_stdio() -> None:
    import subprocess
    import sys

    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}  # fmt: skip
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "test_simple_text", "arguments": {"x": "@"}},
    }
    lines = [json.dumps(init), json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
             json.dumps(call).replace('"@"', DEEP), json.dumps({**call, "id": 2, "params": {"name": "test_simple_text"}})]  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "plainmcp_everything"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    replies = {reply["id"]: reply for reply in map(json.loads, done.stdout.splitlines())}
    assert replies[1]["error"]["code"] == -32602, replies[1]
    assert replies[2]["result"]["content"][0]["type"] == "text"
    assert "Traceback" not in done.stderr
