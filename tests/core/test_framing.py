"""Unit tests of the line framing every transport shares: LineDecoder (bytes in) and frame() (bytes out)."""

from __future__ import annotations

import json

import pytest
from plainmcp.framing import DEFAULT_MAX_MESSAGE_BYTES, LineDecoder, frame
from plainmcp.jsonrpc import ErrorResponse, Invalid, Notification, Request, Response, error_response

PING = b'{"jsonrpc":"2.0","id":1,"method":"ping"}'
PARSE_ERROR = ErrorResponse(None, {"code": -32700, "message": "Parse error"})


def too_large(limit: int) -> Invalid:
    return Invalid(
        ErrorResponse(None, {"code": -32600, "message": f"Invalid Request: message exceeds {limit} bytes"}),
        "too large",
    )


def ping(request_id) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}, separators=(",", ":")).encode()


# ------------------------------------------------------------------------------------- LineDecoder


def test_line_decoder_default_limit_is_4_mib():
    assert DEFAULT_MAX_MESSAGE_BYTES == 4 * 1024 * 1024
    assert LineDecoder().max_bytes == 4 * 1024 * 1024


def test_line_decoder_one_line():
    assert LineDecoder().feed(PING + b"\n") == [Request(1, "ping")]


def test_line_decoder_several_lines_in_one_chunk_keep_order():
    decoder = LineDecoder()
    assert decoder.feed(ping(1) + b"\n" + ping(2) + b"\n" + ping(3) + b"\n") == [
        Request(1, "ping"),
        Request(2, "ping"),
        Request(3, "ping"),
    ]


def test_line_decoder_waits_for_the_newline():
    decoder = LineDecoder()
    assert decoder.feed(PING) == []
    assert decoder.feed(b"\n") == [Request(1, "ping")]


def test_line_decoder_line_split_byte_by_byte():
    decoder = LineDecoder()
    data = ping(1) + b"\n" + ping(2) + b"\n"
    out = []
    for index in range(len(data)):
        out += decoder.feed(data[index : index + 1])
    assert out == [Request(1, "ping"), Request(2, "ping")]


def test_line_decoder_chunk_ends_mid_line_and_next_holds_rest_plus_more():
    decoder = LineDecoder()
    assert decoder.feed(ping(1) + b"\n" + ping(2)[:10]) == [Request(1, "ping")]
    assert decoder.feed(ping(2)[10:] + b"\n" + ping(3)[:5]) == [Request(2, "ping")]
    assert decoder.feed(ping(3)[5:] + b"\n") == [Request(3, "ping")]


def test_line_decoder_multibyte_utf8_split_across_feeds():
    line = '{"jsonrpc":"2.0","id":"☃","method":"ping","params":{"t":"🎉é"}}'.encode()
    cut = line.index("🎉".encode()) + 2  # inside the four-byte sequence
    decoder = LineDecoder()
    assert decoder.feed(line[:cut]) == []
    assert decoder.feed(line[cut:] + b"\n") == [Request("☃", "ping", {"t": "🎉é"})]


def test_line_decoder_crlf_line_endings():
    decoder = LineDecoder()
    assert decoder.feed(ping(1) + b"\r\n" + ping(2) + b"\r\n") == [Request(1, "ping"), Request(2, "ping")]


def test_line_decoder_crlf_split_between_cr_and_lf():
    decoder = LineDecoder()
    assert decoder.feed(PING + b"\r") == []
    assert decoder.feed(b"\n") == [Request(1, "ping")]


def test_line_decoder_blank_and_whitespace_lines_are_ignored():
    decoder = LineDecoder()
    assert decoder.feed(b"\n\n \t \n\r\n" + PING + b"\n\n") == [Request(1, "ping")]
    assert decoder.finish() == []


def test_line_decoder_bad_line_does_not_disturb_neighbours():
    decoder = LineDecoder()
    out = decoder.feed(ping(1) + b"\n{oops\n\xff\xfe\n" + ping(2) + b"\n")
    assert out[0] == Request(1, "ping")
    assert [item.reply for item in out[1:3]] == [PARSE_ERROR, PARSE_ERROR]
    assert out[3] == Request(2, "ping")


