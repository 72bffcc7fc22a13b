"""The bridge README's transcript and example output are what the code prints (the README names these tests)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import plainmcp_sqlite
from plainmcp_bridge.standin import StandInModel

from ..docs.readme import ROOT, blocks

README = ROOT / "packages" / "plainmcp-bridge" / "README.md"
DOCS = ROOT / "packages" / "plainmcp-bridge" / "docs" / "interceptor.md"  # the README links it
SAMPLE = Path(plainmcp_sqlite.__file__).parent / "sample" / "sample.db"


def _block(test: str) -> str:
    (block,) = [b for b in blocks(README) + blocks(DOCS) if b.detail == f"tests/bridge/test_readme.py::{test}"]
    return block.text


def test_readme_transcript_is_what_the_chat_prints() -> None:
    shown = _block("test_readme_transcript_is_what_the_chat_prints").splitlines()
    typed = [line[2:] for line in shown if line.startswith("> ")]
    answer = shown[shown.index("> /counts") - 1]
    script = [
        {"calls": [{"name": "describe_table", "arguments": {"table": 5}}]},
        {"calls": [{"name": "describe_table", "arguments": {"table": "books"}}]},
        {"text": answer},
    ]
    with StandInModel(script) as model:
        done = subprocess.run(
            [sys.executable, "-m", "plainmcp_bridge", "chat", "--server", f"{sys.executable} -m plainmcp_sqlite"],
            input="".join(f"{line}\n" for line in typed),
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PLAINMCP_BRIDGE_BASE_URL": model.url},
        )
    assert done.returncode == 0, done.stderr
    # Without a terminal the typed lines are not echoed: the prompt "> " runs into the next output.
    printed = [line.removeprefix("> ") for line in done.stdout.splitlines() if line.removeprefix("> ")]
    expected = [line for line in shown if not line.startswith("> ")]
    # The tool count too: a README saying "4 tools" where the server lists 6 was issue 27's stale text.
    assert printed[: len(expected)] == expected


def test_readme_interceptor_example_prints_what_it_shows() -> None:
    (code,) = [b.text for b in blocks(DOCS) if b.kind == "python"]
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compile(code, str(README), "exec"), {})
    assert output.getvalue().strip() == _block("test_readme_interceptor_example_prints_what_it_shows").strip()
