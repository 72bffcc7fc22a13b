"""The stdio wire of a real feature-server subprocess, byte for byte.

Raw lines go in, lines come out (read on a thread, every wait bounded); every stdout line must be
one compact JSON-RPC message. Each test kills its server at the end, whatever happens.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest

from .wire import PARSE_ERROR_LINE, WireServer, dumps, initialize_request, parse_protocol_line

SMALL_LIMIT = 1024  # small enough that tools/list does not fit; initialize still does

NOT_INITIALIZED = "Invalid Request: the session is not initialized; send initialize first"
NO_BATCHES = "Invalid Request: batches are not supported in this protocol revision"


@pytest.fixture
def start(feature_server_command) -> Iterator[Callable[..., WireServer]]:
    servers: list[WireServer] = []

    def start(*args: str) -> WireServer:
        server = WireServer([*feature_server_command, *args])
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.kill()


@pytest.fixture
def server(start) -> WireServer:
    """A feature server, initialized at 2025-11-25."""
    server = start()
    server.initialize()
    return server


def error(request_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def text_result(request_id, text: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "result": {"content": [{"type": "text", "text": text}]}}


# --------------------------------------------------------------------------------------- lifecycle


def test_stdio_ping_before_initialize(start):
    server = start()
    server.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    assert server.read_line() == b'{"jsonrpc":"2.0","id":1,"result":{}}'


@pytest.mark.parametrize("method", ["tools/list", "tools/call", "resources/read", "nope/unknown"])
def test_stdio_requests_before_initialize_are_invalid(start, method):
    server = start()
    server.request(3, method, {})
    assert server.read() == error(3, -32600, NOT_INITIALIZED)
    server.ping()  # and the server still talks


def test_stdio_initialize_result_and_then_features_work(start):
    server = start()
    server.send(initialize_request(0, "2025-06-18"))
    result = server.read_response(0)["result"]
    assert result["protocolVersion"] == "2025-06-18"
    assert result["serverInfo"]["name"] == "feature-server"
    server.notify("notifications/initialized")
    server.call_tool(1, "echo", {"text": "hi"})
    assert server.read() == text_result(1, "hi")


def test_stdio_second_initialize_is_invalid(server):
    server.send(initialize_request(5))
    assert server.read() == error(5, -32600, "Invalid Request: the session is already initialized")
    server.ping()


def test_stdio_unknown_method_after_initialize(server):
    server.request("u", "foo/bar", {})
    assert server.read() == error("u", -32601, "Method not found: foo/bar")


def test_stdio_unknown_notification_is_not_answered(server):
    server.notify("notifications/whatever", {"x": 1})
    server.ping()


# --------------------------------------------------------------------------------------- parse errors


@pytest.mark.parametrize(
    "line",
    [
        b"{",
        b"hello",
        b"\xff\xfe\xfd",
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xc3\x28"}}',  # invalid UTF-8 inside a string
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}',
        b"[" * 50_000 + b"]" * 50_000,
        b'{"a":' * 50_000 + b"0" + b"}" * 50_000,
    ],
    ids=[
        "brace",
        "word",
        "not-utf8",
        "bad-utf8-in-string",
        "nan",
        "inf",
        "neg-inf",
        "two-values",
        "deep-array",
        "deep-object",
    ],
)
def test_stdio_invalid_json_gets_parse_error_and_server_continues(server, line):
    server.send_raw(line + b"\n")
    assert server.read_line() == PARSE_ERROR_LINE
    server.ping()


def test_stdio_blank_lines_are_ignored(server):
    server.send_raw(b"\n\n   \n\t\r\n\r\n")
    server.ping()  # the very next line is the ping's answer


def test_stdio_crlf_terminated_lines_are_served(server):
    server.send_raw(b'{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
    assert server.read_line() == b'{"jsonrpc":"2.0","id":"crlf","result":{}}'


def test_stdio_message_split_across_writes_is_one_message(server):
    line = b'{"jsonrpc":"2.0","id":"split","method":"ping"}\n'
    for index in range(0, len(line), 7):
        server.send_raw(line[index : index + 7])
        time.sleep(0.01)
    assert server.read_line() == b'{"jsonrpc":"2.0","id":"split","result":{}}'


def test_stdio_many_messages_in_one_write_all_answered(server):
    server.send_raw(b"".join(dumps({"jsonrpc": "2.0", "id": index, "method": "ping"}) + b"\n" for index in range(200)))
    responses = server.read_responses(200)
    assert sorted(responses) == list(range(200))
    assert all(response["result"] == {} for response in responses.values())


# ---------------------------------------------------------------------------------- invalid requests


@pytest.mark.parametrize(
    "message, expected_id, reason",
    [
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, 1, 'the "jsonrpc" member must be "2.0"'),
        ({"id": 2, "method": "ping"}, 2, 'the "jsonrpc" member must be "2.0"'),
        ({"jsonrpc": 2.0, "id": "v", "method": "ping"}, "v", 'the "jsonrpc" member must be "2.0"'),
        ({"jsonrpc": "2.0", "id": 3, "method": 42}, 3, '"method" must be a string'),
        ({"jsonrpc": "2.0", "id": 4, "method": None}, 4, '"method" must be a string'),
        ({"jsonrpc": "2.0", "id": 5, "method": "ping", "params": [1]}, 5, '"params" must be an object'),
        ({"jsonrpc": "2.0", "id": 6, "method": "ping", "params": "x"}, 6, '"params" must be an object'),
        ({"jsonrpc": "2.0", "id": 7, "method": "ping", "params": None}, 7, '"params" must be an object'),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, None, '"id" must be a string or an integer'),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, None, '"id" must be a string or an integer'),
        ({"jsonrpc": "2.0", "id": 1.0, "method": "ping"}, None, '"id" must be a string or an integer'),
        ({"jsonrpc": "2.0", "id": True, "method": "ping"}, None, '"id" must be a string or an integer'),
        ({"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}, None, '"id" must be a string or an integer'),
        ({"jsonrpc": "2.0", "id": [1], "method": "ping"}, None, '"id" must be a string or an integer'),
        (
            {"jsonrpc": "2.0", "id": 8, "method": "ping", "result": {}},
            8,
            "a message cannot carry both a method and a result or error",
        ),
        (
            {"jsonrpc": "2.0", "id": 9, "result": {}, "error": {"code": 1, "message": "m"}},
            9,
            'a response needs exactly one of "result" and "error"',
        ),
        ({"jsonrpc": "2.0", "id": 10}, 10, 'a response needs exactly one of "result" and "error"'),
        ({"jsonrpc": "2.0"}, None, 'a message needs a "method" or an "id"'),
        (
            {"jsonrpc": "2.0", "id": 11, "error": "boom"},
            11,
            '"error" must be an object with an integer "code" and a string "message"',
        ),
        (17, None, "not an object"),
        ("ping", None, "not an object"),
        (None, None, "not an object"),
    ],
)
def test_stdio_invalid_request_gets_invalid_request_error(server, message, expected_id, reason):
    server.send(message)
    assert server.read() == error(expected_id, -32600, f"Invalid Request: {reason}")
    server.ping()


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1, 2]},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": None},
        {"jsonrpc": "2.0", "method": 5},
        {"jsonrpc": "2.0", "method": "notifications/x", "result": {}},
        {"jsonrpc": "1.0", "method": "notifications/initialized"},
        {"method": "notifications/initialized"},
    ],
)
def test_stdio_malformed_notification_is_never_answered(server, message):
    server.send(message)
    server.ping()  # the next line out is the ping's answer: nothing was said about the notification


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": [1]}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 12345, "reason": "gone"}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {"a": 1}, "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [], "progress": 1}},
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t", "progress": "x"}},
    ],
    ids=[
        "cancel-object-id",
        "cancel-array-id",
        "cancel-unknown-id",
        "cancel-no-id",
        "progress-object-token",
        "progress-array-token",
        "progress-bad-value",
    ],
)
def test_stdio_notification_with_odd_params_is_ignored_and_server_keeps_serving(server, message):
    server.send(message)
    server.ping()
    assert server.process.poll() is None


def test_stdio_cancel_with_bool_request_id_does_not_cancel_integer_id(server):
    # true is not a request id; it must not be taken for the request whose id is 1.
    server.call_tool(1, "sleep", {"seconds": 0.3})
    server.notify("notifications/cancelled", {"requestId": True})
    assert server.read(timeout=3) == text_result(1, "slept")


def test_stdio_cancel_with_float_request_id_does_not_cancel_integer_id(server):
    server.call_tool(1, "sleep", {"seconds": 0.3})
    server.notify("notifications/cancelled", {"requestId": 1.0})
    assert server.read(timeout=3) == text_result(1, "slept")


def test_stdio_cancel_with_string_id_does_not_cancel_integer_id(server):
    server.call_tool(1, "sleep", {"seconds": 0.3})
    server.notify("notifications/cancelled", {"requestId": "1"})
    assert server.read(timeout=3) == text_result(1, "slept")


def test_stdio_response_with_unknown_id_is_ignored(server):
    server.send({"jsonrpc": "2.0", "id": 999, "result": {}})
    server.send({"jsonrpc": "2.0", "id": "nobody", "error": {"code": -1, "message": "m"}})
    server.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
    server.ping()


def test_stdio_duplicate_in_flight_id_is_rejected(server):
    server.call_tool(5, "sleep", {"seconds": 0.3})
    time.sleep(0.05)
    server.request(5, "ping")
    assert server.read(timeout=3) == error(5, -32600, "Invalid Request: id already in use")
    assert server.read(timeout=3) == text_result(5, "slept")


# ---------------------------------------------------------------------------------------- ids/unicode


@pytest.mark.parametrize(
    "request_id",
    [2**64 + 1, 10**40, -(2**63) - 1, -7, 0, "", "ünï☃🎉", "1", " spaced id ", 'a"b\\c'],
)
def test_stdio_odd_ids_are_echoed_exactly(server, request_id):
    server.request(request_id, "ping")
    line = server.read_line()
    assert line == b'{"jsonrpc":"2.0","id":' + dumps(request_id) + b',"result":{}}'
    response = json.loads(line)
    assert response["id"] == request_id and type(response["id"]) is type(request_id)


def test_stdio_odd_id_is_echoed_on_errors_too(server):
    server.request(10**30, "no/such", {})
    assert server.read_line() == (
        b'{"jsonrpc":"2.0","id":1000000000000000000000000000000,'
        b'"error":{"code":-32601,"message":"Method not found: no/such"}}'
    )


def test_stdio_unicode_round_trips_as_utf8(server):
    text = "héllo ✓ 🎉 中文 \u2028 end"
    server.send_raw(
        '{"jsonrpc":"2.0","id":"ü","method":"tools/call","params":{"name":"echo","arguments":{"text":"'.encode()
        + text.encode("utf-8")
        + b'"}}}\n'
    )
    line = server.read_line()
    assert line == ('{"jsonrpc":"2.0","id":"ü","result":{"content":[{"type":"text","text":"' + text + '"}]}}').encode()
    assert b"\\u" not in line


def test_stdio_escaped_unicode_input_is_answered_as_utf8(server):
    server.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"\\u00e9\\ud83c\\udf89"}}}\n'
    )
    assert server.read_line() == '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"é🎉"}]}}'.encode()


def test_stdio_newlines_in_text_are_escaped_on_one_line(server):
    server.call_tool(1, "echo", {"text": "line1\nline2\r\nline3"})
    line = server.read_line()
    assert json.loads(line) == text_result(1, "line1\nline2\r\nline3")
    assert b"\r" not in line


def test_stdio_lone_surrogate_in_arguments_is_invalid_params_on_a_valid_utf8_line(server):
    # A lone surrogate is not text: no tool could encode it (issue 15). The answer says so, and
    # the line stays valid UTF-8.
    server.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\ud800b"}}}\n'
    )
    line = server.read_line()
    line.decode("utf-8")
    assert json.loads(line)["error"]["code"] == -32602


# -------------------------------------------------------------------------------------------- batches


def test_stdio_batch_accepted_with_2025_03_26(start):
    server = start()
    server.initialize("2025-03-26")
    server.send(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            {"jsonrpc": "2.0", "method": "notifications/whatever"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "b"}}},
            {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
            {"jsonrpc": "2.0", "id": 4, "method": "ping", "params": []},
            {"jsonrpc": "2.0", "method": "notifications/x", "params": []},
            {"jsonrpc": "2.0", "id": 77, "result": {}},
        ]
    )
    line = server.read_line()
    batch = json.loads(line)
    assert isinstance(batch, list)
    for item in batch:
        parse_protocol_line(dumps(item))
    assert sorted(batch, key=lambda item: item["id"]) == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        text_result(2, "b"),
        error(3, -32601, "Method not found: no/such"),
        error(4, -32600, 'Invalid Request: "params" must be an object'),
    ]
    server.ping()


def test_stdio_batch_of_only_notifications_gets_no_reply(start):
    server = start()
    server.initialize("2025-03-26")
    server.send([{"jsonrpc": "2.0", "method": "notifications/a"}, {"jsonrpc": "2.0", "method": "notifications/b"}])
    server.ping()


def test_stdio_batch_with_a_slow_member_waits_for_it(start):
    server = start()
    server.initialize("2025-03-26")
    server.send(
        [
            {
                "jsonrpc": "2.0",
                "id": "slow",
                "method": "tools/call",
                "params": {"name": "sleep", "arguments": {"seconds": 0.2}},
            },
            {"jsonrpc": "2.0", "id": "fast", "method": "ping"},
        ]
    )
    batch = json.loads(server.read_line(timeout=3))
    assert {item["id"] for item in batch} == {"slow", "fast"}


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25"])
def test_stdio_batch_rejected_with_other_versions(start, version):
    server = start()
    server.initialize(version)
    server.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}, {"jsonrpc": "2.0", "id": 2, "method": "ping"}])
    assert server.read() == error(None, -32600, NO_BATCHES)
    server.ping()


def test_stdio_batch_rejected_before_initialize(start):
    server = start()
    server.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    assert server.read() == error(None, -32600, NO_BATCHES)


@pytest.mark.parametrize("version", ["2025-03-26", "2025-11-25"])
def test_stdio_empty_batch_is_invalid(start, version):
    server = start()
    server.initialize(version)
    server.send_raw(b"[]\n")
    assert server.read() == error(None, -32600, "Invalid Request: empty batch")
    server.ping()


# ----------------------------------------------------------------------------------------- size limits


def test_stdio_oversized_line_is_rejected_and_next_line_served(start):
    server = start("--max-message-bytes", str(SMALL_LIMIT))
    server.initialize()
    big = dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * 2000}},
        }
    )
    server.send_raw(big + b"\n" + b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
    assert server.read() == error(None, -32600, f"Invalid Request: message exceeds {SMALL_LIMIT} bytes")
    assert server.read() == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_stdio_oversized_line_written_in_pieces_is_one_error(start):
    server = start("--max-message-bytes", str(SMALL_LIMIT))
    server.initialize()
    for _ in range(20):
        server.send_raw(b"y" * 500)
        time.sleep(0.005)
    server.send_raw(b"\n")
    assert server.read() == error(None, -32600, f"Invalid Request: message exceeds {SMALL_LIMIT} bytes")
    server.ping()  # nothing else was said about that line


def test_stdio_very_large_line_with_default_limit_is_rejected(start):
    server = start()
    server.initialize()
    server.send_raw(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * (4 * 1024 * 1024 + 10) + b'"}}\n'
    )
    assert server.read(timeout=10) == error(None, -32600, f"Invalid Request: message exceeds {4 * 1024 * 1024} bytes")
    server.ping()


def test_stdio_line_just_under_the_limit_is_served(start):
    server = start("--max-message-bytes", str(SMALL_LIMIT))
    server.initialize()
    head = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
    tail = b'"}}'
    server.send_raw(head + b"a" * (SMALL_LIMIT - len(head) - len(tail)) + tail + b"\n")
    assert server.read() == {"jsonrpc": "2.0", "id": 1, "result": {}}


def test_stdio_oversized_response_becomes_internal_error(start):
    server = start("--max-message-bytes", str(SMALL_LIMIT))
    server.initialize()
    server.request(1, "tools/list")  # the tool list is several KB
    assert server.read() == error(1, -32603, f"Response exceeds the {SMALL_LIMIT}-byte message limit")
    server.call_tool(2, "echo", {"text": "small"})
    assert server.read() == text_result(2, "small")


def test_stdio_request_whose_answer_would_outgrow_the_limit_through_a_lone_surrogate_is_refused(start):
    # The request fits; echoed, its lone surrogate would force ASCII escapes on the whole answer
    # and make it too large. A lone surrogate is not text: the request is refused with -32602
    # (issue 15) before any answer is built.
    server = start("--max-message-bytes", str(SMALL_LIMIT))
    server.initialize()
    text = "é" * 300
    server.send_raw(
        b'{"jsonrpc":"2.0","id":"e","method":"tools/call","params":{"name":"echo","arguments":{"text":"'
        + text.encode("utf-8")
        + b'\\ud800"}}}\n'
    )
    assert server.read()["error"]["code"] == -32602
    server.ping()


# ------------------------------------------------------------------------------------- stdout hygiene


def test_stdio_stdout_carries_only_protocol_messages_while_things_fail(start):
    server = start()
    server.initialize()
    server.request(1, "logging/setLevel", {"level": "debug"})
    server.call_tool(2, "log")
    server.call_tool(3, "crash")
    server.call_tool(4, "fail")
    server.call_tool(5, "broken_output")
    server.request(6, "tools/call", {"name": "progress", "arguments": {"steps": 3}, "_meta": {"progressToken": "p"}})
    server.call_tool(7, "no_such_tool")
    server.call_tool(8, "echo", {"text": ""})
    server.request(9, "resources/read", {"uri": "test://nothing"})
    server.request(10, "prompts/get", {"name": "nope"})
    server.send_raw(b"garbage\n[1,2]\n{}\n")
    server.call_tool(11, "mixed")
    responses: dict = {}
    null_id_errors = []
    deadline = time.monotonic() + 5
    while len(responses) < 11 or len(null_id_errors) < 3:
        message = server.read(timeout=max(0.0, deadline - time.monotonic()))
        if "id" not in message:
            continue  # a notification
        if message["id"] is None:
            null_id_errors.append(message["error"]["code"])
        else:
            assert message["id"] not in responses
            responses[message["id"]] = message
    assert sorted(null_id_errors) == [-32700, -32600, -32600]
    server.close_stdin()
    rest = server.read_until_eof(timeout=5)
    assert server.wait(timeout=5) == 0

    raw = bytes(server.stdout_raw)
    assert raw.endswith(b"\n")
    lines = raw[:-1].split(b"\n")
    for line in lines:
        message = parse_protocol_line(line)
        assert line == dumps(message), "not compact"
    assert b"id_rsa" not in raw and b"secret" not in raw and b"Traceback" not in raw
    assert responses[3] == error(3, -32603, "Internal error")
    assert responses[4]["result"]["isError"] is True
    assert responses[5] == error(5, -32603, "Internal error")
    assert responses[7]["error"]["code"] == -32602
    assert responses[8]["result"]["isError"] is True
    assert responses[9]["error"]["code"] == -32002
    assert rest == []
    notifications = [json.loads(line) for line in lines if b'"method"' in line and b'"id"' not in line]
    assert any(n["method"] == "notifications/message" for n in notifications)
    assert [n["params"]["progress"] for n in notifications if n["method"] == "notifications/progress"] == [1, 2, 3]


def test_stdio_crash_secret_goes_to_stderr_not_stdout(server):
    server.call_tool("c", "crash")
    assert server.read() == error("c", -32603, "Internal error")
    server.close_stdin()
    assert server.read_until_eof() == []
    assert server.wait() == 0
    assert b"id_rsa" not in bytes(server.stdout_raw)


# ---------------------------------------------------------------------------------------- concurrency


def test_stdio_slow_call_does_not_hold_up_others(server):
    server.call_tool("slow", "sleep", {"seconds": 1.5})
    server.request("p", "ping")
    server.call_tool("e", "echo", {"text": "quick"})
    # The next two lines out are these answers (read_responses fails on the sleep's id), in time.
    first_two = server.read_responses(2, timeout=1.4)
    assert first_two == {"p": {"jsonrpc": "2.0", "id": "p", "result": {}}, "e": text_result("e", "quick")}
    assert server.read(timeout=3) == text_result("slow", "slept")


def test_stdio_responses_arrive_out_of_order(server):
    server.call_tool(1, "sleep", {"seconds": 0.4})
    server.call_tool(2, "sleep", {"seconds": 0.1})
    assert server.read(timeout=3)["id"] == 2
    assert server.read(timeout=3)["id"] == 1


def test_stdio_cancelled_call_is_never_answered(server):
    server.call_tool("s", "sleep", {"seconds": 0.5})
    time.sleep(0.05)
    server.notify("notifications/cancelled", {"requestId": "s", "reason": "user"})
    server.ping("p1")
    server.expect_silence(0.8)  # well past the sleep: no answer for "s"
    server.ping("p2")


def test_stdio_cancel_only_hits_its_own_request(server):
    server.call_tool(1, "sleep", {"seconds": 0.3})
    server.call_tool(2, "sleep", {"seconds": 0.3})
    server.notify("notifications/cancelled", {"requestId": 1})
    assert server.read(timeout=3) == text_result(2, "slept")
    server.expect_silence(0.3)


def test_stdio_cancel_after_answer_is_ignored(server):
    server.call_tool(1, "echo", {"text": "x"})
    assert server.read() == text_result(1, "x")
    server.notify("notifications/cancelled", {"requestId": 1})
    server.ping()


# ------------------------------------------------------------------------------------------- shutdown


def test_stdio_eof_while_idle_exits_zero(server):
    started = time.monotonic()
    server.close_stdin()
    assert server.read_until_eof(timeout=3) == []
    assert server.wait(timeout=3) == 0
    assert time.monotonic() - started < 1.5


def test_stdio_eof_before_initialize_exits_zero(start):
    server = start()
    server.close_stdin()
    assert server.read_until_eof(timeout=5) == []
    assert server.wait(timeout=3) == 0


def test_stdio_eof_with_requests_in_flight_writes_them_then_exits_zero(server):
    server.call_tool(1, "sleep", {"seconds": 0.3})
    server.call_tool(2, "sleep", {"seconds": 0.2})
    server.request(3, "ping")
    server.close_stdin()
    lines = server.read_until_eof(timeout=4)
    assert {json.loads(line)["id"] for line in lines} == {1, 2, 3}
    assert [json.loads(line) for line in lines if json.loads(line)["id"] == 1] == [text_result(1, "slept")]
    assert server.wait(timeout=3) == 0


def test_stdio_eof_right_after_a_burst_loses_nothing(server):
    server.send_raw(b"".join(dumps({"jsonrpc": "2.0", "id": index, "method": "ping"}) + b"\n" for index in range(100)))
    server.close_stdin()
    lines = server.read_until_eof(timeout=5)
    assert sorted(json.loads(line)["id"] for line in lines) == list(range(100))
    assert server.wait(timeout=3) == 0


def test_stdio_eof_last_line_without_newline_is_served(server):
    server.send_raw(b'{"jsonrpc":"2.0","id":"tail","method":"ping"}')
    server.close_stdin()
    assert server.read_until_eof(timeout=3) == [b'{"jsonrpc":"2.0","id":"tail","result":{}}']
    assert server.wait(timeout=3) == 0


def test_stdio_eof_with_long_call_exits_after_bounded_grace(start):
    server = start("--shutdown-grace", "0.3")
    server.initialize()
    server.call_tool(1, "sleep", {"seconds": 30})
    server.request(2, "ping")
    assert server.read() == {"jsonrpc": "2.0", "id": 2, "result": {}}
    started = time.monotonic()
    server.close_stdin()
    assert server.read_until_eof(timeout=3) == []  # the long call is abandoned unanswered
    assert server.wait(timeout=3) == 0
    assert time.monotonic() - started < 2.0


def test_stdio_sigterm_while_idle_exits_zero(server):
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    assert server.wait(timeout=3) == 0
    assert server.read_until_eof(timeout=1) == []
    assert time.monotonic() - started < 1.5


def test_stdio_sigint_while_idle_exits_zero(server):
    server.process.send_signal(signal.SIGINT)
    assert server.wait(timeout=3) == 0
    assert server.read_until_eof(timeout=1) == []


def test_stdio_sigterm_with_short_call_writes_it_then_exits_zero(server):
    server.call_tool(1, "sleep", {"seconds": 0.3})
    time.sleep(0.05)
    server.process.send_signal(signal.SIGTERM)
    assert server.read_until_eof(timeout=4) == [dumps(text_result(1, "slept"))]
    assert server.wait(timeout=3) == 0


def test_stdio_sigterm_with_long_call_exits_zero_within_default_grace(server):
    server.call_tool(1, "sleep", {"seconds": 30})
    server.ping()
    started = time.monotonic()
    server.process.send_signal(signal.SIGTERM)
    assert server.wait(timeout=5) == 0
    elapsed = time.monotonic() - started
    assert elapsed < 3.5  # default grace is 2 s
    assert server.read_until_eof(timeout=1) == []


def test_stdio_client_closing_stdout_does_not_hang_the_server(feature_server_command):
    process = subprocess.Popen(
        feature_server_command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        process.stdout.close()  # nobody will read what the server writes
        process.stdin.write(dumps(initialize_request(0)) + b"\n")
        process.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
        process.stdin.flush()
        time.sleep(0.3)
        process.stdin.close()
        assert process.wait(timeout=4) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=5)
