"""``plainmcp demo``: a short scripted session with each server, printing what happens.

The scenes live in :mod:`plainmcp.cli.scenes` (imported when the demo runs: they need the client).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def add_parser(commands: Any) -> None:
    commands.add_parser(
        "demo",
        help="run a short scripted session with each installed server",
        description="Start each server on its embedded default and run a short scripted session with it, "
        "printing every request and what came back.",
    ).set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    print("plainmcp demo: a scripted session with each server, on embedded defaults")
    import anyio

    from . import scenes

    anyio.run(scenes.demo_notes, sys.executable)
    anyio.run(scenes.demo_everything_http, sys.executable)
    print("\nEvery line above is a real request to a real server process.")
    return 0
