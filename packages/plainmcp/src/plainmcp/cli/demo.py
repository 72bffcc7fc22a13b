"""``plainmcp demo``: a short scripted session with each server, printing what happens.

The core names no server. The scenes are the servers' own: each registers one under the
``plainmcp.scenes`` entry-point group, :mod:`.discover` finds the installed ones (this environment,
PATH, pipx's and uv's venvs) and each plays in the server's own interpreter: in this process when
that is this Python, else ``<server python> -m plainmcp.cli.scene NAME``, its output streamed as it
comes. The notes example is the core's, and plays first, in this process (:mod:`.scenes`).

A server asked for and found nowhere is not silently left out: its scene is replaced by a note with
the install line, and the demo exits with 1 unless ``--skip-missing`` says that is fine. When the
core runs from a checkout (or was installed from one), every server of the checkout that registers
a scene is expected, so a plain ``plainmcp demo`` reports the ones not installed too.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .discover import Installed
    from .locate import Missing

#: The core's own scene, which plays first.
NOTES = "notes"
#: Upper bound for one server's scene, its start included (the weather stand-in, an HTTP server).
SCENE_TIMEOUT = 300


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "demo",
        help="run a short scripted session with each installed server",
        description="Start each installed server that offers a demo scene on its embedded default and run a "
        "short scripted session with it, printing every request and what came back. Servers are looked for in "
        "this environment, on PATH, in pipx's venvs and in uv's tools; each scene says which one it runs.",
        epilog="exit codes:\n  0  every scene ran\n  1  a scene failed, or a server is not installed "
        "(without --skip-missing)\n  2  usage error",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "scenes",
        nargs="*",
        metavar="SCENE",
        help=f"play only these: {NOTES} (the core's example) or a server's scene name, "
        "such as its name without the plainmcp- prefix (default: all)",
    )
    parser.add_argument(
        "--skip-missing",
        action="store_true",
        help="a server that is not installed is skipped with a note, and the exit code stays 0",
    )
    parser.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    """Play the scenes; a scene that fails says why in one line and makes the exit code 1, and so
    does a server that is not installed unless ``--skip-missing``."""
    from .discover import discover
    from .locate import Missing, checkout_root
    from .run import USAGE, fail

    installed, looked = discover()
    found = {item.scene: item for item in installed}
    checkout = checkout_root()
    expected = checkout_scenes(checkout) if checkout is not None else set()
    wanted = list(dict.fromkeys(args.scenes)) or [NOTES, *sorted(set(found) | expected)]
    # Asked for by name, found nowhere and not a server of the checkout: a name nobody offers. (Without a
    # checkout there is no telling, so such a name is reported as not installed, with the PyPI line.)
    unknown = [
        name for name in wanted if name != NOTES and name not in found and checkout is not None and name not in expected
    ]
    if unknown:
        offered = [NOTES, *sorted(set(found) | expected)]
        fail(f"unknown scene {', '.join(unknown)}: choose from {', '.join(offered)}")
        return USAGE
    started = time.perf_counter()
    print("plainmcp demo: a scripted session with each server, on embedded defaults")
    failed, missing = [], []
    for name in wanted:
        if name in found:
            ok = _play_server(found[name])
        elif name == NOTES:
            ok = _play_notes()
        else:
            missing.append(name)
            ok = True
            _not_installed(Missing(name, looked, checkout if name in expected else None))
        if not ok:
            failed.append(name)
    print(f"\nEvery line above is a real request to a real server process ({time.perf_counter() - started:.1f} s).")
    sys.stdout.flush()  # the summary below comes after the scenes, also when both go to one pipe
    code = 0
    if failed:
        print("Failed scenes: " + ", ".join(failed), file=sys.stderr)
        code = 1
    if missing:
        print(
            f"Not installed, so not shown: {', '.join(missing)} (install lines above; --skip-missing to accept that)",
            file=sys.stderr,
        )
        code = code or (0 if args.skip_missing else 1)
    return code


def checkout_scenes(checkout: Path) -> set[str]:
    """The scene names the checkout's servers register (``servers/*/pyproject.toml``)."""
    import tomllib

    from .scene import GROUP

    names: set[str] = set()
    for pyproject in sorted((checkout / "servers").glob("*/pyproject.toml")):
        try:
            project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        except (OSError, ValueError):
            continue
        names.update(project.get("entry-points", {}).get(GROUP, {}))
    return names


def _play_notes() -> bool:
    from .scene import play
    from .scenes import demo_notes

    return play("notes example", lambda _stage: demo_notes(sys.executable), None)


def _play_server(installed: Installed) -> bool:
    """Play a server's scene in the server's own interpreter: this one when the server is installed
    here (no second interpreter to start), else a child process whose stdout goes straight to ours."""
    from .scene import PLAYED, SCENE_FAILED, describe, load, play

    name, found = installed.scene, installed.found
    if found.python == sys.executable:
        from ..demo import Stage

        try:
            scene = load(name)
        except Exception as error:  # a broken installation: its entry point does not import
            _header(installed)
            print(f"  {name} scene failed: it does not load: {describe(error)}")
            return False
        return play(name, scene, Stage(name, found.command, installed.using()))
    if found.python is None:
        _header(installed)
        print(f"  {name} scene failed: cannot tell which Python runs {found.command[0]}, so its scene cannot play")
        return False
    sys.stdout.flush()  # what we printed comes before what the scene prints
    command = [found.python, "-m", "plainmcp.cli.scene", name, "--using", installed.using(), "--", *found.command]
    try:
        ran = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            timeout=SCENE_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        print(f"  {name} scene failed: no end within {SCENE_TIMEOUT} s")
        return False
    if ran.returncode not in (PLAYED, SCENE_FAILED):
        # It did not get to play: the server's Python lacks this core's scene runner, or the scene.
        last = ran.stderr.strip().splitlines()[-1:] or [f"exit code {ran.returncode}"]
        _header(installed)
        print(f"  {name} scene failed: {last[0]}")
        return False
    sys.stderr.write(ran.stderr)  # anything the scene wrote on stderr is the user's to see
    return ran.returncode == PLAYED


def _header(installed: Installed) -> None:
    print(f"\n== {installed.scene} server")
    print(f"  using {installed.using()}")


def _not_installed(missing: Missing) -> None:
    print(f"\n== {missing.server} server: not installed, skipped")
    print(f"  looked in: {'; '.join(missing.looked)}")
    for line in missing.install_lines():
        print(f"  install it with: {line}")
