"""Unit tests of the JSON-RPC layer: decode, classify, encode (pure, no I/O)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from plainmcp.jsonrpc import (
    Batch,
    ErrorResponse,
    Invalid,
    Notification,
    Request,
    Response,
    classify,
    decode,
    encode,
    error_response,
)

PARSE_ERROR = {"code": -32700, "message": "Parse error"}


def invalid_request(request_id, reason: str) -> Invalid:
    return Invalid(ErrorResponse(request_id, {"code": -32600, "message": f"Invalid Request: {reason}"}), reason)


# ------------------------------------------------------------------------------------ decode: valid


def test_decode_request_with_params():
    assert decode(b'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"x"}}') == Request(
        7, "tools/list", {"cursor": "x"}
    )


def test_decode_request_without_params_has_none():
    assert decode('{"jsonrpc":"2.0","id":"a","method":"ping"}') == Request("a", "ping", None)


def test_decode_accepts_str_and_bytes_alike():
    text = '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"é":"✓"}}'
    assert decode(text) == decode(text.encode("utf-8")) == Request(1, "ping", {"é": "✓"})


def test_decode_request_with_empty_params_keeps_them():
    assert decode('{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}') == Request(1, "ping", {})


def test_decode_notification():
    assert decode('{"jsonrpc":"2.0","method":"notifications/initialized"}') == Notification(
        "notifications/initialized", None
    )


def test_decode_notification_with_params():
    assert decode('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}') == Notification(
        "notifications/cancelled", {"requestId": 3}
    )


def test_decode_response_result_of_any_json_value():
    assert decode('{"jsonrpc":"2.0","id":4,"result":{"roots":[]}}') == Response(4, {"roots": []})
    assert decode('{"jsonrpc":"2.0","id":"s","result":{}}') == Response("s", {})


def test_decode_error_response():
    decoded = decode('{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"nope","data":[1]}}')
    assert decoded == ErrorResponse(5, {"code": -32601, "message": "nope", "data": [1]})
    assert decoded.code == -32601


def test_decode_error_response_with_null_id():
    assert decode('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}') == ErrorResponse(
        None, PARSE_ERROR
    )


def test_decode_surrounding_whitespace_is_fine():
    assert decode(b'  \t{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n') == Request(1, "ping")


@pytest.mark.parametrize(
    "raw_id, expected",
    [
        ("0", 0),
        ("-1", -1),
        ("18446744073709551617", 2**64 + 1),
        ("-" + "9" * 40, -int("9" * 40)),
        ('""', ""),
        ('"ünï☃🎉"', "ünï☃🎉"),
        ('"\\u00e9"', "é"),
        ('"1"', "1"),
    ],
)
def test_decode_odd_ids_are_kept_exactly(raw_id, expected):
    decoded = decode(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}')
    assert decoded == Request(expected, "ping")
    assert type(decoded.id) is type(expected)


# ------------------------------------------------------------------------------- decode: not JSON


@pytest.mark.parametrize(
    "data",
    [
        b"{",
        b"not json",
        b'{"jsonrpc":"2.0","id":1,"method":"ping"',
        b'{"jsonrpc":"2.0","id":1,"method":"ping"} {}',  # two values on one line
        b"\xff\xfe\xfd",  # not UTF-8
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"\xc3"}}',  # truncated UTF-8 sequence
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":NaN}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":Infinity}}',
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":-Infinity}}',
        b"NaN",
        b'{"a":"tab\tinside"}',  # raw control character in a string
        b"\xef\xbb\xbf{}",  # UTF-8 byte order mark
        b"[" * 100_000 + b"]" * 100_000,  # deeper than the recursion limit
        b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
        b"",
        b"   ",
    ],
)
def test_decode_invalid_json_is_parse_error_with_null_id(data):
    decoded = decode(data)
    assert isinstance(decoded, Invalid)
    assert decoded.reply == ErrorResponse(None, PARSE_ERROR)
    assert encode(decoded.reply) == b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'


# ------------------------------------------------------------------------- decode: invalid request


@pytest.mark.parametrize("value", ["1", '"ping"', "null", "true", "3.5"])
def test_decode_non_object_is_invalid_request_with_null_id(value):
    assert decode(value) == invalid_request(None, "not an object")


@pytest.mark.parametrize("version", ['"1.0"', "2.0", "null", '"2.0 "', "2"])
def test_decode_wrong_jsonrpc_version_keeps_request_id(version):
    assert decode(f'{{"jsonrpc":{version},"id":9,"method":"ping"}}') == invalid_request(
        9, 'the "jsonrpc" member must be "2.0"'
    )


def test_decode_missing_jsonrpc_member_is_invalid_request():
    assert decode('{"id":"x","method":"ping"}') == invalid_request("x", 'the "jsonrpc" member must be "2.0"')


def test_decode_wrong_jsonrpc_on_response_is_invalid_request():
    assert decode('{"jsonrpc":"1.0","id":3,"result":{}}') == invalid_request(3, 'the "jsonrpc" member must be "2.0"')


@pytest.mark.parametrize("method", ["1", "null", "[]", "{}", "true"])
def test_decode_non_string_method_is_invalid_request(method):
    assert decode(f'{{"jsonrpc":"2.0","id":2,"method":{method}}}') == invalid_request(2, '"method" must be a string')


@pytest.mark.parametrize("params", ["[]", "[1,2]", '"x"', "null", "1", "true"])
def test_decode_non_object_params_is_invalid_request(params):
    assert decode(f'{{"jsonrpc":"2.0","id":"p","method":"ping","params":{params}}}') == invalid_request(
        "p", '"params" must be an object'
    )


@pytest.mark.parametrize("raw_id", ["null", "1.0", "1.5", "1e3", "true", "false", "{}", "[1]"])
def test_decode_request_id_of_wrong_type_is_invalid_request_with_null_id(raw_id):
    assert decode(f'{{"jsonrpc":"2.0","id":{raw_id},"method":"ping"}}') == invalid_request(
        None, '"id" must be a string or an integer'
    )


@pytest.mark.parametrize("member", ['"result":{}', '"error":{"code":1,"message":"m"}'])
def test_decode_method_with_result_or_error_is_invalid_request(member):
    assert decode(f'{{"jsonrpc":"2.0","id":1,"method":"ping",{member}}}') == invalid_request(
        1, "a message cannot carry both a method and a result or error"
    )


def test_decode_invalid_request_reply_uses_the_readable_id_even_when_other_members_are_wrong():
    # The id is fine but params is wrong: the error carries the id so the client can match it.
    decoded = decode('{"jsonrpc":"2.0","id":"ünï☃","method":"x","params":[]}')
    assert decoded.reply.id == "ünï☃"


def test_decode_invalid_request_reply_drops_a_bool_id():
    # true is not an id (and must not be mistaken for 1).
    assert decode('{"jsonrpc":"2.0","id":true,"method":"x","params":[]}') == invalid_request(
        None, '"params" must be an object'
    )


def test_decode_response_with_result_and_error_is_invalid_request():
    assert decode('{"jsonrpc":"2.0","id":4,"result":{},"error":{"code":1,"message":"m"}}') == invalid_request(
        4, 'a response needs exactly one of "result" and "error"'
    )


def test_decode_response_with_neither_result_nor_error_is_invalid_request():
    assert decode('{"jsonrpc":"2.0","id":4}') == invalid_request(
        4, 'a response needs exactly one of "result" and "error"'
    )


def test_decode_message_without_method_or_id_is_invalid_request():
    assert decode('{"jsonrpc":"2.0"}') == invalid_request(None, 'a message needs a "method" or an "id"')
    assert decode('{"jsonrpc":"2.0","result":{}}') == invalid_request(None, 'a message needs a "method" or an "id"')


@pytest.mark.parametrize("raw_id", ["null", "1.5", "true", "[]"])
def test_decode_result_response_id_must_be_string_or_integer(raw_id):
    assert decode(f'{{"jsonrpc":"2.0","id":{raw_id},"result":{{}}}}') == invalid_request(
        None, '"id" must be a string or an integer'
    )


@pytest.mark.parametrize(
    "error",
    [
        '"boom"',
        "null",
        "{}",
        '{"code":"1","message":"m"}',
        '{"code":true,"message":"m"}',
        '{"code":1.5,"message":"m"}',
        '{"code":1}',
        '{"code":1,"message":2}',
    ],
)
def test_decode_error_response_with_malformed_error_is_invalid_request(error):
    assert decode(f'{{"jsonrpc":"2.0","id":8,"error":{error}}}') == invalid_request(
        8, '"error" must be an object with an integer "code" and a string "message"'
    )


@pytest.mark.parametrize("raw_id", ["1.5", "false", "{}"])
def test_decode_error_response_id_must_be_string_integer_or_null(raw_id):
    assert decode(f'{{"jsonrpc":"2.0","id":{raw_id},"error":{{"code":1,"message":"m"}}}}') == invalid_request(
        None, '"id" must be a string, an integer or null'
    )


# ------------------------------------------------------------------ decode: notifications are silent


@pytest.mark.parametrize(
    "line",
    [
        '{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}',
        '{"jsonrpc":"2.0","method":"notifications/x","params":"s"}',
        '{"jsonrpc":"2.0","method":"notifications/x","params":null}',
        '{"jsonrpc":"2.0","method":7}',
        '{"jsonrpc":"2.0","method":"notifications/x","result":{}}',
        '{"jsonrpc":"1.0","method":"notifications/x"}',
        '{"method":"notifications/x"}',
    ],
)
def test_decode_malformed_notification_has_no_reply(line):
    decoded = decode(line)
    assert isinstance(decoded, Invalid)
    assert decoded.reply is None
    assert decoded.reason


# ------------------------------------------------------------------------------------ decode: batches


def test_decode_empty_array_is_invalid_request():
    assert decode("[]") == invalid_request(None, "empty batch")


def test_decode_batch_classifies_each_item():
    decoded = decode(
        '[{"jsonrpc":"2.0","id":1,"method":"ping"},'
        '{"jsonrpc":"2.0","method":"notifications/x"},'
        '{"jsonrpc":"2.0","id":2,"method":"ping","params":[]},'
        '{"jsonrpc":"2.0","method":"notifications/y","params":[]},'
        '{"jsonrpc":"2.0","id":3,"result":{}},'
        "5,[]]"
    )
    assert isinstance(decoded, Batch)
    assert decoded.items == (
        Request(1, "ping"),
        Notification("notifications/x"),
        invalid_request(2, '"params" must be an object'),
        Invalid(None, '"params" must be an object'),
        Response(3, {}),
        invalid_request(None, "not an object"),
        invalid_request(None, "not an object"),
    )


def test_decode_batch_of_one_is_still_a_batch():
    assert decode('[{"jsonrpc":"2.0","id":1,"method":"ping"}]') == Batch((Request(1, "ping"),))


# ------------------------------------------------------------------------------------------ classify


def test_classify_takes_parsed_values():
    assert classify({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == Request(1, "ping")
    assert classify({"jsonrpc": "2.0", "method": "n"}) == Notification("n")
    assert classify([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]) == invalid_request(None, "not an object")


def test_classify_bool_id_is_not_an_integer():
    assert classify({"jsonrpc": "2.0", "id": False, "method": "ping"}) == invalid_request(
        None, '"id" must be a string or an integer'
    )


# -------------------------------------------------------------------------------------------- encode


def test_encode_response_is_compact_with_fixed_member_order():
    assert encode(Response(1, {})) == b'{"jsonrpc":"2.0","id":1,"result":{}}'
    assert (
        encode(Response("a", {"x": [1, 2], "y": None})) == b'{"jsonrpc":"2.0","id":"a","result":{"x":[1,2],"y":null}}'
    )


def test_encode_request_omits_absent_params():
    assert encode(Request(3, "ping")) == b'{"jsonrpc":"2.0","id":3,"method":"ping"}'
    assert encode(Request(3, "tools/list", {})) == b'{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}'


def test_encode_notification_has_no_id():
    assert (
        encode(Notification("notifications/initialized")) == b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
    )
    assert (
        encode(Notification("notifications/progress", {"progressToken": "t", "progress": 1}))
        == b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}'
    )


def test_encode_error_response_with_null_id():
    assert encode(error_response(None, -32700, "Parse error")) == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'
    )


def test_error_response_omits_absent_data_and_keeps_given_data():
    assert error_response(1, -32602, "bad").error == {"code": -32602, "message": "bad"}
    assert error_response(1, -32002, "missing", {"uri": "x://y"}).error == {
        "code": -32002,
        "message": "missing",
        "data": {"uri": "x://y"},
    }
    assert error_response(1, -32602, "bad", {}).error["data"] == {}  # falsy data is still data


def test_encode_error_code_enum_is_a_plain_integer():
    from plainmcp.errors import ErrorCode

    assert encode(error_response(2, ErrorCode.METHOD_NOT_FOUND, "Method not found: x")) == (
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: x"}}'
    )


def test_encode_writes_utf8_not_escapes():
    data = encode(Response("ünï", {"text": "héllo ✓ 🎉"}))
    assert data == '{"jsonrpc":"2.0","id":"ünï","result":{"text":"héllo ✓ 🎉"}}'.encode()
    assert b"\\u" not in data


def test_encode_never_contains_a_raw_newline():
    data = encode(Response(1, {"text": "a\nb\r\nc\u2028d\u2029e"}))
    assert b"\n" not in data and b"\r" not in data
    assert json.loads(data)["result"]["text"] == "a\nb\r\nc\u2028d\u2029e"


def test_encode_huge_and_odd_ids_exactly():
    assert encode(Response(2**64 + 1, {})) == b'{"jsonrpc":"2.0","id":18446744073709551617,"result":{}}'
    assert encode(Response(-(10**30), {})).startswith(b'{"jsonrpc":"2.0","id":-1000000000000000000000000000000,')
    assert encode(Response("", {})) == b'{"jsonrpc":"2.0","id":"","result":{}}'
    assert encode(Response(0, {})) == b'{"jsonrpc":"2.0","id":0,"result":{}}'


def test_encode_lone_surrogate_falls_back_to_ascii_escapes():
    data = encode(Response(1, {"text": "é\ud800x"}))
    data.decode("utf-8")  # valid UTF-8 on the wire
    assert b"\\ud800" in data
    assert json.loads(data)["result"]["text"] == "é\ud800x"


def test_encode_batch_is_a_json_array():
    assert encode([Response(1, {}), error_response(2, -32601, "m")]) == (
        b'[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"m"}}]'
    )


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_encode_rejects_non_finite_numbers(value):
    with pytest.raises(ValueError):
        encode(Response(1, {"x": value}))


@pytest.mark.parametrize("value", [{1, 2}, object(), b"bytes"])
def test_encode_rejects_values_json_cannot_carry(value):
    with pytest.raises((TypeError, ValueError)):
        encode(Response(1, {"x": value}))


@pytest.mark.parametrize(
    "message",
    [
        Request(1, "tools/call", {"name": "echo", "arguments": {"text": "✓"}}),
        Request("x", "ping"),
        Notification("notifications/cancelled", {"requestId": 1, "reason": "r"}),
        Response(2**70, {"content": [{"type": "text", "text": "a\nb"}]}),
        error_response("e", -32602, "bad", {"k": [1, None]}),
        error_response(None, -32700, "Parse error"),
    ],
)
def test_encode_then_decode_round_trips(message):
    assert decode(encode(message)) == message


@pytest.mark.parametrize("kind", ["circular", "deep"])
def test_encode_refuses_circular_and_too_deep_values_with_value_error(kind: str) -> None:
    from plainmcp.jsonrpc import Response, encode

    if kind == "circular":
        value: Any = []
        value.append(value)
    else:
        value = []
        for _ in range(100_000):
            value = [value]
    with pytest.raises(ValueError, match="circular, or nested too deeply"):
        encode(Response(1, {"content": value}))


def test_frame_answers_an_unserializable_result_with_an_internal_error() -> None:
    import json

    from plainmcp.framing import frame
    from plainmcp.jsonrpc import Response

    cyclic: dict[str, Any] = {}
    cyclic["self"] = cyclic
    line = json.loads(frame(Response(7, cyclic)))
    assert line["id"] == 7 and line["error"]["code"] == -32603


def test_messages_are_immutable_values_equal_by_their_fields():
    request = Request(1, "tools/call", {"name": "echo"})
    assert request == Request(1, "tools/call", {"name": "echo"})
    assert request != Request(2, "tools/call", {"name": "echo"})
    assert Response(1, {}) != ErrorResponse(1, {})  # same fields, another kind of message
    assert Invalid(None, "x") == Invalid(None, "x") and Batch((request,)) == Batch(
        (Request(1, "tools/call", {"name": "echo"}),)
    )
    with pytest.raises(AttributeError):
        request.id = 2  # type: ignore[misc]  # the point: it cannot be changed
    with pytest.raises(AttributeError):
        del request.method
    with pytest.raises(TypeError):
        hash(request)  # equal by value, and params is a mutable dict
    assert repr(request) == "Request(id=1, method='tools/call', params={'name': 'echo'})"
    assert not hasattr(request, "__dict__")
