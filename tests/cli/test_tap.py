"""``plainmcp tap``: byte-transparent both ways, a complete log, signals and exit codes passed through.

The transparency test runs the same scripted conversation with the feature server twice, once
directly and once through the tap, and compares every byte the client received.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from .support import FEATURE_SERVER

TAP = [sys.executable, "-m", "plainmcp.cli", "tap"]
WAIT = 20  # seconds: bound on every read and exit in this file


def line(message: dict[str, Any], end: bytes = b"\n") -> bytes:
    return json.dumps(message).encode() + end


#: (bytes the client writes, id of the answer to wait for before going on; ... = no answer)
CONVERSATION: list[tuple[bytes, Any]] = [
    (
        line(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
        ),
        1,
    ),
    (line({"jsonrpc": "2.0", "method": "notifications/initialized"}), ...),
    (line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}), 2),
    (
        line(
            {
                "jsonrpc": "2.0",
                "id": "abc",
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "é\u2028"}},
            }
        ),
        "abc",
    ),
    (b'{"jsonrpc": "2.0", "id": 9, "method"\n', None),  # not JSON: a parse error answered with id null
    (
        line(
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "progress", "arguments": {"steps": 2}, "_meta": {"progressToken": "p"}},
            }
        ),
        4,
    ),
    (line({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "fail"}}), 5),
    (line({"jsonrpc": "2.0", "id": 6, "method": "nosuch/method"}), 6),
    (line({"jsonrpc": "2.0", "id": 7, "method": "ping"}, end=b"\r\n"), 7),
]


class Conversation:
    """A process driven line by line: write, then read until the awaited answer (bounded)."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.received = bytearray()
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.err = bytearray()
        threading.Thread(target=self._read, daemon=True).start()
        self._err_reader = threading.Thread(target=lambda: self.err.extend(self.process.stderr.read()), daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        for raw in iter(self.process.stdout.readline, b""):
            self.lines.put(raw)
        self.lines.put(b"")

    def send(self, data: bytes, answer: Any) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()
        while answer is not ...:
            raw = self.lines.get(timeout=WAIT)
            assert raw, "the server closed its output early"
            self.received += raw
            message = json.loads(raw)
            if "method" not in message and message.get("id") == answer:
                return

    def finish(self) -> tuple[bytes, int, str]:
        self.process.stdin.close()
        while (raw := self.lines.get(timeout=WAIT)) != b"":
            self.received += raw
        code = self.process.wait(WAIT)
        self._err_reader.join(WAIT)  # stderr reaches its end after the exit, maybe after stdout's
        return bytes(self.received), code, self.err.decode("utf-8", "replace")


def converse(command: list[str]) -> tuple[bytes, int, str]:
    conversation = Conversation(command)
    for data, answer in CONVERSATION:
        conversation.send(data, answer)
    return conversation.finish()


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def tapped(tmp_path_factory) -> tuple[bytes, bytes, str, Path]:
    """(what the client got directly, what it got through the tap, the tap's stderr, the log)."""
    log = tmp_path_factory.mktemp("tap") / "exchange.jsonl"
    direct, code, _ = converse(FEATURE_SERVER)
    assert code == 0
    through, code, err = converse([*TAP, "--log", str(log), "--", *FEATURE_SERVER])
    assert code == 0, err
    return direct, through, err, log


def test_tap_conversation_is_byte_identical_to_one_without_it(tapped) -> None:
    direct, through, _, _ = tapped
    assert through == direct
    assert through.count(b"\n") >= len(CONVERSATION) - 1  # the comparison saw real answers


def test_tap_log_records_every_message_in_order_with_direction(tapped) -> None:
    _, through, _, log = tapped
    entries = records(log)
    assert entries[0]["event"] == "start"
    assert entries[0]["command"] == FEATURE_SERVER
    assert entries[-1] == {"ts": entries[-1]["ts"], "event": "exit", "returncode": 0}
    sent = [r for r in entries if r.get("direction") == "client->server"]
    got = [r for r in entries if r.get("direction") == "server->client"]
    assert len(sent) == len(CONVERSATION)
    assert [r.get("message") for r in sent if "message" in r] == [
        json.loads(data) for data, _ in CONVERSATION if not data.startswith(b'{"jsonrpc": "2.0", "id": 9')
    ]
    assert sent[4]["raw"] == '{"jsonrpc": "2.0", "id": 9, "method"'
    assert [r["message"] for r in got] == [json.loads(raw) for raw in through.splitlines()]
    assert all(r["ts"].endswith("Z") for r in entries)


def test_tap_log_answers_carry_method_and_latency(tapped) -> None:
    _, _, _, log = tapped
    answers = {
        json.dumps(r["message"].get("id")): r
        for r in records(log)
        if r.get("direction") == "server->client" and "method" not in r["message"]
    }
    assert answers["1"]["method"] == "initialize"
    assert answers['"abc"']["method"] == "tools/call"
    assert answers["6"]["method"] == "nosuch/method"
    assert answers["7"]["method"] == "ping"  # the request ended in \r\n
    assert all(answers[key]["latency_ms"] >= 0 for key in ("1", "2", '"abc"', "4", "5", "6", "7"))
    assert "latency_ms" not in answers["null"]  # the parse error answers no request we could match


def test_tap_live_view_on_stderr_shows_method_id_time_and_errors(tapped) -> None:
    _, _, err, log = tapped
    assert f"plainmcp tap: logging to {log}" in err
    live = [text.split(" ", 2)[2] for text in err.splitlines() if text.startswith("tap ")]
    assert "> #1 initialize" in live
    assert any(text.startswith("< #1 initialize ") and text.endswith(" ms") for text in live)
    assert "> notifications/initialized" in live
    assert '> #"abc" tools/call echo' in live
    assert "< notifications/progress 1/2" in live
    assert any(text.startswith("< #5 tools/call isError ") for text in live)
    assert any(text.startswith("< #6 nosuch/method error -32601: ") for text in live)
    assert any(text.startswith("> (not JSON) ") for text in live)


def test_tap_passes_arbitrary_bytes_both_ways_unchanged(tmp_path) -> None:
    copy = "import shutil, sys; shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)"
    payload = (
        line({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        + b"\xff\xfe not utf-8 \x00\n"
        + b"  \t\r\n"
        + b'{"big": "'
        + b"x" * 300_000
        + b'"}\r\n'
        + b"no final newline"
    )
    log = tmp_path / "copy.jsonl"
    result = subprocess.run(
        [*TAP, "-q", "--log", str(log), "--", sys.executable, "-c", copy],
        input=payload,
        capture_output=True,
        timeout=WAIT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == payload
    assert result.stderr == b""  # --quiet: no live view
    entries = [r for r in records(log) if "direction" in r]
    for direction in ("client->server", "server->client"):
        mine = [r for r in entries if r["direction"] == direction]
        assert [r.get("message", r.get("raw")) for r in mine] == [
            {"jsonrpc": "2.0", "id": 1, "method": "ping"},
            "\ufffd\ufffd not utf-8 \x00",
            {"big": "x" * 300_000},
            "no final newline",
        ]


def test_tap_exits_with_the_server_exit_code(tmp_path) -> None:
    result = subprocess.run(
        [*TAP, "--log", str(tmp_path / "l.jsonl"), "--", sys.executable, "-c", "raise SystemExit(7)"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=WAIT,
    )
    assert result.returncode == 7
    assert records(tmp_path / "l.jsonl")[-1]["returncode"] == 7


def test_tap_command_not_found_exits_127(tmp_path) -> None:
    result = subprocess.run(
        [*TAP, "--log", str(tmp_path / "l.jsonl"), "--", "no-such-server-xyz"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert result.returncode == 127
    assert "no-such-server-xyz: command not found" in result.stderr


def test_tap_without_command_is_a_usage_error() -> None:
    result = subprocess.run(TAP, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT)
    assert result.returncode == 2


SLEEPER = """
import signal, sys, time
if sys.argv[1] == "handle":
    def bye(number, frame):
        sys.stdout.write(f"got {number}\\n"); sys.stdout.flush(); sys.exit(0)
    signal.signal(signal.SIGTERM, bye)
sys.stdout.write("ready\\n"); sys.stdout.flush()
time.sleep(60)
"""


@pytest.mark.parametrize(
    ("mode", "expected_code", "expected_out"),
    [("handle", 0, b"ready\ngot 15\n"), ("default", -signal.SIGTERM, b"ready\n")],
)
def test_tap_forwards_signals_and_mirrors_how_the_server_ended(tmp_path, mode, expected_code, expected_out) -> None:
    process = subprocess.Popen(
        [*TAP, "-q", "--log", str(tmp_path / "l.jsonl"), "--", sys.executable, "-c", SLEEPER, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout.readline() == b"ready\n"
        os.kill(process.pid, signal.SIGTERM)
        out, _ = process.communicate(timeout=WAIT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT)
    assert b"ready\n" + out == expected_out
    assert process.returncode == expected_code


def test_an_answer_that_arrives_while_its_request_is_being_passed_on_is_paired(monkeypatch, tmp_path) -> None:
    # A fast server can answer before the upstream pump returns from writing the request: the
    # request must already be recorded then (this lost latencies once the core got faster).
    from plainmcp.cli import tap

    request = line({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    answer = line({"jsonrpc": "2.0", "id": 9, "result": {}})
    chunks = [request, b""]
    log_path = tmp_path / "tap.jsonl"
    recorder = tap.Recorder(log_path.open("w", encoding="utf-8"), None)

    def answered_during_the_write(fd: int, data: bytes) -> bool:
        recorder.feed(tap.SERVER_TO_CLIENT, answer, 0.0)
        return True

    class Stdin:
        def fileno(self) -> int:
            return -1

        def close(self) -> None:
            pass

    class Process:
        stdin = Stdin()

    monkeypatch.setattr(tap, "_read", lambda fd: chunks.pop(0))
    monkeypatch.setattr(tap, "_write_all", answered_during_the_write)
    proxy = tap.Tap(["server"], recorder)
    proxy.process = Process()  # type: ignore[assignment]  # the pump needs only stdin
    proxy._client_to_server()
    recorder.log.close()
    records = [json.loads(row) for row in log_path.read_text().splitlines()]
    answered = [record for record in records if record.get("direction") == tap.SERVER_TO_CLIENT]
    assert answered and answered[0]["method"] == "ping" and "latency_ms" in answered[0]
