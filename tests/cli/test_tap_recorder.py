"""The tap's recorder on its own: pairing answers with requests in both directions, batches, bounds."""

from __future__ import annotations

import io
import json

from plainmcp.cli import tap
from plainmcp.cli.tap import CLIENT_TO_SERVER, SERVER_TO_CLIENT, Recorder


def recorded(log: io.StringIO) -> list[dict]:
    return [json.loads(text) for text in log.getvalue().split("\n") if text]


def test_recorder_pairs_a_server_request_with_the_client_answer() -> None:
    log, live = io.StringIO(), io.StringIO()
    recorder = Recorder(log, live)
    recorder.feed(SERVER_TO_CLIENT, b'{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage"}\n', now=10.0)
    # Same id the other way round is a different request: it must not steal the answer.
    recorder.feed(CLIENT_TO_SERVER, b'{"jsonrpc":"2.0","id":0,"method":"ping"}\n', now=10.1)
    recorder.feed(CLIENT_TO_SERVER, b'{"jsonrpc":"2.0","id":0,"result":{"role":"assistant"}}\n', now=10.25)
    answer = recorded(log)[-1]
    assert answer["direction"] == CLIENT_TO_SERVER
    assert (answer["method"], answer["latency_ms"]) == ("sampling/createMessage", 250.0)
    assert live.getvalue().splitlines()[-1].endswith("> #0 sampling/createMessage 250.0 ms")


def test_recorder_splits_lines_across_chunks() -> None:
    log = io.StringIO()
    recorder = Recorder(log, None)
    for piece in (b'{"jsonrpc":"2.0",', b'"id":1,"method":"ping"}\n{"jsonrpc"', b':"2.0","method":"x"}\n'):
        recorder.feed(CLIENT_TO_SERVER, piece, now=1.0)
    assert [r["message"].get("method") for r in recorded(log)] == ["ping", "x"]


def test_recorder_batch_is_one_record_and_each_answer_is_shown() -> None:
    log, live = io.StringIO(), io.StringIO()
    recorder = Recorder(log, live)
    recorder.feed(
        CLIENT_TO_SERVER, b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]\n', 1.0
    )
    recorder.feed(
        SERVER_TO_CLIENT, b'[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{}}]\n', 1.5
    )
    assert len(recorded(log)) == 2
    shown = live.getvalue().splitlines()
    assert shown[-2].endswith("< #2 b 500.0 ms") and shown[-1].endswith("< #1 a 500.0 ms")


def test_recorder_over_long_line_is_logged_truncated_and_memory_stays_bounded(monkeypatch) -> None:
    monkeypatch.setattr(tap, "MAX_LINE", 100)
    log = io.StringIO()
    recorder = Recorder(log, None)
    for _ in range(10):
        recorder.feed(SERVER_TO_CLIENT, b"y" * 150, now=1.0)
        assert len(recorder._pending[SERVER_TO_CLIENT]) <= 100
    recorder.feed(SERVER_TO_CLIENT, b'zz\n{"jsonrpc":"2.0","method":"after"}\n', now=1.0)
    first, second = recorded(log)
    assert first["truncated"] is True and first["bytes"] == 1502
    assert first["raw"] == "y" * 150
    assert second["message"]["method"] == "after"


def test_recorder_log_escapes_unicode_line_separators() -> None:
    log = io.StringIO()
    Recorder(log, None).feed(CLIENT_TO_SERVER, '{"text":"a\u2028b\u2029c é"}\n'.encode(), now=1.0)
    assert len(log.getvalue().splitlines()) == 1
    assert recorded(log)[0]["message"] == {"text": "a\u2028b\u2029c é"}
