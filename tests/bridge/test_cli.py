"""``plainmcp-bridge ask`` and ``chat`` as a user runs them: a real process, the real sqlite server, the
stand-in model; exit codes by outcome, --json, --log, confirmation without a terminal, Ctrl-C in the chat."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import plainmcp_sqlite
import pytest
from plainmcp_bridge.standin import StandInModel

SAMPLE = Path(plainmcp_sqlite.__file__).parent / "sample" / "sample.db"
BRIDGE = [sys.executable, "-m", "plainmcp_bridge"]


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    shutil.copy(SAMPLE, path)
    return path


def server(database: Path, *extra: str) -> str:
    return f"{sys.executable} -m plainmcp_sqlite --db {database} --log-level warning {' '.join(extra)}"


def run(
    model: StandInModel,
    *args: str,
    stdin: str = "",
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PLAINMCP_BRIDGE_BASE_URL": model.url,
        "PLAINMCP_BRIDGE_MODEL": "standin",
        **(env or {}),
    }
    return subprocess.run([*BRIDGE, *args], input=stdin, capture_output=True, text=True, timeout=60, env=environment)


def call(name: str, arguments: Any) -> dict[str, Any]:
    return {"calls": [{"name": name, "arguments": arguments}]}


def test_ask_prints_the_answer_and_exits_0(database: Path) -> None:
    with StandInModel([call("list_tables", {}), {"text": "There are 5 tables."}]) as model:
        done = run(model, "ask", "How many tables?", "--server", server(database))
    assert (done.returncode, done.stdout) == (0, "There are 5 tables.\n")
    assert "tool calls: 1 proposed, 1 valid at first try, 0 repaired, 0 rejected" in done.stderr


def test_ask_json_is_a_machine_readable_transcript(database: Path) -> None:
    script = [call("describe_table", {"table": 5}), call("describe_table", {"table": "books"}), {"text": "ok"}]
    with StandInModel(script) as model:
        done = run(
            model,
            "ask",
            "Describe books",
            "--json",
            "--api",
            "openai",
            "--base-url",
            model.url + "/v1",
            "--server",
            server(database),
        )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert (document["status"], document["answer"], document["rounds"]) == ("answered", "ok", 2)
    assert document["counts"]["repaired"] == 1 and document["counts"]["rejected"] == 1
    kinds = [event["type"] for event in document["transcript"]]
    # Constrained by default against a local server: the question's shortlist is said first.
    assert kinds == ["user", "shortlist", "rejected", "call", "result", "assistant"]
    assert "describe_table" in document["transcript"][1]["tools"]
    assert document["transcript"][2]["problems"] == ["table: expected a string; sent 5 (an integer)"]


@pytest.mark.parametrize(
    ("script", "code", "message"),
    [
        ([call("nope", {})] * 3, 3, "did not produce a valid call to nope"),
        ([call("list_tables", {})] * 3, 4, "still calling tools after 2 rounds"),
        ([{"status": 404, "error": "model 'standin' not found"}], 1, "model 'standin' not found"),
    ],
)
def test_ask_exit_codes_by_outcome(database: Path, script: list[dict[str, Any]], code: int, message: str) -> None:
    with StandInModel(script) as model:
        done = run(model, "ask", "q", "--max-rounds", "2", "--server", server(database))
    assert done.returncode == code and done.stdout == ""
    assert message in done.stderr


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    with StandInModel([]) as model:
        assert run(model, "ask", "q").returncode == 2  # no servers
        bad = tmp_path / "c.json"
        bad.write_text('{"mcpServers": {"x": {"args": []}}}', encoding="utf-8")
        done = run(model, "ask", "q", "--config", str(bad))
    assert done.returncode == 2 and 'mcpServers.x needs "command"' in done.stderr


def test_a_server_that_cannot_start_exits_1(database: Path) -> None:
    with StandInModel([]) as model:
        done = run(model, "ask", "q", "--server", f"{sys.executable} -m plainmcp_sqlite --db /nonexistent/x.db")
    assert done.returncode == 1 and "cannot use server 'sqlite': " in done.stderr


def test_log_file_holds_every_event_and_the_counts(database: Path, tmp_path: Path) -> None:
    log = tmp_path / "bridge.jsonl"
    with StandInModel([call("list_tables", {}), {"text": "5"}]) as model:
        assert run(model, "ask", "q", "--server", server(database), "--log", str(log)).returncode == 0
    events = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    # The log also keeps the tool schemas and the model's raw turns, for eval --from-log (issue 28.4).
    kinds = ["user", "tools", "model_turn", "call", "result", "model_turn", "assistant", "counts"]
    assert [event["type"] for event in events] == kinds
    assert events[1]["tools"][0]["inputSchema"]["type"] == "object"
    assert events[2]["calls"][0]["name"] == "list_tables" and events[5]["text"] == "5"
    assert events[-1]["proposed"] == 1 and events[-1]["valid_first_try"] == 1


def test_ask_without_a_terminal_declines_writes_unless_allowed(database: Path) -> None:
    insert = call("execute", {"sql": "INSERT INTO authors (name, country) VALUES ('A', 'B')"})
    writable = server(database, "--allow-write", "--confirm-writes", "never")
    with StandInModel([insert, {"text": "declined"}, insert, {"text": "written"}]) as model:
        declined = run(model, "ask", "add", "--server", writable)
        allowed = run(model, "ask", "add", "--server", writable, env={"PLAINMCP_BRIDGE_ALLOW": "execute"})
    assert declined.returncode == 0 and "execute was not run: it may change things" in declined.stderr
    assert allowed.stdout == "written\n" and "was not run" not in allowed.stderr
    assert '"the user declined this call' not in json.dumps(model.requests[-1])


def test_chat_session_with_commands(database: Path, tmp_path: Path) -> None:
    config = tmp_path / "servers.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "shop": {
                        "command": sys.executable,
                        "args": ["-m", "plainmcp_sqlite", "--db", str(database), "--log-level", "warning"],
                    }
                }
            }
        ),
        encoding="utf-8",
    )
    with StandInModel([call("list_tables", {}), {"text": "Five tables."}, {"text": "Noted."}]) as model:
        done = run(
            model,
            "chat",
            "--config",
            str(config),
            stdin="Which tables?\n/tools\n/read sqlite://schema\nthanks\n/counts\n",
        )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "-> list_tables {}" in out and "Five tables." in out and "  describe_table" in out
    assert "i  sqlite://schema (" in out
    # The resource went into the conversation before the next question.
    assert "CREATE TABLE" in json.dumps(model.requests[-1][1]["messages"][-2])
    assert out.rstrip().endswith(
        "tool calls: 1 proposed, 1 valid at first try, 0 repaired, 0 rejected, 0 failed at the server, 0 given up"
    )


def test_ctrl_c_in_the_chat_cancels_the_turn_and_the_chat_goes_on(database: Path) -> None:
    slow = {"text": "word " * 100, "chunk_delay": 0.1}
    with StandInModel([slow, {"text": "still here"}]) as model:
        environment = {**os.environ, "PLAINMCP_BRIDGE_BASE_URL": model.url}
        process = subprocess.Popen(
            [*BRIDGE, "chat", "--server", server(database)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write("talk slowly\n")
        process.stdin.flush()
        for _ in range(100):  # wait until the answer is streaming
            if model.requests:
                break
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate("again\n", timeout=30)
        for _ in range(100):  # the stand-in notices the closed stream at its next write
            if model.disconnects:
                break
            time.sleep(0.02)
    assert process.returncode == 0, err
    assert "(interrupted)" in out, out
    assert "still here" in out and out.count("word") < 100, out
    assert model.disconnects == 1


def test_chat_prompt_command_asks_with_the_servers_prompt(database: Path) -> None:
    with StandInModel([{"text": "The priciest book is known."}]) as model:
        done = run(
            model,
            "chat",
            "--server",
            server(database),
            stdin='/prompt answer_question "question=Which book costs most?"\n/prompt nope\n',
        )
    assert done.returncode == 0, done.stderr
    (asked,) = [message for message in model.requests[0][1]["messages"] if message["role"] == "user"]
    # The prompt's messages, the embedded schema resource included, become the question.
    assert "CREATE TABLE books" in asked["content"] and "Which book costs most?" in asked["content"]
    assert "The priciest book is known." in done.stdout
    assert "!  cannot get the prompt nope: sqlite: " in done.stdout


@pytest.mark.parametrize(("typed", "written"), [("y", True), ("n", False)])
def test_a_servers_own_confirmation_is_asked_in_the_chat(database: Path, typed: str, written: bool) -> None:
    # The sqlite server confirms every write through elicitation (its default); --yes skips only the bridge's.
    insert = call("execute", {"sql": "INSERT INTO authors (name, country) VALUES ('Ann', 'IE')"})
    with StandInModel([insert, {"text": "done"}]) as model:
        done = run(model, "chat", "--yes", "--server", server(database, "--allow-write"), stdin=f"add Ann\n{typed}\n")
    assert done.returncode == 0, done.stderr
    assert "?  sqlite asks: " in done.stdout and "Accept? [y/N]" in done.stdout, done.stdout
    with sqlite3.connect(database) as db:
        count = db.execute("select count(*) from authors where name = 'Ann'").fetchone()[0]
    assert count == int(written), (done.stdout, model.requests[-1][1]["messages"][-1])
    result = model.requests[-1][1]["messages"][-1]["content"]
    assert ("declined the change" in result) is not written


def test_ask_without_a_terminal_declines_a_servers_question(database: Path) -> None:
    insert = call("execute", {"sql": "INSERT INTO authors (name, country) VALUES ('Ann', 'IE')"})
    with StandInModel([insert, {"text": "Nothing was written."}]) as model:
        done = run(model, "ask", "add Ann", "--yes", "--server", server(database, "--allow-write"))
    assert done.returncode == 0 and done.stdout == "Nothing was written.\n"
    assert "sqlite asked the user (" in done.stderr and "declined: there is no terminal" in done.stderr
    with sqlite3.connect(database) as db:
        assert db.execute("select count(*) from authors where name = 'Ann'").fetchone()[0] == 0


def test_system_prompt_file_replaces_the_prompt(database: Path, tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You answer in French.\n\n{tools}\n", encoding="utf-8")
    with StandInModel([{"text": "Bonjour."}]) as model:
        done = run(model, "ask", "hi", "--server", server(database), "--system-prompt", str(prompt))
        missing = run(model, "ask", "hi", "--server", server(database), "--system-prompt", str(tmp_path / "nope"))
    assert done.stdout == "Bonjour.\n"
    system = model.requests[0][1]["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You answer in French.\n\n")
    assert "\ndescribe_table: " in system["content"] and "Rules for calling tools" not in system["content"]
    assert missing.returncode == 2 and "nope" in missing.stderr


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-repairs", "-1"], "--max-repairs must be at least 0, not -1"),
        (["--max-rounds", "0"], "--max-rounds must be at least 1, not 0"),
        (["--turn-timeout", "0"], "the turn timeout must be positive"),
        (["--option", "temperature"], "--option takes KEY=VALUE, not 'temperature'"),
    ],
)
def test_wrong_values_are_usage_errors(database: Path, flags: list[str], message: str) -> None:
    with StandInModel([]) as model:
        done = run(model, "ask", "q", "--server", server(database), *flags)
    assert (done.returncode, done.stderr.strip()) == (2, f"plainmcp-bridge: {message}")
