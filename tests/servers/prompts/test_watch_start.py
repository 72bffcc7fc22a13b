"""No change is lost while the watcher starts: real server processes over stdio, real files, real watchfiles.

The library is read as serving starts; watchfiles is imported and its watch registered after that (off the
first answer's path). A prompt file written in between, right after the server answered ``initialize`` and
before any list, must still reach the client: a ``list_changed`` notification, then in ``prompts/list``.
Each wait is bounded; nothing asserts how fast it comes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio

from .support import GREETING, stdio_command, write

pytestmark = pytest.mark.anyio

PROMPTS_CHANGED = "notifications/prompts/list_changed"
#: The longest a round waits for the notification.
WAIT = 5.0
ROUNDS = 10


async def write_right_after_start(directory: Path, name: str) -> str | None:
    """A fresh server over ``directory``; ``name``.md written as soon as it answered ``initialize``.
    What went wrong, or None when the client was told and the prompt is listed."""
    received: list[str] = []

    def inbox(notification: Any) -> None:
        received.append(notification.method)

    async with connect_stdio(stdio_command(directory), on_notification=inbox) as client:
        write(directory, f"{name}.md", f"Fresh prompt {name}")
        with anyio.move_on_after(WAIT):
            while PROMPTS_CHANGED not in received:
                await anyio.sleep(0.02)
        names = {prompt["name"] for prompt in (await client.request("prompts/list", {}))["prompts"]}
    if PROMPTS_CHANGED not in received:
        return f"{name}: no {PROMPTS_CHANGED} within {WAIT} s (listed: {name in names})"
    if name not in names:
        return f"{name}: told, but not listed"
    return None


async def test_watch_start_a_prompt_written_right_after_initialize_is_notified_and_listed(tmp_path: Path) -> None:
    problems: list[str] = []
    with anyio.fail_after(ROUNDS * (WAIT + 15)):
        for round_ in range(ROUNDS):
            directory = tmp_path / f"round{round_}"
            write(directory, "greet.md", GREETING)
            problem = await write_right_after_start(directory, f"fresh{round_}")
            if problem is not None:
                problems.append(problem)
    assert problems == [], f"{len(problems)} of {ROUNDS} prompts written while the watcher started were lost"
