"""Operable over HTTP: request ids on every response and in the log line, Prometheus metrics
counted from known calls, the JSON-RPC gateway, and the limits (body size and time, sessions,
slow readers, message and replay-buffer sizes).

Real uvicorn servers on 127.0.0.1 (a thread, or a process with the shared command line), real
httpx clients, and raw sockets where a client must misbehave.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from plainmcp.http.app import MCPApp
from plainmcp.http.auth import BearerAuth, StaticTokens
from plainmcp.http.event_buffer import EventBuffer
from plainmcp.http.exchange import RequestIds
from plainmcp.http.metrics import Registry
from plainmcp.logs import JsonFormatter, TextFormatter

from .http_server import (
    HOST,
    dumps,
    initialize_body,
    legacy_headers,
    modern_body,
    modern_headers,
    rpc,
)
from .ops_harness import (
    ADD_INPUT,
    ADD_OUTPUT,
    SERVER_DESCRIPTION,
    SERVER_NAME,
    SERVER_VERSION,
    TEXT_INPUT,
    Probe,
    build_server,
    client,
    parse_exposition,
    serve_app,
    server_process,
    wait_until,
)

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with client() as c:
        yield c


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def srv(probe) -> Iterator[Any]:
    with serve_app(MCPApp(build_server(probe))) as served:
        yield served


def open_session(http: httpx.Client, url: str, **headers: str) -> str:
    response = http.post(url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), **headers})
    assert response.status_code == 200, response.text
    session = response.headers["mcp-session-id"]
    note = dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert http.post(url, content=note, headers=legacy_headers(session)).status_code == 202
    return session


def call(
    http: httpx.Client, url: str, session: str, request_id: int, name: str, arguments: dict[str, Any]
) -> dict[str, Any]:
    body = dumps(rpc(request_id, "tools/call", {"name": name, "arguments": arguments}))
    response = http.post(url, content=body, headers=legacy_headers(session))
    assert response.status_code == 200, response.text
    return response.json()


def metrics(http: httpx.Client, base_url: str, **headers: str) -> Any:
    response = http.get(f"{base_url}/metrics", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return parse_exposition(response.text)


def gateway(http: httpx.Client, base_url: str, body: Any, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else dumps(body)
    return http.post(f"{base_url}/mcp/call", content=content, headers={**JSON, **headers})


# --------------------------------------------------------------------------------- request ids


def test_every_response_carries_a_minted_request_id(srv, http):
    responses = [
        http.get(f"{srv.base_url}/health"),
        http.post(srv.url, content=dumps(initialize_body()), headers=legacy_headers(version=None)),
        http.get(f"{srv.base_url}/nowhere"),
        http.get(f"{srv.base_url}/mcp/server-info", headers={"Host": "evil.example"}),
        http.post(srv.url, content=b"{", headers=legacy_headers(version=None)),
        http.get(f"{srv.base_url}/metrics"),
        gateway(http, srv.base_url, rpc(1, "echo", {"text": "x"})),
    ]
    assert [r.status_code for r in responses] == [200, 200, 404, 421, 400, 200, 200]
    ids = [r.headers["x-request-id"] for r in responses]
    for response, request_id in zip(responses, ids, strict=True):
        assert UUID.match(request_id), request_id
        assert response.headers["x-mcp-request-id"] == request_id
    assert len(set(ids)) == len(ids)


def test_a_streamed_response_carries_the_request_id(srv, http):
    with http.stream(
        "GET", f"{srv.base_url}/sse", headers={"Accept": "text/event-stream", "X-Request-ID": "stream-1"}
    ) as response:
        assert response.headers["content-type"] == "text/event-stream"
        assert response.headers["x-request-id"] == response.headers["x-mcp-request-id"] == "stream-1"


@pytest.mark.parametrize(
    ("sent", "expected"),
    [
        ({"X-Request-ID": "client-id-42"}, "client-id-42"),
        ({"X-MCP-Request-ID": "mcp-id-7"}, "mcp-id-7"),
        ({"X-Request-ID": "first", "X-MCP-Request-ID": "second"}, "first"),
        ({"X-Request-ID": "has space", "X-MCP-Request-ID": "fallback-id"}, "fallback-id"),
        ({"X-Request-ID": "a" * 128}, "a" * 128),
    ],
)
def test_the_clients_request_id_is_echoed_in_both_headers(srv, http, sent, expected):
    response = http.post(srv.url, content=dumps(initialize_body()), headers={**legacy_headers(version=None), **sent})
    assert response.headers["x-request-id"] == expected
    assert response.headers["x-mcp-request-id"] == expected


@pytest.mark.parametrize(
    "value", ["a" * 129, "with space", "tab\there", "ünïcode"], ids=["long", "space", "tab", "non-ascii"]
)
def test_an_unusable_request_id_is_replaced_by_a_fresh_one(srv, http, value):
    response = http.get(f"{srv.base_url}/health", headers={"X-Request-ID": value.encode("utf-8")})
    assert UUID.match(response.headers["x-request-id"])
    assert response.headers["x-mcp-request-id"] == response.headers["x-request-id"]


def test_minted_request_ids_are_uuid_shaped_and_unique():
    """The app mints ids from a random prefix and a counter, not ``uuid4()`` per request: they must
    still look like UUIDs to log tools, and never repeat, within an app or across two."""
    first, second = RequestIds(), RequestIds()
    ids = [first() for _ in range(5000)] + [second() for _ in range(5000)]
    assert all(UUID.match(request_id) for request_id in ids)
    assert len(set(ids)) == len(ids)


def test_the_request_id_is_in_the_json_log_line_of_its_request():
    with server_process("--log-format", "json", "--log-level", "debug") as served, client() as http:
        traced = http.post(
            served.url,
            content=dumps(initialize_body()),
            headers={**legacy_headers(version=None), "X-Request-ID": "trace-me-123"},
        )
        minted = http.post(
            f"{served.base_url}/mcp/call",
            content=dumps(rpc(9, "test_simple_text", {})),
            headers=JSON,
        )
        refused = http.get(
            f"{served.base_url}/mcp/server-info", headers={"Host": "evil.example", "X-MCP-Request-ID": "evil-1"}
        )
        assert refused.status_code == 421
        http.get(f"{served.base_url}/health", headers={"X-Request-ID": "probe-1"})
        minted_id = minted.headers["x-request-id"]
        expected = {"trace-me-123", minted_id, "evil-1", "probe-1"}
        wait_until(lambda: expected <= {line.get("request_id") for line in served.json_lines()}, message="log lines")
        lines = served.json_lines()
    by_id: dict[str, list[dict[str, Any]]] = {}
    for line in lines:
        if "request_id" in line:
            by_id.setdefault(line["request_id"], []).append(line)
    [access] = by_id["trace-me-123"]
    assert access["logger"] == "plainmcp.http.exchange"
    assert access["level"] == "info"
    assert (access["method"], access["path"], access["status"]) == ("POST", "/mcp", 200)
    assert access["message"].startswith("POST /mcp 200 ")
    assert isinstance(access["duration_ms"], float | int) and access["duration_ms"] >= 0
    assert access["bytes_in"] == len(dumps(initialize_body()))
    assert access["bytes_out"] == int(traced.headers["content-length"])
    assert "mcp_session" in access and traced.headers["mcp-session-id"].startswith(access["mcp_session"])
    assert len(access["mcp_session"]) == 8  # only a prefix: the id is a credential
    [gateway_line] = by_id[minted_id]
    assert (gateway_line["path"], gateway_line["status"]) == ("/mcp/call", 200)
    refusal, access_refused = by_id["evil-1"]
    assert refusal["message"] == "refused a request for host 'evil.example'"
    assert access_refused["status"] == 421
    [health] = by_id["probe-1"]
    assert health["level"] == "debug"  # probes do not fill the log at info level


def test_text_log_lines_show_the_request_id():
    record = logging.LogRecord("plainmcp.http.exchange", logging.INFO, __file__, 1, "GET /x 200", (), None)
    record.request_id = "abc-1"
    record.status = 200
    assert TextFormatter().format(record).endswith("plainmcp.http.exchange: GET /x 200 request_id=abc-1")
    entry = json.loads(JsonFormatter().format(record))
    assert entry["request_id"] == "abc-1" and entry["status"] == 200 and entry["message"] == "GET /x 200"


# ------------------------------------------------------------------------------------- metrics


def test_metrics_count_calls_by_method_tool_and_outcome(srv, http):
    session = open_session(http, srv.url)
    assert call(http, srv.url, session, 1, "add", {"a": 1, "b": 2})["result"]["structuredContent"] == {"sum": 3}
    assert call(http, srv.url, session, 2, "add", {"a": 3, "b": 4})["result"]["structuredContent"] == {"sum": 7}
    assert call(http, srv.url, session, 3, "add", {"a": "x", "b": 4})["result"]["isError"] is True
    assert call(http, srv.url, session, 4, "fail", {})["result"]["isError"] is True
    assert call(http, srv.url, session, 5, "nope", {})["error"]["code"] == -32602
    assert call(http, srv.url, session, 6, "big", {"size": 100_000})["result"]["content"][0]["text"] == "x" * 100_000
    assert call(http, srv.url, session, 7, "echo", {"text": "y" * 5000})["result"]["content"][0]["text"] == "y" * 5000
    modern = modern_body(8, "tools/call", {"name": "echo", "arguments": {"text": "modern"}})
    assert http.post(srv.url, content=dumps(modern), headers=modern_headers(modern)).status_code == 200
    assert gateway(http, srv.base_url, rpc(9, "add", {"a": 1, "b": 1})).json()["result"] == {"sum": 2}
    assert gateway(http, srv.base_url, rpc(10, "add", {"a": 1})).json()["error"]["code"] == -32602
    assert gateway(http, srv.base_url, rpc(11, "nope", {})).json()["error"]["code"] == -32601
    http.get(f"{srv.base_url}/nowhere")

    found = metrics(http, srv.base_url)
    assert found.types == {
        "mcp_call_duration_seconds": "histogram",
        "mcp_call_total": "counter",
        "mcp_input_size_bytes": "histogram",
        "mcp_output_size_bytes": "histogram",
        "mcp_active_sessions": "gauge",
        "mcp_active_streams": "gauge",
        "mcp_http_responses_total": "counter",
    }
    assert set(found.helps) == set(found.types)
    totals = {
        (dict(labels)["method"], dict(labels)["tool"], dict(labels)["outcome"]): value
        for labels, value in found.series("mcp_call_total").items()
    }
    assert totals == {
        ("initialize", "", "ok"): 1,
        ("tools/call", "add", "ok"): 3,
        ("tools/call", "add", "tool_error"): 1,
        ("tools/call", "add", "error"): 1,
        ("tools/call", "fail", "tool_error"): 1,
        ("tools/call", "unknown", "error"): 2,
        ("tools/call", "big", "ok"): 1,
        ("tools/call", "echo", "ok"): 2,
    }
    # Each histogram series counts what the counter counts, and its buckets are cumulative.
    for method, tool in {(m, t) for m, t, _ in totals}:
        expected = sum(value for (m, t, _), value in totals.items() if (m, t) == (method, tool))
        for name in ("mcp_call_duration_seconds", "mcp_input_size_bytes", "mcp_output_size_bytes"):
            assert found.value(f"{name}_count", method=method, tool=tool) == expected, (name, method, tool)
            buckets = sorted(
                (
                    (float(dict(labels)["le"]), value)
                    for labels, value in found.series(f"{name}_bucket").items()
                    if dict(labels)["method"] == method and dict(labels)["tool"] == tool
                ),
            )
            counts = [value for _, value in buckets]
            assert counts == sorted(counts) and buckets[-1] == (float("inf"), expected)
    # The 100 000-character result is in the (65536, 262144] bucket; the 5000-character input above 4096.
    assert found.value("mcp_output_size_bytes_bucket", method="tools/call", tool="big", le="65536.0") == 0
    assert found.value("mcp_output_size_bytes_bucket", method="tools/call", tool="big", le="262144.0") == 1
    assert found.value("mcp_output_size_bytes_sum", method="tools/call", tool="big") > 100_000
    assert (
        found.value("mcp_input_size_bytes_bucket", method="tools/call", tool="echo", le="4096.0") == 1
    )  # the short one
    assert found.value("mcp_input_size_bytes_sum", method="tools/call", tool="echo") > 5000
    assert 0 < found.value("mcp_call_duration_seconds_sum", method="tools/call", tool="add") < 5
    assert found.value("mcp_http_responses_total", route="/mcp/call", status="200") == 3
    assert found.value("mcp_http_responses_total", route="other", status="404") == 1
    assert found.value("mcp_http_responses_total", route="/mcp", status="202") == 1  # notifications/initialized


def test_metrics_gauge_sessions_and_streams(srv, http):
    def gauges() -> dict[tuple[str, str], float]:
        found = metrics(http, srv.base_url)
        return {
            (name, dict(labels)["transport"]): value
            for name in ("mcp_active_sessions", "mcp_active_streams")
            for labels, value in found.series(name).items()
        }

    assert gauges() == {("mcp_active_sessions", "streamable_http"): 0, ("mcp_active_sessions", "sse"): 0}
    session = open_session(http, srv.url)
    with http.stream("GET", f"{srv.base_url}/sse", headers={"Accept": "text/event-stream"}) as sse:
        lines = sse.iter_lines()  # kept: dropping the iterator would close the stream
        assert next(lines) == "event: endpoint"
        with http.stream("GET", srv.url, headers={"Accept": "text/event-stream", "Mcp-Session-Id": session}) as get:
            assert get.status_code == 200
            assert gauges() == {
                ("mcp_active_sessions", "streamable_http"): 1,
                ("mcp_active_sessions", "sse"): 1,
                ("mcp_active_streams", "streamable_http"): 1,
                ("mcp_active_streams", "sse"): 1,
            }
    assert http.delete(srv.url, headers={"Mcp-Session-Id": session}).status_code == 204
    wait_until(
        lambda: (
            gauges()
            == {
                ("mcp_active_sessions", "streamable_http"): 0,
                ("mcp_active_sessions", "sse"): 0,
                ("mcp_active_streams", "streamable_http"): 0,
                ("mcp_active_streams", "sse"): 0,
            }
        ),
        message="sessions and streams back to zero",
    )


def test_a_call_whose_stream_the_client_closes_counts_as_cancelled(srv, http, probe):
    body = modern_body(1, "tools/call", {"name": "slow", "arguments": {}}, meta={"progressToken": "p1"})
    with http.stream("POST", srv.url, content=dumps(body), headers=modern_headers(body)) as response:
        assert response.headers["content-type"] == "text/event-stream"
        assert probe.slow_started.wait(10)
        next(response.iter_lines())  # the progress notification: the call is running
    assert probe.slow_cancelled.wait(10)
    wait_until(
        lambda: (
            metrics(http, srv.base_url).value("mcp_call_total", method="tools/call", tool="slow", outcome="cancelled")
            == 1
        ),
        message="the cancelled call counted",
    )


def test_metrics_need_the_token_when_authentication_is_on(http):
    app = MCPApp(build_server(), auth=BearerAuth([StaticTokens(["metrics-token-0123456789"])]))
    with serve_app(app) as served:
        assert http.get(f"{served.base_url}/metrics").status_code == 401
        found = metrics(http, served.base_url, Authorization="Bearer metrics-token-0123456789")
        assert found.value("mcp_http_responses_total", route="/metrics", status="401") == 1


def test_metrics_can_be_turned_off(http):
    with serve_app(MCPApp(build_server(), metrics=False)) as served:
        assert http.get(f"{served.base_url}/metrics").status_code == 404
        assert (
            http.post(served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None)).status_code
            == 200
        )


def test_the_exposition_format_escapes_labels_and_writes_histograms():
    registry = Registry()
    counter = registry.counter("demo_total", "Counts.\nSecond line with a \\ backslash.", ("name",))
    counter.inc(name='say "hi"\\now\nplease')
    counter.inc(2.5, name="plain")
    histogram = registry.histogram("demo_seconds", "Times.", (0.1, 1.0), ("kind",))
    for value in (0.05, 0.5, 3.0):
        histogram.observe(value, kind="a")
    gauge = registry.gauge("demo_open", "Open things.")
    gauge.collect_with(lambda: [({}, 4)])
    assert registry.exposition().decode() == (
        "# HELP demo_total Counts.\\nSecond line with a \\\\ backslash.\n"
        "# TYPE demo_total counter\n"
        'demo_total{name="plain"} 2.5\n'
        'demo_total{name="say \\"hi\\"\\\\now\\nplease"} 1\n'
        "# HELP demo_seconds Times.\n"
        "# TYPE demo_seconds histogram\n"
        'demo_seconds_bucket{kind="a",le="0.1"} 1\n'
        'demo_seconds_bucket{kind="a",le="1.0"} 2\n'
        'demo_seconds_bucket{kind="a",le="+Inf"} 3\n'
        'demo_seconds_sum{kind="a"} 3.55\n'
        'demo_seconds_count{kind="a"} 3\n'
        "# HELP demo_open Open things.\n"
        "# TYPE demo_open gauge\n"
        "demo_open 4\n"
    )
    parsed = parse_exposition(registry.exposition().decode())
    assert parsed.value("demo_total", name='say "hi"\\now\nplease') == 1
    with pytest.raises(ValueError):
        counter.inc(name="x", extra="y")
    with pytest.raises(ValueError):
        counter.inc(-1, name="x")


def test_metrics_keyed_updates_land_in_the_labelled_series():
    """``inc_at`` / ``observe_at`` (the hot path's, label values in declared order) and the
    labelled calls write the same series."""
    registry = Registry()
    counter = registry.counter("demo_total", "Counts.", ("method", "status"))
    counter.inc(method="tools/call", status="200")
    counter.inc_at(("tools/call", "200"), 2)
    counter.inc_at(("ping", "404"))
    histogram = registry.histogram("demo_seconds", "Times.", (0.1, 1.0), ("method", "tool"))
    histogram.observe(0.05, method="tools/call", tool="echo")
    histogram.observe_at(("tools/call", "echo"), 0.5)
    assert counter.get(method="tools/call", status="200") == 3
    assert counter.get(method="ping", status="404") == 1
    assert histogram.count(method="tools/call", tool="echo") == 2
    parsed = parse_exposition(registry.exposition().decode())
    assert parsed.value("demo_seconds_bucket", method="tools/call", tool="echo", le="0.1") == 1
    assert parsed.value("demo_seconds_bucket", method="tools/call", tool="echo", le="1.0") == 2
    with pytest.raises(ValueError):
        counter.inc_at(("ping", "404"), -1)


# ------------------------------------------------------------------------------------- gateway


def test_gateway_server_info(srv, http):
    response = http.get(f"{srv.base_url}/mcp/server-info")
    assert response.status_code == 200
    info = response.json()
    assert {key: info[key] for key in ("name", "version", "description")} == {
        "name": SERVER_NAME,
        "version": SERVER_VERSION,
        "description": SERVER_DESCRIPTION,
    }
    assert [tool["name"] for tool in info["tools"]] == ["add", "echo", "fail", "big", "slow", "flood"]
    assert info["tools"][0] == {
        "name": "add",
        "description": "Add two integers.",
        "inputSchema": ADD_INPUT,
        "outputSchema": ADD_OUTPUT,
    }
    assert info["tools"][1]["inputSchema"] == TEXT_INPUT
    assert http.post(f"{srv.base_url}/mcp/server-info").status_code == 405


def test_gateway_calls_answer_with_the_tools_value(srv, http):
    assert gateway(http, srv.base_url, rpc("a-1", "add", {"a": 20, "b": 22})).json() == {
        "jsonrpc": "2.0",
        "id": "a-1",
        "result": {"sum": 42},
    }
    assert gateway(http, srv.base_url, rpc(2, "echo", {"text": "héllo"})).json() == {
        "jsonrpc": "2.0",
        "id": 2,
        "result": "héllo",
    }
    failed = gateway(http, srv.base_url, rpc(3, "fail", {})).json()
    assert failed == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {
            "code": -32000,
            "message": "the upstream is down",
            "data": {"content": [{"type": "text", "text": "the upstream is down"}]},
        },
    }


@pytest.mark.parametrize(
    ("arguments", "errors"),
    [
        ({"a": "x", "b": 1}, [{"field": "a", "message": '"x" is not of type "integer"'}]),
        ({"a": 1}, [{"field": "b", "message": '"b" is a required property'}]),
        (
            {},
            [
                {"field": "a", "message": '"a" is a required property'},
                {"field": "b", "message": '"b" is a required property'},
            ],
        ),
        (
            {"a": 1, "b": 2, "c": 3},
            [{"field": "", "message": 'Additional properties are not allowed ("c" was unexpected)'}],
        ),
    ],
)
def test_gateway_bad_arguments_are_32602_with_field_errors(srv, http, arguments, errors):
    response = gateway(http, srv.base_url, rpc(7, "add", arguments))
    assert response.status_code == 200
    assert response.json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32602, "message": 'Invalid arguments for tool "add"', "data": {"errors": errors}},
    }


def test_gateway_unknown_tool_and_malformed_requests(srv, http):
    assert gateway(http, srv.base_url, rpc(1, "tools/list")).json() == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32601, "message": "Unknown tool: tools/list"},
    }
    cases = [
        (b"{not json", 400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}),
        (
            dumps([rpc(1, "add", {"a": 1, "b": 2})]),
            400,
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32600, "message": "Invalid Request: one call per POST (no batches)"},
            },
        ),
        (
            dumps({"jsonrpc": "2.0", "method": "add", "params": {"a": 1, "b": 2}}),
            400,
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": -32600,
                    "message": 'Invalid Request: a call needs an "id" (notifications are not answered)',
                },
            },
        ),
        (
            dumps({"jsonrpc": "2.0", "id": 4, "method": "add", "params": [1, 2]}),
            400,
            {
                "jsonrpc": "2.0",
                "id": 4,
                "error": {"code": -32600, "message": 'Invalid Request: "params" must be an object'},
            },
        ),
    ]
    for body, status, answer in cases:
        response = gateway(http, srv.base_url, body)
        assert (response.status_code, response.json()) == (status, answer), body
    assert (
        http.post(
            f"{srv.base_url}/mcp/call", content=dumps(rpc(1, "add", {})), headers={"Content-Type": "text/plain"}
        ).status_code
        == 415
    )
    assert http.get(f"{srv.base_url}/mcp/call").status_code == 405
    assert gateway(http, srv.base_url, rpc(1, "echo", {"text": "x"}), Origin="https://evil.example").status_code == 403


def test_gateway_runs_the_tool_like_tools_call_does(srv, http):
    # The same result a 2026-07-28 tools/call gets, reduced to its value.
    body = modern_body(1, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 5}})
    mcp = http.post(srv.url, content=dumps(body), headers=modern_headers(body)).json()["result"]
    via_gateway = gateway(http, srv.base_url, rpc(1, "add", {"a": 2, "b": 5})).json()["result"]
    assert mcp["structuredContent"] == via_gateway == {"sum": 7}


# -------------------------------------------------------------------------------------- limits


def raw_exchange(port: int, request: bytes, *, read_timeout: float = 10.0) -> bytes:
    """Send raw bytes, return what comes back until the server closes (or ``read_timeout``)."""
    with socket.create_connection((HOST, port), timeout=read_timeout) as sock:
        sock.sendall(request)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            pass
        return received


def test_bodies_over_the_limit_are_413_on_every_path(http):
    with serve_app(MCPApp(build_server(), max_body_bytes=2048)) as served:
        large = dumps(rpc(1, "echo", {"text": "z" * 4000}))
        assert http.post(served.url, content=large, headers=legacy_headers(version=None)).status_code == 413
        assert gateway(http, served.base_url, large).status_code == 413
        with http.stream("GET", f"{served.base_url}/sse", headers={"Accept": "text/event-stream"}) as sse:
            lines = sse.iter_lines()
            assert next(lines) == "event: endpoint"
            endpoint = next(lines).removeprefix("data: ")
            assert http.post(served.base_url + endpoint, content=large, headers=JSON).status_code == 413
        small = dumps(rpc(1, "echo", {"text": "z" * 100}))
        assert gateway(http, served.base_url, small).json()["result"] == "z" * 100


def test_sessions_are_bounded_per_transport(http):
    with serve_app(MCPApp(build_server(), max_sessions=1)) as served:
        first = open_session(http, served.url)
        refused = http.post(served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None))
        assert refused.status_code == 503
        assert refused.json()["error"]["code"] == -32603
        assert http.delete(served.url, headers={"Mcp-Session-Id": first}).status_code == 204
        open_session(http, served.url)
        with http.stream("GET", f"{served.base_url}/sse", headers={"Accept": "text/event-stream"}) as sse:
            assert sse.status_code == 200
            assert http.get(f"{served.base_url}/sse", headers={"Accept": "text/event-stream"}).status_code == 503


def test_a_body_that_does_not_arrive_in_time_is_408(http):
    with serve_app(MCPApp(build_server(), body_timeout=0.5)) as served:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{served.port}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nX-Request-ID: slow-body\r\nContent-Length: 200\r\n\r\n"
        ).encode()
        started = time.monotonic()
        answer = raw_exchange(served.port, head + b'{"jsonrpc":')
        elapsed = time.monotonic() - started
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"x-request-id: slow-body" in answer
        assert b"Request Timeout: the body did not arrive in time" in answer
        assert 0.4 < elapsed < 8
        # A body sent in pieces, in time, is served.
        body = dumps(initialize_body())
        with socket.create_connection((HOST, served.port), timeout=10) as sock:
            sock.sendall(head.replace(b"Content-Length: 200", f"Content-Length: {len(body)}".encode()) + body[:10])
            time.sleep(0.1)
            sock.sendall(body[10:])
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")


def test_a_slow_body_is_408_at_the_gateway_too(http):
    """The body's deadline cancels whatever request is waiting for it, whichever endpoint reads."""
    with serve_app(MCPApp(build_server(), body_timeout=0.3)) as served:
        head = (
            f"POST /mcp/call HTTP/1.1\r\nHost: {HOST}:{served.port}\r\nContent-Type: application/json\r\n"
            "Content-Length: 200\r\n\r\n"
        ).encode()
        answer = raw_exchange(served.port, head + b'{"jsonrpc":')
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert http.get(f"{served.base_url}/health").status_code == 200


def test_a_client_that_stops_reading_is_dropped_and_its_call_cancelled(http, probe):
    with serve_app(MCPApp(build_server(probe), write_timeout=0.5)) as served:
        body = dumps(modern_body(1, "tools/call", {"name": "flood", "arguments": {}}, meta={"progressToken": "f"}))
        headers = modern_headers(json.loads(body))
        request = (
            f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{served.port}\r\nContent-Length: {len(body)}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in headers.items())
            + "\r\n"
        ).encode() + body
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.settimeout(10)
            sock.connect((HOST, served.port))
            sock.sendall(request)
            # Never read: the server's buffers fill, its write waits, and it gives up.
            assert probe.flood_cancelled.wait(20), f"still flooding after {probe.flood_sent} messages"
        found = metrics(http, served.base_url)
        assert found.value("mcp_call_total", method="tools/call", tool="flood", outcome="cancelled") == 1
        assert found.value("mcp_active_streams", transport="streamable_http") == 0
        assert http.get(f"{served.base_url}/health").status_code == 200


