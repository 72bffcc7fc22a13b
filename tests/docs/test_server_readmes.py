"""Server README blocks that need a little set-up: prompt files to serve, a stand-in to start first."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import anyio
import pytest
from plainmcp import connect_stdio

from .readme import ROOT, blocks
from .user_env import UserEnv, stdio_handshake


@pytest.mark.anyio
async def test_prompt_file_examples_are_served(user: UserEnv, tmp_path: Path) -> None:
    """Each example prompt file of the prompts formats page, saved in a library directory, is served and renders."""
    examples = [block for block in blocks(ROOT / "servers/prompts/docs/formats.md") if block.language == "markdown"]
    assert len(examples) == 2
    library = tmp_path / "library"
    library.mkdir()
    (library / "review.md").write_text(examples[0].text)
    (library / "schema-question.md").write_text(examples[1].text)
    command = [user.which("plainmcp-prompts"), "--dir", str(library), "--no-bundled"]
    with anyio.fail_after(30):
        async with connect_stdio(command, env=user.env, cwd=str(user.work)) as client:
            prompts = {prompt["name"]: prompt for prompt in await client.list_all_prompts()}
            assert prompts["review"]["title"] == "Code review"
            assert [argument["name"] for argument in prompts["review"]["arguments"]] == ["code", "focus", "language"]
            review = await client.get_prompt("review", {"code": "x = 1", "language": "python"})
            assert (
                review["messages"][0]["content"]["text"] == "Review this python code, focusing on everything:\n\nx = 1"
            )
            turns = await client.get_prompt("schema-question", {"schema": "t(a)", "question": "how many?"})
            assert [message["role"] for message in turns["messages"]] == ["user", "assistant", "user"]
            assert turns["messages"][2]["content"]["text"].strip() == "how many?"


@pytest.mark.anyio
async def test_weather_standin_lines_serve_the_stand_ins_weather(user: UserEnv) -> None:
    """The stand-in's two lines: the first starts it in the background, the second starts the weather server on it
    (the test swaps the README's port 8765 for a free one), and a forecast comes from the stand-in."""
    block = next(
        block for block in blocks(ROOT / "servers/weather/docs/standin.md") if "plainmcp-weather-standin" in block.text
    )
    start_standin, start_server = block.commands()
    port = _free_port()
    start_standin = start_standin.replace("8765", str(port)).rstrip(" &")
    start_server = start_server.replace("8765", str(port))
    standin = subprocess.Popen(
        ["bash", "-c", f"exec {start_standin}"],
        cwd=user.work,
        env=user.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port)
        with anyio.fail_after(30):
            async with connect_stdio(
                ["bash", "-c", f"exec {start_server}"], env=user.env, cwd=str(user.work)
            ) as client:
                result = await client.call_tool("get_forecast", {"location": "Tokyo", "days": 2})
        assert not result.get("isError"), result
        assert re.search(r"Tokyo", result["content"][0]["text"])
    finally:
        standin.terminate()
        standin.wait(timeout=5)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int) -> None:
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def test_tap_in_a_client_config_records_the_exchange(user: UserEnv) -> None:
    """The core README's Claude Desktop entry with `plainmcp tap` in front of the server: the test puts this user's
    absolute paths where the README shows /home/me's, starts it as Claude Desktop would, and reads the log."""
    block = next(block for block in blocks(ROOT / "packages/plainmcp/README.md") if '"tap", "--log"' in block.text)
    text = (
        block.text.replace('"/tmp/', f'"{user.home}/tmp/')
        .replace("/home/me/.local/bin/", f"{user.bin_dir}/")
        .replace("/home/me/", f"{user.home}/")
    )
    entry = json.loads(text)["mcpServers"]["sqlite"]
    answered = stdio_handshake([entry["command"], *entry["args"]], env=user.env, cwd=Path("/"))
    assert answered["initialize"]["serverInfo"]["name"] == "plainmcp-sqlite"
    log = [json.loads(line) for line in (user.home / "tmp" / "sqlite-tap.jsonl").read_text().splitlines()]
    methods = [record["message"].get("method") for record in log if record.get("direction") == "client->server"]
    assert methods[:3] == ["initialize", "notifications/initialized", "tools/list"]
