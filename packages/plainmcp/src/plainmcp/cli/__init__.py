"""The ``plainmcp`` command: look at, talk to, watch and configure MCP servers.

- ``inspect TARGET``: a server's info, capabilities, tools, resources and prompts (``--json``).
- ``call TARGET TOOL``, ``read TARGET URI``, ``prompt TARGET NAME``: one operation.
- ``tap -- COMMAND``: a transparent stdio proxy that records the exchange.
- ``config SERVER --client ...``: the snippet for Claude Desktop, Cursor or VS Code.
- ``demo``: a short scripted session with each installed server.
- ``app TARGET TOOL``: a local page showing a tool's MCP Apps view, as a host would.
- ``auth login|status|logout [URL]``: OAuth logins to remote servers (tokens in a file of the user's own).

One module per command; each offers ``add_parser(commands)`` and a ``main(args) -> int``. The
modules import their heavy parts (anyio, the client, httpx) only when they run, so ``tap`` starts
as fast as Python does.
"""

from __future__ import annotations

import argparse
import sys

from .run import EXIT_CODES, USAGE
from .targets import split_command_tail


def parser() -> argparse.ArgumentParser:
    # Imported here, not at the top: ``python -m plainmcp.cli.scene`` (a demo scene, in a server's
    # Python) imports this package, and needs none of the commands.
    from .. import __version__
    from . import app, auth, call, config, demo, inspect, tap

    top = argparse.ArgumentParser(
        prog="plainmcp",
        description="Look at, talk to, watch and configure MCP servers (any server: plainmcp's or not).",
        epilog="TARGET is a server command (quoted when it has spaces, or given after --) or an http(s) URL.\n"
        "Run 'plainmcp COMMAND --help' for a command's options.\n\n" + EXIT_CODES + "\n"
        "  (tap exits with the server's own code)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument("--version", action="version", version=f"plainmcp {__version__}")
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    inspect.add_parser(commands)
    call.add_parsers(commands)
    tap.add_parser(commands)
    config.add_parser(commands)
    demo.add_parser(commands)
    auth.add_parser(commands)
    app.add_parser(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit code."""
    words, tail = split_command_tail(sys.argv[1:] if argv is None else argv)
    try:
        args = parser().parse_args(words)
    except SystemExit as exit_:  # --help, --version and usage errors
        return exit_.code if isinstance(exit_.code, int) else USAGE
    args.command_tail = tail
    return args.run(args)
