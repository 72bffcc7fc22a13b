"""Regression: a stdio server whose stdout was a regular file (``server > out.jsonl``) or /dev/null
crashed with PermissionError as soon as two answers fell in one event-loop turn: the output drain
asked epoll to watch the file, and epoll refuses regular files. Now those writes go out directly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}
PINGS = 50


def requests() -> bytes:
    lines = [INIT] + [{"jsonrpc": "2.0", "id": n, "method": "ping"} for n in range(1, PINGS + 1)]
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def serve(stdin: object, stdout: object, data: bytes | None) -> subprocess.CompletedProcess[bytes]:
    """Run the fixture once; ``data`` is piped to it, else ``stdin`` (an open file) is its input."""
    return subprocess.run(
        [sys.executable, "-m", "plainmcp_everything", "--log-level", "warning"],
        **({"input": data} if data is not None else {"stdin": stdin}),
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("stdin_kind", ["pipe", "file"])
def test_stdout_to_a_regular_file_gets_every_answer(tmp_path: Path, stdin_kind: str) -> None:
    out_path = tmp_path / "out.jsonl"
    in_path = tmp_path / "in.jsonl"
    in_path.write_bytes(requests())
    with out_path.open("wb") as out, in_path.open("rb") as source:
        if stdin_kind == "pipe":
            done = serve(subprocess.PIPE, out, requests())
        else:
            done = serve(source, out, None)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = [json.loads(line) for line in out_path.read_text().splitlines()]
    assert sorted(answer["id"] for answer in answers) == list(range(PINGS + 1))


def test_stdout_to_dev_null_does_not_crash() -> None:
    with open("/dev/null", "wb") as null:
        done = serve(subprocess.PIPE, null, requests())
    assert done.returncode == 0, done.stderr.decode()[-2000:]
