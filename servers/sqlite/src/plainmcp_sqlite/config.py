"""The server's settings: one frozen value built from the command line (or the environment)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from .engine import check_file

#: The bundled demo database, served (read-only) when no ``--db`` is given.
SAMPLE_DB = Path(__file__).parent / "sample" / "sample.db"

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


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
        max_result_bytes: approximate size of one result; rows past it are left out (truncated).
        watch: watch the file for changes while clients are subscribed.
    """

    db: Path | None = None
    allow_write: bool = False
    timeout: float = 5.0
    max_rows: int = 1000
    default_rows: int = 100
    max_cell_chars: int = 2000
    max_result_bytes: int = 1_000_000
    watch: bool = True

    def __post_init__(self) -> None:
        if self.db is None and self.allow_write:
            raise ValueError("--allow-write needs --db: the bundled sample database is read-only")
        if not 0 < self.timeout <= 3600:
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

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Config:
        """Raises ValueError naming the option that is wrong, including a ``--db`` that exists
        but is not a SQLite database this server can open (see :func:`engine.check_file`), so
        that start-up fails with one line instead of the first call."""
        config = cls(
            db=Path(args.db).expanduser() if args.db else None,
            allow_write=flag(args.allow_write, "--allow-write"),
            timeout=float(args.timeout),
            max_rows=int(args.max_rows),
            default_rows=int(args.default_rows),
            max_cell_chars=int(args.max_cell_chars),
            max_result_bytes=int(args.max_result_bytes),
            watch=not flag(args.no_watch, "--no-watch"),
        )
        if config.db is not None:
            problem = check_file(config.db, "write" if config.allow_write else "read")
            if problem is not None:
                raise ValueError(problem)
        return config


def flag(value: str | bool | None, name: str) -> bool:
    """A switch given as a flag (True) or as an environment value (``1``/``true``/``0``/...)."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"{name}: expected true or false, not {value!r}")
