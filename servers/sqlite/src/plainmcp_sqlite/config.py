"""The server's settings: one frozen value built from the command line (or the environment, or a test)."""

from __future__ import annotations

import argparse
import logging
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from plainmcp import StartupError, env_option, env_switch

from .engine import MAX_VALUE_BYTES, check_file

ENV_PREFIX = "PLAINMCP_SQLITE"
#: The bundled demo database, served (read-only) when no ``--db`` is given.
SAMPLE_DB = Path(__file__).parent / "sample" / "sample.db"

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Config:
    """What the operator chose.

    Attributes:
        db: the database file; None serves the bundled sample database, read-only.
        allow_write: offer the ``execute`` tool (the other tools stay read-only).
        timeout: deadline of one statement, in seconds.
        max_rows: the most rows one result may hold (``max_rows`` of a call is capped to it).
        default_rows: rows returned when a call does not say.
        max_cell_chars: characters of a text cell (bytes of a blob) before it is cut.
        max_result_bytes: approximate size of one result, rows past it left out (truncated); also
            the longest value a statement may build or read (at most ``engine.MAX_VALUE_BYTES``).
        watch: watch the file for changes while clients are subscribed.
        confirm_writes: ask the user (elicitation) before ``execute`` commits anything; a client that
            cannot ask is refused. ``--confirm-writes never`` turns it off.

    Raises:
        ValueError: a value out of range, or ``allow_write`` without ``db`` (the message names the option).
    """

    db: Path | None = None
    allow_write: bool = False
    timeout: float = 5.0
    max_rows: int = 1000
    default_rows: int = 100
    max_cell_chars: int = 2000
    max_result_bytes: int = 1_000_000
    watch: bool = True
    confirm_writes: bool = True

    def __post_init__(self) -> None:
        if self.db is None and self.allow_write:
            raise ValueError("--allow-write needs --db: the bundled sample database is read-only")
        if not 0 < self.timeout <= 3600:  # also refuses NaN, which compares false with everything
            raise ValueError("--timeout must be between 0 and 3600 seconds")
        if self.max_rows < 1 or self.default_rows < 1 or self.max_cell_chars < 16 or self.max_result_bytes < 1024:
            raise ValueError("--max-rows must be >= 1, --max-cell-chars >= 16, --max-result-bytes >= 1024")

    @property
    def path(self) -> Path:
        """The file served."""
        return self.db if self.db is not None else SAMPLE_DB

    @property
    def is_sample(self) -> bool:
        return self.db is None

    @property
    def rows_by_default(self) -> int:
        return min(self.default_rows, self.max_rows)

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add the server's own options (each with its ``PLAINMCP_SQLITE_*`` variable) to ``parser``."""
        env_option(
            parser,
            "--db",
            f"{ENV_PREFIX}_DB",
            metavar="PATH",
            default=None,
            help="the SQLite database file (default: the bundled sample database, read-only)",
        )
        env_switch(
            parser,
            "--allow-write",
            f"{ENV_PREFIX}_ALLOW_WRITE",
            help="offer the execute tool, which changes the database (creates the file if missing); "
            "query stays read-only",
        )
        env_option(
            parser,
            "--timeout",
            f"{ENV_PREFIX}_TIMEOUT",
            type=float,
            default=5.0,
            metavar="SECONDS",
            help="deadline of one statement; past it the statement is stopped (default 5)",
        )
        env_option(
            parser,
            "--max-rows",
            f"{ENV_PREFIX}_MAX_ROWS",
            type=int,
            default=1000,
            help="most rows one result may hold (default 1000)",
        )
        env_option(
            parser,
            "--default-rows",
            f"{ENV_PREFIX}_DEFAULT_ROWS",
            type=int,
            default=100,
            help="rows a query returns when it does not ask (default 100)",
        )
        env_option(
            parser,
            "--max-cell-chars",
            f"{ENV_PREFIX}_MAX_CELL_CHARS",
            type=int,
            default=2000,
            help="characters of a text cell (bytes of a blob) before it is cut (default 2000)",
        )
        env_option(
            parser,
            "--max-result-bytes",
            f"{ENV_PREFIX}_MAX_RESULT_BYTES",
            type=int,
            default=1_000_000,
            help="approximate size of one result, later rows left out; also the per-value limit: the "
            f"longest text or blob a statement may build or read, at most {MAX_VALUE_BYTES >> 20} MiB "
            "(default 1000000)",
        )
        env_option(
            parser,
            "--confirm-writes",
            f"{ENV_PREFIX}_CONFIRM_WRITES",
            choices=("always", "never"),
            type=str.lower,
            default="always",
            help="with --allow-write: always (the default) shows the user what each change would do, "
            "counted by a dry run, and commits only when they accept; a client that cannot ask is "
            "refused. never runs changes without asking",
        )
        env_switch(
            parser,
            "--no-watch",
            f"{ENV_PREFIX}_NO_WATCH",
            help="do not watch the file for changes (subscriptions then get no updates)",
        )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """The configuration the parsed options ask for, once the file fits it: a ``--db`` must be a
        SQLite database this server can open (read, or written with ``--allow-write``, which creates
        a missing file as an empty database). Checked here so that start-up fails with one line
        instead of the first call.

        Raises:
            ValueError: a wrong option value (a usage error).
            StartupError: valid options the file does not fit (one line naming the option).
        """
        config = cls(
            db=Path(args.db).expanduser() if args.db else None,
            allow_write=args.allow_write,
            timeout=args.timeout,
            max_rows=args.max_rows,
            default_rows=args.default_rows,
            max_cell_chars=args.max_cell_chars,
            max_result_bytes=args.max_result_bytes,
            watch=not args.no_watch,
            confirm_writes=args.confirm_writes == "always",
        )
        _prepare_file(config)
        return config


def _prepare_file(config: Config) -> None:
    """Check that ``config``'s file can be served; create a missing one for ``--allow-write``.

    Raises:
        StartupError: the file cannot be served as ``config`` asks.
    """
    if config.db is None:
        if not SAMPLE_DB.is_file():
            raise StartupError("the bundled sample database is missing from this installation")
        return
    problem = check_file(config.db, "write" if config.allow_write else "read")
    if problem is not None:
        raise StartupError(problem)
    if config.db.exists():
        return
    if not config.allow_write:
        raise StartupError(f"--db {config.db}: no such file (read-only mode does not create one)")
    try:
        sqlite3.connect(config.db).close()
    except sqlite3.Error as failure:
        raise StartupError(f"--db {config.db} cannot be created: {failure}") from None
    logger.warning("created an empty database at %s", config.db)
