"""Opening a SQLite database for one access mode, and running one statement under a deadline.

The read-only guarantee is SQLite's, not ours to guess from SQL text. A read connection is:

1. opened with a ``file:...?mode=ro`` URI (the library cannot write the file),
2. set to ``PRAGMA query_only`` (every write statement fails, also to attached files),
3. limited to zero attached databases (``SQLITE_LIMIT_ATTACHED``: no ``ATTACH``, no file created),
4. guarded by the authorizer of ``policy.py`` (only reads, read-only pragmas, no extension loading),
5. without extension loading (switched off where this Python can switch it at all).

A write connection (``--allow-write``) keeps 3-5 with the write policy, and wraps each statement in
its own ``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any failure).

Every statement runs under a deadline checked by SQLite's progress handler, which also stops it when
the caller is cancelled; a stopped statement leaves nothing behind. A few operations are one long
step of SQLite's virtual machine, where the progress handler is not called (``count(*)`` walks a
whole table in one step): a timer on the event loop interrupts the connection at the deadline too. Statements on one connection run
one at a time (a lock), so the deadline and the refusal reason of the guard always belong to the
statement that is running.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import anyio

from . import policy

logger = logging.getLogger(__name__)

#: SQLite runs this many virtual-machine instructions between two deadline checks (a few µs).
PROGRESS_STEPS = 1000
#: Largest string or blob SQLite may build or return (SQLITE_LIMIT_LENGTH): ``zeroblob(1e9)`` fails
#: instead of allocating a gigabyte.
MAX_VALUE_BYTES = 16 * 1024 * 1024
#: Longest SQL text accepted (SQLITE_LIMIT_SQL_LENGTH).
MAX_SQL_LENGTH = 100_000
#: Rows are fetched in batches of this many, so the byte budget is checked as they arrive.
FETCH_BATCH = 256

Params = Sequence[Any] | Mapping[str, Any]


class DatabaseError(Exception):
    """A statement failed. The message is written for the model: what was wrong, no host path."""


class Refused(DatabaseError):
    """The access mode does not allow what the statement tried."""


class DeadlineExceeded(DatabaseError):
    """The statement ran past its deadline and was stopped."""


@dataclass(slots=True)
class Outcome:
    """What one statement gave: column names, the rows kept, and whether more rows were left."""

    columns: list[str]
    rows: list[tuple[Any, ...]]
    more: bool
    #: ``"rows"`` or ``"bytes"``: which cap stopped the fetch when ``more`` is true.
    capped_by: str | None = None
    changes: int = 0
    last_row_id: int | None = None


class Guard:
    """The per-connection state SQLite calls back into: the policy, the deadline, the stop flag.

    Installed into the connection on the connection's own thread (see :func:`_connection_class`).
    """

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.deadline = float("inf")
        self.stop = False
        self.refusal: str | None = None
        self.refusal_is_schema = False
        #: True while the engine itself runs BEGIN / COMMIT / ROLLBACK.
        self.internal = False
        #: Counts statements, so a late timer cannot interrupt the statement after its own.
        self.generation = 0
        self.busy = False
        self.connection: sqlite3.Connection | None = None

    def install(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_LENGTH)
        if hasattr(connection, "enable_load_extension"):  # absent when Python was built without it
            connection.enable_load_extension(False)
        # Views and triggers of the file may not call functions with side effects (a planted
        # schema cannot make a reader's query do more than read).
        connection.execute("PRAGMA trusted_schema = OFF")
        if self.mode == "read":
            connection.execute("PRAGMA query_only = ON")
        else:
            connection.execute("PRAGMA foreign_keys = ON")
        connection.set_authorizer(self.authorize)
        connection.set_progress_handler(self.progress, PROGRESS_STEPS)

    def authorize(self, action: int, arg1: str | None, arg2: str | None, database: str | None, _source: str | None) -> int:
        if self.internal and action == sqlite3.SQLITE_TRANSACTION:
            return policy.OK
        if policy.decide(self.mode, action, arg1, arg2, database):
            return policy.OK
        # The first refusal is the cause, except that a change to the schema table comes before
        # the action that explains it (CREATE TABLE first inserts into sqlite_master).
        if self.refusal is None or self.refusal_is_schema:
            self.refusal = policy.describe(action, arg1, arg2, database)
            self.refusal_is_schema = arg1 in policy.SCHEMA_TABLES
        return policy.DENY

    def progress(self) -> int:
        # A non-zero answer makes SQLite abandon the statement with SQLITE_INTERRUPT.
        return 1 if self.stop or time.monotonic() > self.deadline else 0

    def arm(self, timeout: float) -> int:
        self.deadline = time.monotonic() + timeout
        self.stop = False
        self.refusal = None
        self.refusal_is_schema = False
        self.generation += 1
        self.busy = True
        return self.generation

    def interrupt(self, generation: int | None = None) -> None:
        """Stop the running statement now (any thread): the flag for the progress handler, and
        ``sqlite3_interrupt`` for a long single step. Only the statement of ``generation``, if given."""
        if not self.busy or (generation is not None and generation != self.generation):
            return
        self.stop = True
        if self.connection is not None:
            # Thread-safe by design; a no-op when no statement runs.
            self.connection.interrupt()


def _connection_class(guard: Guard) -> type[sqlite3.Connection]:
    """A ``sqlite3.Connection`` subclass that installs ``guard`` as it opens, on aiosqlite's
    worker thread, before any statement can run."""

    class GuardedConnection(sqlite3.Connection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            guard.install(self)

    return GuardedConnection


def database_uri(path: Path, mode: str, *, immutable: bool = False) -> str:
    """The ``file:`` URI that opens ``path`` read-only (``mode="read"``) or read-write, never
    creating it; ``immutable`` promises SQLite that nobody changes the file (the bundled sample)."""
    query = "mode=ro" if mode == "read" else "mode=rw"
    if immutable:
        query += "&immutable=1"
    return f"{path.resolve().as_uri()}?{query}"


class Database:
    """One connection to one database file in one mode, opened on first use.

    Args:
        path: the database file (it must exist).
        mode: ``"read"`` or ``"write"``.
        timeout: default deadline of a statement, in seconds.
        immutable: the file never changes while served (skips locking; the bundled sample).
    """

    def __init__(self, path: Path, mode: str = "read", *, timeout: float = 5.0, immutable: bool = False) -> None:
        if mode not in ("read", "write"):
            raise ValueError(f"mode must be 'read' or 'write', not {mode!r}")
        self.path = path
        self.mode = mode
        self.timeout = timeout
        self.immutable = immutable
        self._guard = Guard(mode)
        self._connection: aiosqlite.Connection | None = None
        self._lock = anyio.Lock()

    async def _connect(self) -> aiosqlite.Connection:
        if self._connection is None:
            try:
                self._connection = await aiosqlite.connect(
                    database_uri(self.path, self.mode, immutable=self.immutable),
                    uri=True,
                    isolation_level=None,  # no implicit BEGIN: transactions are the engine's, explicitly
                    timeout=min(self.timeout, 5.0),  # how long to wait for another process's lock
                    factory=_connection_class(self._guard),
                )
            except sqlite3.Error as failure:
                logger.error("cannot open the database %s: %s", self.path, failure)
                raise DatabaseError(f"The database cannot be opened: {failure}") from None
        return self._connection

    async def close(self) -> None:
        """Close the connection (if open); the next statement opens it again."""
        async with self._lock:
            connection, self._connection = self._connection, None
            if connection is not None:
                await connection.close()

    async def run(
        self,
        sql: str,
        params: Params = (),
        *,
        max_rows: int,
        max_bytes: int = 1 << 62,
        timeout: float | None = None,
    ) -> Outcome:
        """Run one statement and fetch at most ``max_rows`` rows (fewer when they pass ``max_bytes``).

        In write mode the statement runs in its own transaction, committed when it succeeds.

        Raises:
            Refused: the mode does not allow what the statement does.
            DeadlineExceeded: it ran longer than ``timeout`` (default: the database's).
            DatabaseError: any other failure, with SQLite's explanation.
        """
        async with self._lock:
            connection = await self._connect()
            limit = self.timeout if timeout is None else timeout
            generation = self._guard.arm(limit)
            timer = asyncio.get_running_loop().call_later(limit, self._guard.interrupt, generation)
            cursor = await connection.cursor()
            began = done = False
            try:
                if self.mode == "write":
                    await self._internal(connection, "BEGIN IMMEDIATE")
                    began = True
                await cursor.execute(sql, params)
                outcome = await self._fetch(cursor, max_rows, max_bytes)
                if began:
                    await self._internal(connection, "COMMIT")
                    began = False
                done = True
                return outcome
            except sqlite3.Error as failure:
                raise self._explain(failure) from None
            finally:
                # Also on cancellation, where the statement may still be running on the worker
                # thread: the stop flag makes the progress handler end it within a few
                # instructions; closing the cursor waits for that (calls run in order), then an
                # open transaction is rolled back, all before the next statement may start.
                timer.cancel()
                if not done:
                    self._guard.interrupt()
                with anyio.CancelScope(shield=True):
                    try:
                        await cursor.close()
                        if began:
                            self._guard.stop = False
                            await self._internal(connection, "ROLLBACK")
                    except sqlite3.Error:
                        logger.exception("cleaning up after a statement failed")
                    finally:
                        self._guard.busy = False

    async def _internal(self, connection: aiosqlite.Connection, sql: str) -> None:
        self._guard.internal = True
        try:
            await connection.execute(sql)
        finally:
            self._guard.internal = False

    async def _fetch(self, cursor: aiosqlite.Cursor, max_rows: int, max_bytes: int) -> Outcome:
        columns = [column[0] for column in cursor.description or ()]
        rows: list[tuple[Any, ...]] = []
        size = 0
        capped_by: str | None = None
        if columns:
            while True:
                want = min(FETCH_BATCH, max_rows + 1 - len(rows))
                batch = await cursor.fetchmany(want)
                for row in batch:
                    if len(rows) == max_rows:
                        capped_by = "rows"
                        break
                    size += _row_size(row)
                    if size > max_bytes and rows:
                        capped_by = "bytes"
                        break
                    rows.append(row)
                if capped_by or len(batch) < want:
                    break
        changes = cursor.rowcount if cursor.rowcount > 0 else 0
        return Outcome(columns, rows, capped_by is not None, capped_by, changes, cursor.lastrowid)

    def _explain(self, failure: sqlite3.Error) -> DatabaseError:
        """Turn SQLite's exception into one the model can act on."""
        message = str(failure)
        guard = self._guard
        if guard.refusal is not None:
            if self.mode == "read":
                return Refused(
                    f"Statement refused in read-only mode: {guard.refusal} is not allowed. Only reading "
                    "statements run here (SELECT, WITH ... SELECT, read-only PRAGMAs)."
                )
            return Refused(f"Statement refused: {guard.refusal} is not allowed by this server, even with writes enabled.")
        if "readonly database" in message or "query_only" in message:
            return Refused("Statement refused in read-only mode: it would write to the database.")
        if message == "interrupted":
            if time.monotonic() > guard.deadline:
                return DeadlineExceeded(
                    "Deadline exceeded: the statement ran longer than the limit and was stopped. "
                    "Narrow it (WHERE, LIMIT, an indexed column) or check for a recursive CTE without an end."
                )
            return DatabaseError("The statement was cancelled.")
        if message.startswith("near ") and message.endswith(": syntax error"):
            return DatabaseError(f"SQL syntax error {message.removesuffix(': syntax error')}.")
        if "one statement at a time" in message:
            return DatabaseError("Only one SQL statement per call: remove the ';' and what follows it.")
        if "string or blob too big" in message:
            return DatabaseError(f"A value is larger than the limit of {MAX_VALUE_BYTES} bytes.")
        if "Could not decode to UTF-8" in message:
            return DatabaseError(
                "A text value is not valid UTF-8; select it as CAST(column AS BLOB) or hex(column)."
            )
        if "database is locked" in message or "database is busy" in message:
            return DatabaseError("The database is locked by another connection; try again shortly.")
        if isinstance(failure, sqlite3.ProgrammingError) and "binding" in message:
            return DatabaseError(f"Parameters do not match the statement: {message}")
        return DatabaseError(_scrub(message, self.path))


def _row_size(row: Sequence[Any]) -> int:
    # A cheap estimate of a row's JSON size: text and blob lengths, 8 for anything else.
    return sum(len(value) if isinstance(value, (str, bytes)) else 8 for value in row)


def _scrub(message: str, path: Path) -> str:
    """SQLite's message without the database's host path, should it mention one."""
    for text in {str(path), str(path.resolve()), path.resolve().as_uri()}:
        message = message.replace(text, "<database>")
    return message[:1:].upper() + message[1:]
