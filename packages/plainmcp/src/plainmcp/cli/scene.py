"""Play one server's demo scene in this interpreter: ``python -m plainmcp.cli.scene NAME --using TEXT -- COMMAND...``.

``plainmcp demo`` runs this with the *server's* Python (a pipx venv's, say), where the server's
package and its ``plainmcp.scenes`` entry point are importable, and streams its stdout. ``COMMAND``
starts the server as the demo found it; ``TEXT`` says which installation that is.

Exit codes: 0 the scene played; 3 the scene failed, said why on stdout (with the server's last
line on stderr when it wrote one); 2 no scene of that name here, or a usage error (on stderr).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Awaitable, Callable
from importlib import metadata
from typing import Any

#: The entry-point group a server registers its scene in.
GROUP = "plainmcp.scenes"
PLAYED, USAGE, SCENE_FAILED = 0, 2, 3


def load(name: str) -> Callable[[Any], Awaitable[None]]:
    """The scene registered as ``name`` in this interpreter. Raises LookupError when there is none."""
    for entry in metadata.entry_points(group=GROUP):
        if entry.name == name:
            scene: Callable[[Any], Awaitable[None]] = entry.load()
            return scene
    raise LookupError(f"no scene named {name!r} in this Python ({sys.executable}): no {GROUP} entry point")


def describe(error: BaseException) -> str:
    """One line for what broke a scene (the single error inside task groups' wrapping)."""
    from ..errors import MCPError

    while isinstance(error, BaseExceptionGroup) and len(error.exceptions) == 1:
        error = error.exceptions[0]
    if isinstance(error, MCPError):
        return f"{error.code}: {error.message}"
    return str(error) or type(error).__name__


def play(name: str, scene: Callable[[Any], Awaitable[None]], stage: Any) -> bool:
    """Play ``scene`` on ``stage``; on failure print why (and the server's last words on stderr, kept
    meanwhile instead of shown) and return False."""
    import anyio

    from .targets import ServerStderr

    kept = ServerStderr(lines=5)
    server_log = logging.getLogger("plainmcp.stdio.server")
    server_log.setLevel(logging.INFO)
    server_log.propagate = False
    server_log.addHandler(kept)
    try:
        anyio.run(scene, stage)
    except Exception as error:  # the demo goes on with the next scene; this one says what broke
        print(f"  {name} scene failed: {describe(error)}")
        if kept.lines:
            print(f"  the server's last words on stderr: {kept.lines[-1]}")
        return False
    finally:
        server_log.removeHandler(kept)
    return True


def main(argv: list[str] | None = None) -> int:
    from ..demo import Stage

    parser = argparse.ArgumentParser(prog="python -m plainmcp.cli.scene", description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the scene's entry-point name")
    parser.add_argument("--using", required=True, help="which installation COMMAND is (one line)")
    parser.add_argument("command", nargs="+", metavar="COMMAND", help="the command that starts the server")
    args = parser.parse_args(argv)
    try:
        scene = load(args.name)
    except LookupError as error:
        print(f"plainmcp demo: {error}", file=sys.stderr)
        return USAGE
    except Exception as error:  # a broken installation: its entry point does not import
        print(f"plainmcp demo: the scene {args.name!r} does not load here: {describe(error)}", file=sys.stderr)
        return USAGE
    stage = Stage(args.name, tuple(args.command), args.using)
    played = play(args.name, scene, stage)
    sys.stdout.flush()
    return PLAYED if played else SCENE_FAILED


if __name__ == "__main__":
    sys.exit(main())
