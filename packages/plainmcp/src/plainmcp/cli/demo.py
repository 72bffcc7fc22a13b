"""``plainmcp demo``: a short scripted session with each server, printing what happens.

The scenes live in :mod:`plainmcp.cli.scenes` (imported when the demo runs: they need the client).
Each server is found where users install it (:mod:`plainmcp.cli.locate`) and the scene says which
one it runs. A server found nowhere is not silently left out: its scene is replaced by a note with
the install line, and the demo exits with 1 unless ``--skip-missing`` says that is fine.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from typing import Any

#: The scenes by name, in the order they play: the core's notes example, then the servers.
SCENES = ("notes", "filesystem", "sqlite", "prompts", "weather", "everything")


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "demo",
        help="run a short scripted session with each installed server",
        description="Start each server on its embedded default and run a short scripted session with it, "
        "printing every request and what came back. Each server is looked for in this environment, on PATH, "
        "in pipx's venvs and in uv's tools; each scene says which one it runs.",
        epilog="exit codes:\n  0  every scene ran\n  1  a scene failed, or a server is not installed "
        "(without --skip-missing)\n  2  usage error",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("scenes", nargs="*", metavar="SCENE",
                        help="play only these: " + ", ".join(SCENES) + " (default: all)")
    parser.add_argument("--skip-missing", action="store_true",
                        help="a server that is not installed is skipped with a note, and the exit code stays 0")
    parser.set_defaults(run=main)


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
    """Play the scenes; a scene that fails says why in one line and makes the exit code 1, and so
    does a server that is not installed unless ``--skip-missing``."""
    import anyio

    from . import scenes
    from .locate import Missing, locate
    from .run import USAGE, fail

    unknown = [name for name in args.scenes if name not in SCENES]
    if unknown:
        fail(f"unknown scene {', '.join(unknown)}: choose from {', '.join(SCENES)}")
        return USAGE
    chosen = args.scenes or SCENES
    started = time.perf_counter()
    print("plainmcp demo: a scripted session with each server, on embedded defaults")
    plays: list[tuple[str, Any]] = []
    if "notes" in chosen:
        plays.append(("notes example", functools.partial(scenes.demo_notes, sys.executable)))
    missing = []
    for name, scene in scenes.SERVER_SCENES:
        if name not in chosen:
            continue
        found = locate(name)
        if isinstance(found, Missing):
            missing.append(name)
            plays.append((name, functools.partial(_not_installed, found)))
        else:
            plays.append((name, functools.partial(scene, found)))
    failed = []
    stderr = _keep_server_stderr()
    for name, play in plays:
        stderr.lines.clear()
        try:
            anyio.run(play)
        except Exception as error:  # one broken server must not hide the others
            failed.append(name)
            print(f"  {name} scene failed: {scenes.describe(error)}")
            if stderr.lines:
                print(f"  the server's last words on stderr: {stderr.lines[-1]}")
    print(f"\nEvery line above is a real request to a real server process ({time.perf_counter() - started:.1f} s).")
    sys.stdout.flush()  # the summary below comes after the scenes, also when both go to one pipe
    code = 0
    if failed:
        print("Failed scenes: " + ", ".join(failed), file=sys.stderr)
        code = 1
    if missing:
        print(f"Not installed, so not shown: {', '.join(missing)} (install lines above; --skip-missing to "
              "accept that)", file=sys.stderr)
        code = code or (0 if args.skip_missing else 1)
    return code


async def _not_installed(missing: Any) -> None:
    print(f"\n== {missing.server} server: not installed, skipped")
    print(f"  looked in: {'; '.join(missing.looked)}")
    for line in missing.install_lines():
        print(f"  install it with: {line}")
