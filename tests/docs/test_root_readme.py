"""The root README's blocks, and those of the docs pages it links, that need more than running them: a server to
talk to, a client to call them."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

from .readme import ROOT, find_block
from .user_env import UserEnv


def test_ci_runs_the_readme_test_command() -> None:
    """CI runs `.ci/run` on a clean clone: it must run the README's test command, word for word."""
    quick_start = find_block(Path("README.md"), "python3 dev.py test")
    test_line = next(line for line in quick_start.commands() if "dev.py test" in line).split("#")[0].strip()
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(rf"^{re.escape(test_line)}$", ci, re.M), f".ci/run does not run {test_line!r}"


def test_quick_start_demo_runs() -> None:
    """`python3 dev.py demo`, word for word, in the checkout (the set-up is done by then: `dev.py test` did it first,
    so the demo starts at once)."""
    quick_start = find_block(Path("README.md"), "python3 dev.py demo")
    demo_line = next(line for line in quick_start.commands() if "dev.py demo" in line).split("#")[0].strip()
    result = subprocess.run(["bash", "-c", demo_line], cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "dev.py: setting up" not in result.stderr, "the set-up ran again: dev.py's fingerprint is unstable"
    assert "Every line above is a real request to a real server process" in result.stdout


@pytest.mark.anyio
async def test_writing_a_server_example_serves_notes(user: UserEnv) -> None:
    """The "Writing a server" code, saved as a file and started by a client, adds and serves a note."""
    code = find_block(Path("docs/writing-a-server.md"), 'Server("plainmcp-notes"').text
    script = user.work / "notes_server.py"
    script.write_text(code)
    with anyio.fail_after(30):
        async with connect_stdio([user.which("python"), str(script)], env=user.env, cwd=str(user.work)) as client:
            tools = {tool["name"]: tool for tool in await client.list_all_tools()}
            assert tools["add_note"]["description"] == "Write a note."
            result = await client.call_tool("add_note", {"title": "todo", "text": "ship it"})
            assert result["content"][0]["text"] == "Saved 'todo'."
            read = await client.read_resource("note://todo")
            assert read["contents"][0]["text"] == "ship it"
            bad = await client.call_tool("add_note", {"title": ""})
            assert bad["isError"] is True


def test_http_gateway_curl_example_answers_as_shown(user: UserEnv) -> None:
    """The gateway's curl lines, against plainmcp-everything over HTTP, print what the README says they print."""
    block = find_block(Path("docs/http.md"), "/mcp/call")
    expected = [line.lstrip("# ").strip() for line in block.text.splitlines() if line.startswith("# {")]
    assert expected, "the README shows the answer of the call"
    outputs = []
    for command in block.commands():
        result = subprocess.run(
            ["bash", "-c", user.as_in_test(command)],
            cwd=user.work,
            env=user.env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 0, result.stderr
        outputs.append(result.stdout.strip())
    assert '"tools"' in outputs[0]
    for line in expected:
        assert line in outputs, f"the README shows {line!r}; the server printed {outputs[1:]}"


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
async def test_input_example_asks_in_both_eras(user: UserEnv, era: str) -> None:
    """The `ctx.ask` example, added to the notes server above, books a table in both eras: by an
    `elicitation/create` request in the legacy era, by an `input_required` round in 2026-07-28."""
    server_code = find_block(Path("docs/writing-a-server.md"), 'Server("plainmcp-notes"').text
    ask_code = find_block(Path("docs/writing-a-server.md"), "from plainmcp import inputs").text
    head, main_guard, tail = server_code.partition('if __name__ == "__main__":')
    script = user.work / f"booking_{era}.py"
    script.write_text(head + ask_code + "\n" + main_guard + tail)
    asked = []

    async def elicitation(params: dict) -> dict:
        asked.append(params["message"])
        return {"action": "accept", "content": {"people": 4}}

    with anyio.fail_after(30):
        async with connect_stdio(
            [user.which("python"), str(script)],
            env=user.env,
            cwd=str(user.work),
            protocol_version=era,
            elicitation=elicitation,
        ) as client:
            result = await client.call_tool("book", {})
    assert result["content"][0]["text"] == "Booked for 4."
    assert asked == ["How many people?"]