def test_line_decoder_line_of_exactly_the_limit_is_accepted():
    line = ping(1)
    decoder = LineDecoder(max_bytes=len(line))
    assert decoder.feed(line + b"\n") == [Request(1, "ping")]


def test_line_decoder_line_one_byte_over_the_limit_is_rejected():
    line = ping(1)
    decoder = LineDecoder(max_bytes=len(line) - 1)
    assert decoder.feed(line + b"\n") == [too_large(len(line) - 1)]


def test_line_decoder_oversized_line_in_one_chunk_then_next_line_served():
    decoder = LineDecoder(max_bytes=64)
    out = decoder.feed(
        b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"a" * 100 + b'"}}\n' + ping(2) + b"\n"
    )
    assert out == [too_large(64), Request(2, "ping")]


def test_line_decoder_oversized_message_text_names_the_limit():
    (item,) = LineDecoder(max_bytes=16).feed(b"x" * 17 + b"\n")
    assert item.reply.id is None
    assert item.reply.error == {"code": -32600, "message": "Invalid Request: message exceeds 16 bytes"}


def test_line_decoder_oversized_line_over_many_feeds_is_one_error():
    decoder = LineDecoder(max_bytes=64)
    out = []
    for _ in range(100):  # 100 x 50 bytes: far beyond the limit, never a newline
        out += decoder.feed(b"a" * 50)
    assert out == []  # reported once, when the line ends
    out += decoder.feed(b"a" * 10 + b"\n" + ping(2) + b"\n")
    assert out == [too_large(64), Request(2, "ping")]


def test_line_decoder_oversized_line_memory_stays_bounded():
    decoder = LineDecoder(max_bytes=1000)
    for _ in range(1000):
        decoder.feed(b"b" * 999)
        # What is held back between feeds never exceeds the limit (by more than nothing).
        assert len(decoder._buffer) <= 1000
    assert decoder.feed(b"\n") == [too_large(1000)]


def test_line_decoder_oversized_line_newline_in_a_later_chunk_with_more_lines():
    decoder = LineDecoder(max_bytes=64)
    assert decoder.feed(b"z" * 80) == []
    assert decoder.feed(b"z\n" + ping(1)[:8]) == [too_large(64)]
    assert decoder.feed(ping(1)[8:] + b"\n") == [Request(1, "ping")]


def test_line_decoder_two_oversized_lines_are_two_errors():
    decoder = LineDecoder(max_bytes=8)
    assert decoder.feed(b"x" * 20 + b"\n" + b"y" * 30 + b"\n" + b"[]\n") == [
        too_large(8),
        too_large(8),
        Invalid(ErrorResponse(None, {"code": -32600, "message": "Invalid Request: empty batch"}), "empty batch"),
    ]


def test_line_decoder_finish_decodes_last_line_without_newline():
    decoder = LineDecoder()
    assert decoder.feed(ping(1) + b"\n" + ping(2)) == [Request(1, "ping")]
    assert decoder.finish() == [Request(2, "ping")]


def test_line_decoder_finish_with_nothing_left_is_empty():
    decoder = LineDecoder()
    assert decoder.finish() == []
    decoder.feed(PING + b"\n")
    assert decoder.finish() == []


def test_line_decoder_finish_ignores_trailing_whitespace():
    decoder = LineDecoder()
    decoder.feed(b"  \r")
    assert decoder.finish() == []


def test_line_decoder_finish_reports_garbage_tail():
    decoder = LineDecoder()
    decoder.feed(b'{"jsonrpc":"2.0","id":1,')
    assert [item.reply for item in decoder.finish()] == [PARSE_ERROR]


def test_line_decoder_finish_during_oversized_line_reports_it_once():
    decoder = LineDecoder(max_bytes=16)
    decoder.feed(b"q" * 40)
    assert decoder.finish() == [too_large(16)]
    assert decoder.finish() == []


