"""Start-up of a real server process: ``build_server`` reads nothing, the library is read as serving
starts, before the first request is taken, and with the logging the command line asked for."""

from __future__ import annotations

import json
import subprocess

from .support import GREETING, MODERN, stdio_command, write

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "start-up-test", "version": "1"},
}


def run(argv: list[str], *messages: dict) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``messages`` already written to its input (then closed)."""
    lines = "".join(json.dumps(message) + "\n" for message in messages)
    return subprocess.run(argv, input=lines, capture_output=True, text=True, timeout=30)


def test_a_first_request_waiting_in_the_input_already_sees_every_prompt(tmp_path):
    write(tmp_path, "greet.md", GREETING)
    write(tmp_path, "plain.md", "Plain text")
    # 2026-07-28: no handshake, so the very first message asks for the prompts, before the server runs.
    done = run(
        [*stdio_command(tmp_path), "--no-watch"],
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": MODERN_META}},
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert [prompt["name"] for prompt in answer["result"]["prompts"]] == ["greet", "plain"]


def test_the_first_scans_warnings_are_logged_in_the_chosen_format(tmp_path):
    write(tmp_path, "greet.md", GREETING)
    write(tmp_path, "broken.md", "---\narguments: [who\n---\nBroken {{who}}")
    done = run(
        [*stdio_command(tmp_path), "--no-watch", "--log-format", "json"],
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/list", "params": {"_meta": MODERN_META}},
    )
    assert done.returncode == 0, done.stderr
    entries = [json.loads(line) for line in done.stderr.splitlines()]  # every line is JSON
    about_broken = [entry for entry in entries if "broken.md" in entry["message"]]
    assert len(about_broken) == 1
    assert (about_broken[0]["level"], about_broken[0]["logger"]) == ("warning", "plainmcp_prompts.library")
    assert [prompt["name"] for prompt in json.loads(done.stdout.splitlines()[0])["result"]["prompts"]] == ["greet"]
