"""``plainmcp-filesystem DIR [DIR...]``: serve files below the given directories (stdio by default)."""

from __future__ import annotations

import argparse
import logging
import os

from plainmcp.command_line import env_option, env_switch, serve, server_arguments

from .config import Config
from .server import VERSION, build_server

PREFIX = "PLAINMCP_FILESYSTEM"
DEFAULTS = Config(roots=("/",))  # the limits' defaults, for the options
logger = logging.getLogger("plainmcp_filesystem")


def parser() -> argparse.ArgumentParser:
    parser = server_arguments(
        "plainmcp-filesystem",
        env_prefix=PREFIX,
        description="MCP server for files below the given directories: read-only unless --allow-write.",
        version=VERSION,
    )
    parser.add_argument("directories", nargs="*", metavar="DIR",
                        help=f"allowed directory (repeatable) [env: {PREFIX}_DIRECTORIES, separated by {os.pathsep!r}]")

    def switch(flag: str, env: str, help: str) -> None:
        # On/off only: `--allow-write DIR` is the switch and a directory (env_switch never takes the next word).
        env_switch(parser, flag, f"{PREFIX}_{env}", help=help)

    switch("--allow-write", "ALLOW_WRITE", "enable write_file, edit_file, create_directory, move_file, copy_file")
    switch("--allow-delete", "ALLOW_DELETE", "also enable delete_file (needs --allow-write)")
    switch("--use-roots", "USE_ROOTS", "narrow the allowed directories to the client's roots when it offers them")
    switch("--no-watch", "NO_WATCH", "do not watch files (no change notifications for subscriptions)")
    env_option(parser, "--max-read-bytes", f"{PREFIX}_MAX_READ_BYTES", type=int, default=DEFAULTS.max_read_bytes,
               help="cap on the text one read returns")
    env_option(parser, "--max-media-bytes", f"{PREFIX}_MAX_MEDIA_BYTES", type=int, default=DEFAULTS.max_media_bytes,
               help="largest file read_media_file and resources/read return")
    env_option(parser, "--max-entries", f"{PREFIX}_MAX_ENTRIES", type=int, default=DEFAULTS.max_entries,
               help="default cap on entries of a listing, tree or search")
    env_option(parser, "--max-resources", f"{PREFIX}_MAX_RESOURCES", type=int, default=DEFAULTS.max_resources,
               help="cap on files listed by resources/list")
    env_option(parser, "--debounce-ms", f"{PREFIX}_DEBOUNCE_MS", type=int, default=DEFAULTS.debounce_ms,
               help="longest wait to group a burst of file changes into one notification")
    return parser


def config_from(args: argparse.Namespace) -> Config:
    directories = list(args.directories) or [
        d for d in os.environ.get(f"{PREFIX}_DIRECTORIES", "").split(os.pathsep) if d
    ]
    usable = []
    for directory in directories:
        if os.path.isdir(os.path.expanduser(directory)):
            usable.append(directory)
        else:
            logger.warning("skipping %s: not an accessible directory", directory)
    if not usable:
        raise SystemExit("plainmcp-filesystem: name at least one existing directory (plainmcp-filesystem DIR [DIR...])")
    return Config(
        roots=tuple(usable),
        allow_write=args.allow_write,
        allow_delete=args.allow_delete,
        use_roots=args.use_roots,
        watch=not args.no_watch,
        max_read_bytes=args.max_read_bytes,
        max_media_bytes=args.max_media_bytes,
        max_entries=args.max_entries,
        max_resources=args.max_resources,
        debounce_ms=args.debounce_ms,
    )


def main() -> None:
    args = parser().parse_args()
    try:
        config = config_from(args)
        server = build_server(config)
    except ValueError as problem:
        raise SystemExit(f"plainmcp-filesystem: {problem}") from None
    serve(server, args)


if __name__ == "__main__":
    main()
