"""A folder of the library swapped for a link to the outside, again and again, by a real second
process, while the server renders prompts that embed a file of it and rescans the library (issue 15,
Medium): outside content never reaches a render or the prompt list."""

from __future__ import annotations

import subprocess
import sys

import pytest
from plainmcp import MCPError
from plainmcp.testing import connect_in_memory
from plainmcp_prompts.library import digest

from .support import server_and_deps, server_over, write

CANARY = "CANARY-outside-the-library"
#: Renders and rescans run while the folder is swapped.
RENDERS = 2000
SCANS = 1000

# Swap ``lib/snips`` (a folder) for a link to ``outside`` and back until the stop file appears
# (at most a bounded number of rounds, should the test die first).
SWAPPER = """
import os, sys, time
lib, outside, stop = sys.argv[1:4]
folder, parked = os.path.join(lib, "snips"), os.path.join(lib, ".parked")
for round in range(2_000_000):
    if os.path.exists(stop):
        break
    os.rename(folder, parked)
    os.symlink(outside, folder)
    os.unlink(folder)
    os.rename(parked, folder)
    time.sleep(0.0002)  # the folder is itself a little longer: reads from inside succeed too
    if round == 0:
        print("swapping", flush=True)
"""


@pytest.fixture
def library(tmp_path):
    lib, outside = tmp_path / "lib", tmp_path / "outside"
    write(lib, "snips/text.txt", "inside text")
    write(lib, "snips/note.md", "A note from inside")
    write(lib, "render.md", "Start\n\n{{> snips/text.txt}}\n")
    write(outside, "text.txt", CANARY)
    write(outside, "note.md", CANARY)
    write(outside, "secret.md", CANARY)
    return lib


@pytest.fixture
def swapping(library, tmp_path):
    """A function that starts the swapper, once the server has read the library undisturbed, and
    returns when it is swapping."""
    stop = tmp_path / "stop"
    started: list[subprocess.Popen[str]] = []

    def start() -> None:
        swapper = subprocess.Popen(
            [sys.executable, "-c", SWAPPER, str(library), str(library.parent / "outside"), str(stop)],
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(swapper)
        assert swapper.stdout is not None
        assert swapper.stdout.readline() == "swapping\n"

    yield start
    stop.touch()
    for swapper in started:
        try:
            swapper.wait(10)
        except subprocess.TimeoutExpired:
            swapper.kill()
            swapper.wait(5)
        assert swapper.stdout is not None
        swapper.stdout.close()


@pytest.mark.anyio
async def test_renders_never_embed_outside_content_while_the_folder_is_swapped(library, swapping):
    server = server_over(library)
    outcomes = {"rendered": 0, "refused": 0}
    async with connect_in_memory(server) as client:
        swapping()
        for _ in range(RENDERS):
            try:
                result = await client.get_prompt("render")
            except MCPError as error:
                assert CANARY not in error.message
                assert str(library) not in error.message  # no host path either
                outcomes["refused"] += 1
                continue
            texts = [m["content"]["resource"]["text"] for m in result["messages"] if m["content"]["type"] == "resource"]
            assert CANARY not in repr(result)
            assert texts == ["inside text"]
            outcomes["rendered"] += 1
    # Both sides of the race happened: the test did attack.
    assert outcomes["rendered"] > 0 and outcomes["refused"] > 0, outcomes


def test_rescans_never_serve_outside_files_while_the_folder_is_swapped(library, swapping):
    prompts = server_and_deps(library)[1].library
    swapping()
    seen_note = 0
    for _ in range(SCANS):
        prompts.scan()
        assert "secret" not in prompts.prompts
        for spec in prompts.prompts.values():
            assert CANARY not in spec.source
        assert digest(CANARY) not in prompts.embedded.values()
        seen_note += "note" in prompts.prompts
    assert seen_note > 0
