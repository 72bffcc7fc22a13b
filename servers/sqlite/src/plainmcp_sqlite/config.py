"""The server's settings: one frozen value built from the command line (or the environment, or a test)."""

from __future__ import annotations

import argparse
import logging
import os
import re
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

from plainmcp import StartupError, env_list_option, env_option, env_switch

from . import metadata as datasette
from .engine import MAX_VALUE_BYTES, check_file

ENV_PREFIX = "PLAINMCP_SQLITE"
#: The bundled demo database, served (read-only) when no ``--db`` is given.
SAMPLE_DB = Path(__file__).parent / "sample" / "sample.db"

logger = logging.getLogger(__name__)

#: What a database may be called: a plain SQL identifier (it is written into ATTACH ... AS and
#: into the model's SQL as ``name.table``), short, and none of SQLite's own schema names.
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")
RESERVED_NAMES = frozenset({"main", "temp"})


@dataclass(frozen=True, slots=True)
class Named:
    """One database the server serves: the name calls use, its file, whether ``execute`` may change it."""

    name: str
    path: Path
    writable: bool = False


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
        max_result_bytes: approximate size of one result read as a resource, rows past it left out
            (truncated); also the longest value a statement may build or read (at most
            ``engine.MAX_VALUE_BYTES``).
        result_budget: approximate bytes of row data in one tool result (at most ``max_result_bytes``);
            rows past it are left out, with a cursor to continue and a link to a resource with more.
        watch: watch the file for changes while clients are subscribed (the first database).
        name: what calls name the first database (``db``); ``main`` unless ``--db NAME=PATH``.
        others: more databases (``--db NAME=PATH`` after the first), each read-only unless writable.
        metadata: the Datasette metadata of ``--metadata`` (descriptions, canned queries), or None.
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
    result_budget: int = 20_000
    watch: bool = True
    confirm_writes: bool = True
    name: str = "main"
    others: tuple[Named, ...] = ()
    metadata: datasette.Metadata | None = None

    def __post_init__(self) -> None:
        names = [database.name for database in self.databases]
        bad = [name for name in names if not NAME.fullmatch(name)] + [n for n in names[1:] if n in RESERVED_NAMES]
        if bad or self.name == "temp":
            raise ValueError(
                f"--db {(bad or ['temp'])[0]!r}=...: a name is a letter or _ then letters, digits or _ "
                "(at most 32), and not main or temp (main only for the first)"
            )
        if len(set(names)) != len(names):
            raise ValueError("--db: two databases have the same name")
        if self.others and self.db is None:
            raise ValueError("--db NAME=PATH: name the first database too (the bundled sample is served alone)")
        if self.db is None and self.allow_write:
            raise ValueError("--allow-write needs --db: the bundled sample database is read-only")
        if not 0 < self.timeout <= 3600:  # also refuses NaN, which compares false with everything
            raise ValueError("--timeout must be between 0 and 3600 seconds")
        if self.max_rows < 1 or self.default_rows < 1 or self.max_cell_chars < 16 or self.max_result_bytes < 1024:
            raise ValueError("--max-rows must be >= 1, --max-cell-chars >= 16, --max-result-bytes >= 1024")
        if self.result_budget < 1024:
            raise ValueError("--result-budget must be >= 1024")

    @property
    def path(self) -> Path:
        """The file served."""
        return self.db if self.db is not None else SAMPLE_DB

    @property
    def databases(self) -> tuple[Named, ...]:
        """Every database served, the first (the default of calls that name none) first."""
        return (Named(self.name, self.path, self.allow_write), *self.others)

    @property
    def is_sample(self) -> bool:
        return self.db is None

    @property
    def rows_by_default(self) -> int:
        return min(self.default_rows, self.max_rows)

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """Add the server's own options (each with its ``PLAINMCP_SQLITE_*`` variable) to ``parser``."""
        _add_database_options(parser)
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
        env_option(
            parser,
            "--result-budget",
            f"{ENV_PREFIX}_RESULT_BUDGET",
            type=int,
            default=20_000,
            metavar="BYTES",
            help="about how many bytes of row data one tool result holds (shown as JSON and as a table: "
            "about 10k tokens at the default 20000); later rows are left out, with a cursor to continue",
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
        databases = [_named(text, index) for index, text in enumerate(args.db or [])]
        writable = set(args.writable or ())
        unknown = writable - {name for name, _ in databases[1:]}
        if unknown:
            raise ValueError(f"--writable {sorted(unknown)[0]}: no --db NAME=PATH after the first has that name")
        first_name, first_path = databases[0] if databases else ("main", None)
        config = cls(
            db=first_path,
            name=first_name,
            others=tuple(Named(name, path, name in writable) for name, path in databases[1:]),
            allow_write=args.allow_write or first_name in writable,
            timeout=args.timeout,
            max_rows=args.max_rows,
            default_rows=args.default_rows,
            max_cell_chars=args.max_cell_chars,
            max_result_bytes=args.max_result_bytes,
            result_budget=args.result_budget,
            watch=not args.no_watch,
            confirm_writes=args.confirm_writes == "always",
        )
        if config.db is None:
            if not SAMPLE_DB.is_file():
                raise StartupError("the bundled sample database is missing from this installation")
        for database in config.databases if config.db is not None else ():
            _prepare_file(database.path, database.writable)
        if args.metadata:
            config = replace(config, metadata=_metadata(Path(args.metadata).expanduser(), config))
        return config


def _add_database_options(parser: argparse.ArgumentParser) -> None:
    """The options that say which databases are served, and which may be changed."""
    env_list_option(
        parser,
        "--db",
        f"{ENV_PREFIX}_DB",
        separator=os.pathsep,
        metavar="[NAME=]PATH",
        help="a SQLite database file (default: the bundled sample database, read-only); repeat it with "
        "NAME=PATH to serve several: calls name one (db), the first by default, and queries read the "
        "others as NAME.table",
    )
    env_switch(
        parser,
        "--allow-write",
        f"{ENV_PREFIX}_ALLOW_WRITE",
        help="offer the execute tool, which changes the (first) database (creates the file if missing); "
        "query stays read-only",
    )
    env_option(
        parser,
        "--metadata",
        f"{ENV_PREFIX}_METADATA",
        metavar="FILE",
        default=None,
        help="a Datasette metadata.yml or .json: descriptions of databases, tables and columns, and canned "
        "queries, each served as a tool",
    )
    env_list_option(
        parser,
        "--writable",
        f"{ENV_PREFIX}_WRITABLE",
        metavar="NAME",
        help="a database given as --db NAME=PATH that execute may change too (repeatable)",
    )


def _metadata(path: Path, config: Config) -> datasette.Metadata:
    """The metadata file for ``config``'s databases.

    Raises:
        StartupError: the file cannot be used (the message says why); a canned query that writes to a
            read-only database.
    """
    try:
        found = datasette.load(path, [(database.name, database.path) for database in config.databases])
    except ValueError as failure:
        raise StartupError(str(failure)) from None
    writable = {database.name for database in config.databases if database.writable}
    for query in found.queries:
        if query.write and query.database not in writable:
            raise StartupError(
                f"--metadata {path}: the canned query {query.name} writes, and {query.database} is read-only "
                "(--allow-write or --writable makes it writable)"
            )
    return found


def _named(text: str, index: int) -> tuple[str, Path]:
    """``NAME=PATH`` or, for the first database only, a bare ``PATH`` (named ``main``).

    Raises:
        ValueError: a later database without a name.
    """
    name, equals, path = text.partition("=")
    if equals and NAME.fullmatch(name):
        return name, Path(path).expanduser()
    if index:
        raise ValueError(f"--db {text}: each database after the first needs a name (--db NAME=PATH)")
    return "main", Path(text).expanduser()


def _prepare_file(path: Path, writable: bool) -> None:
    """Check that the file at ``path`` can be served; create a missing one when ``writable``.

    Raises:
        StartupError: the file cannot be served as asked.
    """
    problem = check_file(path, "write" if writable else "read")
    if problem is not None:
        raise StartupError(problem)
    if path.exists():
        return
    if not writable:
        raise StartupError(f"--db {path}: no such file (read-only mode does not create one)")
    try:
        sqlite3.connect(path).close()
    except sqlite3.Error as failure:
        raise StartupError(f"--db {path} cannot be created: {failure}") from None
    logger.warning("created an empty database at %s", path)
