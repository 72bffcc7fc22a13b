"""Build the bundled sample database from its SQL: ``python servers/sqlite/scripts/build_sample.py``.

The result is deterministic (same SQL, same rows); it is written in the rollback-journal mode and
vacuumed, so it opens read-only (even ``immutable``) from a read-only install directory.
"""

from __future__ import annotations

import sqlite3
import sys
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "src" / "plainmcp_sqlite" / "sample"


def build(sql_path: Path = SAMPLE / "sample.sql", db_path: Path = SAMPLE / "sample.db") -> Path:
    partial = db_path.with_suffix(".db.partial")
    partial.unlink(missing_ok=True)
    connection = sqlite3.connect(partial, isolation_level=None)
    try:
        connection.executescript(sql_path.read_text(encoding="utf-8"))
        connection.execute("PRAGMA journal_mode = DELETE")
        connection.execute("VACUUM")
    finally:
        connection.close()
    partial.replace(db_path)
    return db_path


if __name__ == "__main__":
    path = build()
    print(f"wrote {path} ({path.stat().st_size} bytes)", file=sys.stderr)
