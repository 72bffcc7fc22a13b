"""A cheap look at whether the database changed: SQLite's schema and data versions, read on the
event loop through a connection of its own, without a thread hop.

The catalogue asks this before every answer it could serve from its cache, so its cost is most of a
cached ``list_tables``. The statement only reads the database header (two pragma functions), on a
read-only connection that never waits for a lock (``timeout=0``): if another process holds one, the
probe says so (None) and the caller reads the versions the slow way, on the worker thread, where
waiting is harmless.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from .engine import database_uri

logger = logging.getLogger(__name__)

VERSIONS = "SELECT s.schema_version, d.data_version FROM pragma_schema_version AS s, pragma_data_version AS d"


class VersionProbe:
    """``read()`` gives ``(schema_version, data_version)``, or None when it cannot say right now.

    ``data_version`` compares only within one connection: :attr:`opened` counts the connections the
    probe has opened, so a caller can tell values of a new connection from the old one's.
    """

    def __init__(self, path: Path, *, immutable: bool = False) -> None:
        self._uri = database_uri(path, "read", immutable=immutable)
        self._connection: sqlite3.Connection | None = None
        self.opened = 0

    def read(self) -> tuple[int, int] | None:
        try:
            if self._connection is None:
                # Used on the event loop's thread only; opened there, on first use.
                self._connection = sqlite3.connect(self._uri, uri=True, timeout=0, isolation_level=None)
                self.opened += 1
            row = self._connection.execute(VERSIONS).fetchone()
        except sqlite3.Error as failure:  # locked, or the file went away: the caller asks the slow way
            logger.debug("version probe: %s", failure)
            self.close()
            return None
        return int(row[0]), int(row[1])

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            connection.close()
