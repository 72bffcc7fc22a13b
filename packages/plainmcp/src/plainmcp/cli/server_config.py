"""``plainmcp-<name> config --client CLIENT [-- SERVER_ARG ...]``: a server prints its own snippet.

Every server built on :func:`plainmcp.run_server_command` has this subcommand, so a server installed
alone (``pipx install``, which does not bring the ``plainmcp`` command) still prints a snippet that
works as pasted. It is ``plainmcp config`` (:mod:`.config`, the same options, checks and formats)
with two differences: the command is the running executable itself, by its absolute path, and the
server's path options are read from its own parser instead of a ``--help`` run in a subprocess.
"""

from __future__ import annotations

import argparse
import os
import sys

from . import config
from .server_args import parse_usage
from .targets import split_command_tail


def running_command() -> list[str]:
    """The command that started this process, absolute: ``python -m package`` when run so, else the
    console script (``sys.argv[0]``) made absolute. A pipx link in ``~/.local/bin`` is kept as a link:
    it survives a ``pipx reinstall``, the venv's own path does too, and the link is the path users know."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name:
        return [sys.executable, "-m", spec.name.removesuffix(".__main__")]
    return [os.path.abspath(sys.argv[0])]


def main(server: argparse.ArgumentParser, argv: list[str]) -> int:
    """Run ``<server> config`` with ``argv`` (the words after ``config``); returns the exit code."""
    parser = argparse.ArgumentParser(
        prog=f"{server.prog} config",
        description=f"Print the snippet that starts {server.prog} from an MCP client's configuration, with the "
        "absolute path of this executable. Arguments after -- are the server's own (path arguments are made "
        "absolute).",
        usage=f"{server.prog} config --client CLIENT [options] [-- SERVER_ARG ...]",
        epilog="examples:\n"
        f"  {server.prog} config --client claude -- SERVER_ARG ...\n"
        f"  {server.prog} config --client claude-code\n"
        f"  {server.prog} config --client vscode --as link\n\n" + config.CONFIG_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    config.add_options(parser)
    words, tail = split_command_tail(argv)
    try:
        args = parser.parse_args(words)
    except SystemExit as exit_:  # --help and usage errors
        return exit_.code if isinstance(exit_.code, int) else config.USAGE
    args.server = server.prog
    args.command_tail = tail
    command = running_command()
    usage = parse_usage(server.format_help())
    print(f"{server.prog} config: using {' '.join(command)}", file=sys.stderr)
    return config.emit(args, lambda: config.build(args, command=command, usage=usage), prog=server.prog)