def test_line_decoder_finish_twice_yields_the_tail_once():
    decoder = LineDecoder()
    decoder.feed(PING)
    assert decoder.finish() == [Request(1, "ping")]
    assert decoder.finish() == []


# -------------------------------------------------------------------------------------------- frame


def test_frame_single_message_is_one_line():
    assert frame(Response(1, {})) == b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_frame_notification():
    assert frame(Notification("notifications/tools/list_changed")) == (
        b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
    )


def test_frame_text_with_newlines_stays_on_one_line():
    data = frame(Response(1, {"text": "a\nb\r\n\u2028"}))
    assert data.count(b"\n") == 1 and data.endswith(b"\n")


def test_frame_batch_is_one_array_line():
    data = frame([Response(1, {}), error_response(2, -32601, "Method not found: x")])
    assert data == (
        b'[{"jsonrpc":"2.0","id":1,"result":{}},'
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found: x"}}]\n'
    )


def test_frame_response_at_exactly_the_limit_is_kept():
    message = Response(1, {"t": "x" * 50})
    size = len(frame(message)) - 1
    assert frame(message, max_bytes=size) == frame(message)


def test_frame_oversized_response_becomes_internal_error_for_same_id():
    data = frame(Response("big", {"text": "x" * 5000}), max_bytes=4096)
    assert data == (
        b'{"jsonrpc":"2.0","id":"big","error":{"code":-32603,'
        b'"message":"Response exceeds the 4096-byte message limit"}}\n'
    )


def test_frame_oversized_error_response_is_replaced_too():
    data = frame(error_response(7, -32602, "bad", {"blob": "y" * 500}), max_bytes=200)
    assert json.loads(data) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32603, "message": "Response exceeds the 200-byte message limit"},
    }


def test_frame_oversized_notification_is_dropped():
    assert frame(Notification("notifications/message", {"data": "z" * 500}), max_bytes=100) == b""


def test_frame_oversized_request_is_dropped():
    assert frame(Request(1, "sampling/createMessage", {"x": "z" * 500}), max_bytes=100) == b""


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), object(), {1, 2}])
def test_frame_unserializable_response_becomes_internal_error(bad):
    data = frame(Response(5, {"value": bad}))
    assert data == b'{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"Internal error"}}\n'


def test_frame_unserializable_error_data_becomes_internal_error():
    data = frame(error_response("e", -32602, "bad", {"x": object()}))
    assert data == b'{"jsonrpc":"2.0","id":"e","error":{"code":-32603,"message":"Internal error"}}\n'


def test_frame_unserializable_notification_is_dropped():
    assert frame(Notification("notifications/message", {"data": object()})) == b""


def test_frame_unserializable_error_without_id_is_dropped():
    assert frame(error_response(None, -32600, "x", {"x": object()})) == b""


def test_frame_batch_replaces_only_the_bad_member():
    data = frame([Response(1, {}), Response(2, {"v": float("nan")}), Response(3, {"t": "x" * 500})], max_bytes=300)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert json.loads(data) == [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32603, "message": "Internal error"}},
        {
            "jsonrpc": "2.0",
            "id": 3,
            "error": {"code": -32603, "message": "Response exceeds the 300-byte message limit"},
        },
    ]


def test_frame_batch_of_only_dropped_messages_writes_nothing():
    assert frame([Notification("n", {"x": object()})]) == b""


def test_frame_batch_line_does_not_exceed_the_limit():
    # Each response fits, but the array line holding all of them would not: a peer with the same
    # limit would reject the whole line and lose every answer. Every id must still be answered.
    limit = 1000
    responses = [Response(index, {"text": "x" * 300}) for index in range(5)]
    data = frame(responses, max_bytes=limit)
    assert data.endswith(b"\n")
    assert len(data) - 1 <= limit
    assert sorted(item["id"] for item in json.loads(data)) == [0, 1, 2, 3, 4]


def test_frame_output_decodes_back_with_line_decoder():
    messages = [Response(1, {"t": "é\n"}), Notification("n", {"a": 1}), error_response(None, -32700, "Parse error")]
    wire = b"".join(frame(message) for message in messages)
    assert LineDecoder().feed(wire) == messages
