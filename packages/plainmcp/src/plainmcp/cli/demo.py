"""``plainmcp demo``: a short scripted session with each server, printing what happens.

The scenes live in :mod:`plainmcp.cli.scenes` (imported when the demo runs: they need the client).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any


def add_parser(commands: Any) -> None:
    commands.add_parser(
        "demo",
        help="run a short scripted session with each installed server",
        description="Start each server on its embedded default and run a short scripted session with it, "
        "printing every request and what came back.",
    ).set_defaults(run=main)


def _keep_server_stderr() -> Any:
    """The servers' stderr lines, kept (not shown) to explain a scene that fails."""
    import logging

    from .targets import ServerStderr

    kept = ServerStderr(lines=5)
    server_log = logging.getLogger("plainmcp.stdio.server")
    server_log.setLevel(logging.INFO)
    server_log.propagate = False
    server_log.addHandler(kept)
    return kept


def main(args: argparse.Namespace) -> int:
    """Play every scene; a server that is not installed is skipped with a note, and a scene that
    fails says why in one line and makes the exit code 1."""
    import anyio

    from . import scenes

    started = time.perf_counter()
    print("plainmcp demo: a scripted session with each server, on embedded defaults")
    plays: list[tuple[str, Any]] = [("notes example", scenes.demo_notes)]
    for name, scene in scenes.SERVER_SCENES:
        if scenes.installed(name):
            plays.append((name, scene))
        else:
            print(f"\n== {name} server: not installed, skipped (pipx install ./servers/{name})")
    plays.append(("everything", scenes.demo_everything_http))
    failed = []
    stderr = _keep_server_stderr()
    for name, scene in plays:
        stderr.lines.clear()
        try:
            anyio.run(scene, sys.executable)
        except Exception as error:  # one broken server must not hide the others
            failed.append(name)
            print(f"  {name} scene failed: {scenes.describe(error)}")
            if stderr.lines:
                print(f"  the server's last words on stderr: {stderr.lines[-1]}")
    print(f"\nEvery line above is a real request to a real server process ({time.perf_counter() - started:.1f} s).")
    if failed:
        print("Failed scenes: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0
