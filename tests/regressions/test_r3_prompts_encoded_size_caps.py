"""Regression (issue 26.12): a size cap counted characters, not the bytes they take in the JSON message,
so text of control characters (six bytes each as ``\\u0001``) passed the cap and overflowed the
message limit (the answer was then replaced by an error). Both caps now count encoded bytes: the
prompts server's rendered prompt (embedded files included) and sqlite's result budget. Through real
server processes, measuring the answer's line on the wire."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from plainmcp_prompts.template import MAX_RENDER_BYTES, json_size

from tests.servers.prompts.stdio_process import StdioServer
from tests.servers.prompts.support import stdio_command, write

#: The core's message limit (framing.DEFAULT_MAX_MESSAGE_BYTES).
MESSAGE_LIMIT = 4 * 1024 * 1024


def test_r3_prompts_json_size_counts_escapes_and_utf8() -> None:
    assert json_size("plain") == 5
    assert json_size('say "hi"') == 10
    assert json_size("\x01") == 6
    assert json_size("é") == 2 and json_size("\U0001f600") == 4
    assert json_size("a\nb") == 4


def test_r3_prompts_an_embed_of_control_characters_is_refused_not_overflowed(tmp_path: Path) -> None:
    # 250 KiB of control characters per file (under the 256 KiB embed cap), embedded 20 times:
    # 5 MB of characters counted as 5 MB, but ~30 MB on the wire before.
    write(tmp_path, "noise.txt", "\x01" * (250 * 1024))
    write(tmp_path, "many.md", "Look:\n" + "{{> noise.txt}}\n" * 4)
    write(tmp_path, "one.md", "Look:\n{{> noise.txt}}\n")
    with StdioServer(stdio_command(tmp_path)) as server:
        server.initialize()
        refused = server.call("prompts/get", {"name": "many"})
        single = server.call("prompts/get", {"name": "one"})
    assert refused["error"]["code"] == -32602, refused
    assert f"larger than {MAX_RENDER_BYTES} bytes once encoded" in refused["error"]["message"]
    # One embed (250 KiB of characters, ~1.5 MB encoded) is past the cap too: refused the same way.
    assert single["error"]["code"] == -32602


def test_r3_sqlite_a_result_resource_of_control_characters_stays_within_the_message_limit(tmp_path: Path) -> None:
    path = tmp_path / "noise.db"
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE t (v TEXT)")
    connection.executemany("INSERT INTO t VALUES (?)", [("\x01" * 100_000,) for _ in range(40)])
    connection.commit()
    connection.close()
    command = [sys.executable, "-m", "plainmcp_sqlite", "--db", str(path), "--no-watch"]
    with StdioServer(command) as server:
        server.initialize()
        # A budget of 1,000,000 characters was ~6 MB of JSON: past the 4 MiB message limit.
        queried = server.request("tools/call", {"name": "query", "arguments": {"sql": "SELECT v FROM t"}})
        links = [block for block in queried["content"] if block["type"] == "resource_link"]
        answer = server.call("resources/read", {"uri": links[0]["uri"]})
    assert "result" in answer, answer
    text = answer["result"]["contents"][0]["text"]
    assert len(json.dumps(answer).encode()) < MESSAGE_LIMIT
    assert 0 < len(json.loads(text)["rows"]) < 40
