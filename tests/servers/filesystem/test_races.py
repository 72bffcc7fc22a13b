"""A hostile neighbour: another process swaps a directory inside the root for a link to the outside,
in a tight loop, while every tool and resource runs against paths below it.

The outside directory mirrors the names inside, so any call that followed the link would read,
list, write, edit, create, move, copy or delete something there. Nothing outside may change, and
its canary may never appear in a result.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from plainmcp import MCPError, Server
from plainmcp.testing import connect_in_memory

from .conftest import SECRET, Tree

pytestmark = pytest.mark.anyio

ROUNDS = 25

# The swapper: "work" is a directory and "decoy" a link to the outside; it exchanges the two names
# atomically (renameat2 RENAME_EXCHANGE, as a real attacker would: "work" never goes missing, it is
# the directory half the time and the link the other half), as fast as it can until it is
# terminated, and then says how many exchanges it made.
SWAPPER = r"""
import ctypes, os, signal, sys
root, outside = sys.argv[1], sys.argv[2]
os.chdir(root)
os.symlink(outside, "decoy")
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
swaps = 0
def stop(*_):
    sys.stdout.write(str(swaps)); sys.stdout.flush(); os._exit(0)
signal.signal(signal.SIGTERM, stop)
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    if libc.renameat2(AT_FDCWD, b"work", AT_FDCWD, b"decoy", RENAME_EXCHANGE) == 0:
        swaps += 1
"""


def make_tree(tree: Tree) -> None:
    """``work/`` inside and the outside directory hold the same names; only the outside has the canary."""
    for base, text in ((tree.root / "work", "inside text\n"), (tree.outside, SECRET + "\n")):
        (base / "deep").mkdir(parents=True, exist_ok=True)
        for name in ("target.txt", "movable.txt", "deep/target.txt"):
            (base / name).write_text(text)
        (base / "image.png").write_bytes(b"\x89PNG" + text.encode())


def snapshot(directory: Path) -> dict[str, bytes | None]:
    found: dict[str, bytes | None] = {}
    for parent, dirs, files in os.walk(directory):
        for name in dirs:
            found[os.path.join(parent, name)] = None
        for name in files:
            found[os.path.join(parent, name)] = Path(parent, name).read_bytes()
    return found


def calls(round_number: int, tree: Tree) -> Iterator[tuple[str, Any]]:
    uri = (tree.root / "work" / "target.txt").as_uri()
    yield "read_text_file", {"path": "work/target.txt"}
    yield "read_text_file", {"path": "work/deep/target.txt", "tail": 1}
    yield "read_multiple_files", {"paths": ["work/target.txt", "work/deep/target.txt"]}
    yield "read_media_file", {"path": "work/image.png"}
    yield "list_directory", {"path": "work", "sizes": True}
    yield "directory_tree", {"path": "work"}
    yield "search_files", {"path": "work", "pattern": "*target*"}
    yield "search_content", {"path": "work", "query": SECRET[:8]}
    if round_number % 5 == 0:  # a worker process each time: a few rounds are enough
        yield "search_content", {"path": ".", "query": "TOP-SECRET", "regex": True}
    yield "get_file_info", {"path": "work/target.txt"}
    yield "write_file", {"path": f"work/new{round_number}.txt", "content": "pwned"}
    yield "write_file", {"path": "work/target.txt", "content": "rewritten"}
    yield "append_file", {"path": "work/deep/target.txt", "content": "appended"}
    yield "edit_file", {"path": "work/deep/target.txt", "edits": [{"oldText": "text", "newText": "edited"}]}
    yield "create_directory", {"path": f"work/dir{round_number}/a"}
    yield "move_file", {"source": "work/movable.txt", "destination": f"work/moved{round_number}.txt"}
    yield "move_file", {"source": f"work/moved{round_number}.txt", "destination": "work/movable.txt"}
    yield "copy_file", {"source": "work/deep", "destination": f"work/copy{round_number}"}
    yield "copy_file", {"source": "work/image.png", "destination": f"work/copy{round_number}.png"}
    yield "delete_file", {"path": f"work/copy{round_number}", "recursive": True}
    yield "delete_file", {"path": "work/image.png"}
    yield "write_file", {"path": "work/image.png", "content": "restored"}
    yield "resources/read", uri
    yield "resources/read", (tree.root / "work").as_uri()
    yield "resources/list", None


async def test_race_a_directory_swapped_for_a_link_never_leads_outside(
    make_server: Callable[..., Server], tree: Tree
) -> None:
    make_tree(tree)
    before = snapshot(tree.outside)
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(tree.root), str(tree.outside)], stdout=subprocess.PIPE, text=True
    )
    results = 0
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == "ready\n"
        async with connect_in_memory(make_server(allow_write=True, allow_delete=True)) as client:
            for round_number in range(ROUNDS):
                for name, arguments in calls(round_number, tree):
                    try:
                        if name == "resources/read":
                            answer: Any = await client.read_resource(arguments)
                        elif name == "resources/list":
                            answer = await client.list_all_resources()
                        else:
                            answer = await client.call_tool(name, arguments)
                    except MCPError as error:
                        answer = (error.code, error.message, error.data)
                        assert error.code != -32603, (name, error.message)
                    assert SECRET not in str(answer), (name, arguments)
                    assert str(tree.outside) not in str(answer), (name, arguments)
                    results += 1
    finally:
        swapper.terminate()
        swaps = int(swapper.communicate(timeout=10)[0] or 0)
    assert results == sum(len(list(calls(number, tree))) for number in range(ROUNDS))
    assert swaps > ROUNDS, "the swapper did not run while the tools did"
    assert snapshot(tree.outside) == before