def test_outgoing_messages_over_the_limit_become_errors(http):
    with serve_app(MCPApp(build_server(), max_message_bytes=4096)) as served:
        session = open_session(http, served.url)
        too_big = call(http, served.url, session, 1, "big", {"size": 10_000})
        assert too_big == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": -32603, "message": "Response exceeds the 4096-byte message limit"},
        }
        assert call(http, served.url, session, 2, "big", {"size": 1000})["result"]["content"][0]["text"] == "x" * 1000
        modern = modern_body(3, "tools/call", {"name": "big", "arguments": {"size": 10_000}})
        answer = http.post(served.url, content=dumps(modern), headers=modern_headers(modern))
        assert answer.status_code == 200
        assert answer.json()["error"] == {"code": -32603, "message": "Response exceeds the 4096-byte message limit"}


def test_the_replay_buffer_is_bounded_in_bytes_too():
    buffer = EventBuffer(limit=100, max_bytes=1000)
    for _ in range(10):
        buffer.push(b"a" * 300)
    assert [seq for seq, _ in buffer.history] == [8, 9, 10]
    assert buffer.size == 900
    buffer.push(b"b" * 5000)  # larger than the budget: the newest event always stays
    assert [seq for seq, _ in buffer.history] == [11]
    assert buffer.size == 5000
    counted = EventBuffer(limit=2, max_bytes=10_000)
    for _ in range(5):
        counted.push(b"c" * 100)
    assert counted.size == 200 and [seq for seq, _ in counted.history] == [4, 5]


