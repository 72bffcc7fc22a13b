"""``plainmcp-sqlite``: serve a SQLite database over MCP (stdio by default; see ``--help``)."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

from plainmcp.command_line import env_option, env_switch, serve, server_arguments

from . import __version__
from .config import SAMPLE_DB, Config
from .server import NAME, build_server

PREFIX = "PLAINMCP_SQLITE"


def parser() -> argparse.ArgumentParser:
    parser = server_arguments(
        NAME,
        env_prefix=PREFIX,
        description="Explore and query a SQLite database over MCP. Read-only unless --allow-write; "
        "every statement has a deadline and results are capped. Without --db, a small bundled "
        "sample database (a bookshop) is served, read-only.",
        version=__version__,
    )
    group = parser.add_argument_group("database")

    def option(flag: str, env: str, **kwargs: Any) -> None:
        env_option(group, flag, f"{PREFIX}_{env}", **kwargs)  # an argument group adds options as a parser does

    option("--db", "DB", metavar="PATH", default=None,
           help="the SQLite database file (default: the bundled sample database, read-only)")
    env_switch(group, "--allow-write", f"{PREFIX}_ALLOW_WRITE",
               help="offer the execute tool, which changes the database (creates the file if missing); "
               "query stays read-only")
    option("--timeout", "TIMEOUT", type=float, default=5.0, metavar="SECONDS",
           help="deadline of one statement; past it the statement is stopped (default 5)")
    option("--max-rows", "MAX_ROWS", type=int, default=1000, help="most rows one result may hold (default 1000)")
    option("--default-rows", "DEFAULT_ROWS", type=int, default=100,
           help="rows a query returns when it does not ask (default 100)")
    option("--max-cell-chars", "MAX_CELL_CHARS", type=int, default=2000,
           help="characters of a text cell (bytes of a blob) before it is cut (default 2000)")
    option("--max-result-bytes", "MAX_RESULT_BYTES", type=int, default=1_000_000,
           help="approximate size of one result; later rows are left out (default 1000000)")
    env_switch(group, "--no-watch", f"{PREFIX}_NO_WATCH",
               help="do not watch the file for changes (subscriptions then get no updates)")
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        config = Config.from_args(args)
    except ValueError as problem:
        raise SystemExit(f"{NAME}: {problem}") from None
    if config.db is not None and not config.allow_write and not config.db.is_file():
        raise SystemExit(f"{NAME}: no database file at {config.db} (read-only mode does not create one)")
    if config.is_sample and not SAMPLE_DB.is_file():
        raise SystemExit(f"{NAME}: the bundled sample database is missing from this installation")
    if config.allow_write and config.db is not None and not config.db.exists():
        _create(config.db)
    serve(build_server(config), args)


def _create(path: Path) -> None:
    """An empty database file, for --allow-write on a path that does not exist yet."""
    try:
        sqlite3.connect(path).close()
    except sqlite3.Error as failure:
        raise SystemExit(f"{NAME}: cannot create {path}: {failure}") from None
    print(f"{NAME}: created an empty database at {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
