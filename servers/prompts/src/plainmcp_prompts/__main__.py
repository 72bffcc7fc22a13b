"""``plainmcp-prompts``: serve a prompt library kept as Markdown files (stdio by default; see ``--help``)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from plainmcp.command_line import env_option, env_switch, serve, server_arguments, setup_logging

from .config import Config
from .server import VERSION, build_server

ENV = "PLAINMCP_PROMPTS"


class _Dirs(argparse.Action):
    """``--dir`` is repeatable; without it, ``PLAINMCP_PROMPTS_DIRS`` (os.pathsep-separated) fills it."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        from_env = [d for d in os.environ.get(f"{ENV}_DIRS", "").split(os.pathsep) if d.strip()]
        super().__init__(option_strings, dest, default=from_env, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        current = getattr(namespace, self.dest)
        if current is self.default:
            current = []  # the first --dir replaces what the environment gave
        setattr(namespace, self.dest, [*current, values])


def parser() -> argparse.ArgumentParser:
    parser = server_arguments(
        "plainmcp-prompts",
        env_prefix=ENV,
        description="Serve a prompt library kept as Markdown files: MCP prompts with arguments, "
        "completion and live reload.",
        version=VERSION,
    )
    parser.add_argument("--dir", action=_Dirs, metavar="DIR",
                        help=f"a prompt directory (repeatable; later ones override earlier ones by name) "
                        f"[env: {ENV}_DIRS, {os.pathsep}-separated]")
    env_switch(parser, "--no-bundled", f"{ENV}_NO_BUNDLED", help="do not serve the bundled library")
    env_switch(parser, "--no-watch", f"{ENV}_NO_WATCH", help="read the directories once; do not reload on changes")
    env_option(parser, "--debounce-ms", f"{ENV}_DEBOUNCE_MS", type=int, default=150,
               help="quiet time after a file change before the library is reloaded")
    env_option(parser, "--history", f"{ENV}_HISTORY", type=int, default=20,
               help="argument values remembered per argument for completion (0: remember nothing)")
    env_option(parser, "--max-files", f"{ENV}_MAX_FILES", type=int, default=2000,
               help="prompt files read per directory")
    env_option(parser, "--max-file-bytes", f"{ENV}_MAX_FILE_BYTES", type=int, default=256 * 1024,
               help="larger prompt files are skipped")
    return parser


def main() -> None:
    args = parser().parse_args()
    try:
        config = Config.from_args(args)
    except ValueError as problem:
        raise SystemExit(f"plainmcp-prompts: {problem}") from None
    # Before building: the first scan of the library reports broken files, in the chosen log format.
    setup_logging(args)
    serve(build_server(config), args)


if __name__ == "__main__":
    main()