def test_the_limits_are_options_of_the_shared_command_line():
    sse = {"Accept": "text/event-stream"}
    with server_process("--max-body-bytes", "1000", "--max-sessions", "1", "--max-connections", "2") as served:
        with client() as http:
            large = dumps(rpc(1, "test_simple_text", {"padding": "p" * 1000}))
            assert http.post(served.url, content=large, headers=legacy_headers(version=None)).status_code == 413
            session = open_session(http, served.url)
            assert (
                http.post(
                    served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None)
                ).status_code
                == 503
            )
            assert http.delete(served.url, headers={"Mcp-Session-Id": session}).status_code == 204
        with client() as first, client() as second, client() as third:
            with first.stream("GET", f"{served.base_url}/sse", headers=sse) as one:
                assert one.status_code == 200
                # The one SSE session there may be is taken; this peer holds one slot, its cap
                # (half of two), and it is serving: the next connection gets the busy answer.
                with second.stream("GET", f"{served.base_url}/sse", headers=sse) as two:
                    assert two.status_code == 503
                    assert third.get(f"{served.base_url}/health").status_code == 200  # still answered
                    assert (
                        third.post(
                            served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None)
                        ).status_code
                        == 503
                    )
            wait_until(
                lambda: (
                    third.post(
                        served.url, content=dumps(initialize_body()), headers=legacy_headers(version=None)
                    ).status_code
                    == 200
                ),
                message="a connection freed",
            )
