"""Opening a SQLite database for one access mode, and running one statement under a deadline.

The read-only guarantee is SQLite's, not ours to guess from SQL text. A read connection is:

1. opened with a ``file:...?mode=ro`` URI (the library cannot write the file),
2. set to ``PRAGMA query_only`` (every write statement fails, also to attached files),
3. limited to zero attached databases (``SQLITE_LIMIT_ATTACHED``: no ``ATTACH``, no file created),
4. guarded by the authorizer of ``policy.py`` (only reads, read-only pragmas, no extension loading),
5. without extension loading (switched off where this Python can switch it at all).

A write connection (``--allow-write``) keeps 3-5 with the write policy, and wraps each statement in
its own ``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any failure).

Each connection lives on its own worker thread (:class:`Worker`), and a statement is one call there:
begin (write mode), execute, fetch under the caps, close the cursor, commit. The event loop pays one
thread hop per statement, whatever the number of rows.

Every statement runs under a deadline checked by SQLite's progress handler, which also stops it when
the caller is cancelled; a stopped statement leaves nothing behind. A few operations are one long
step of SQLite's virtual machine, where the progress handler is not called (``count(*)`` walks a
whole table in one step): a timer on the event loop interrupts the connection at the deadline too.
Some single steps cannot be interrupted at all: one call of a function whose cost is quadratic in
its arguments (``instr``, ``replace``, ``trim``, ``LIKE``). Their time is bounded by limits on the
values SQLite may build (see below), and a read connection whose statement does not stop within
:data:`STOP_GRACE` of its deadline or cancellation is *retired*: the caller is answered at once, the
next read opens a fresh connection, and the retired one closes itself on its own thread when the
step ends (at most :data:`MAX_RETIRED` at a time; past that the caller waits, as a write always does,
since its transaction must be rolled back before the next). Statements on one connection run one at
a time (a lock), so the deadline and the refusal reason of the guard always belong to the statement
that is running.

Memory is bounded before anything is materialised, not only the output:

- no value longer than the statement's value limit is ever built, by SQLite or by Python
  (``SQLITE_LIMIT_LENGTH``, set per statement to the result budget, at most
  :data:`MAX_VALUE_BYTES`): ``zeroblob(1e9)`` fails instead of allocating a gigabyte;
- SQLite's whole heap in this process is capped (``PRAGMA hard_heap_limit``, :data:`HEAP_LIMIT`), so
  a row of many large values, or large intermediate values, fail with a clear error; and as every
  value of a row lives in that heap while Python converts the row, a row is bounded too;
- rows are converted one at a time and measured before they are kept: fetching stops at the first
  row past the result budget, so Python holds the kept rows and at most one more.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sqlite3
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from . import bounded_printf, changes, policy
from .failures import DEADLINE, Changed, DatabaseError, DeadlineExceeded, Refused, explain, scrub
from .fetch import Outcome, fetch_rows
from .worker import Worker

logger = logging.getLogger(__name__)

#: SQLite runs this many virtual-machine instructions between two deadline checks (a few µs).
PROGRESS_STEPS = 1000
#: Largest string or blob SQLite may ever build or return (SQLITE_LIMIT_LENGTH); a statement's own
#: limit is its result budget when smaller. The longest step SQLite cannot interrupt grows with the
#: square of this (``instr`` of two values this long), so it is not only a memory bound.
MAX_VALUE_BYTES = 16 * 1024 * 1024
#: SQLite's heap in this process, all connections together (``PRAGMA hard_heap_limit``). Legitimate
#: statements use a few MiB (page caches of 2 MiB per connection; sorts and temporary tables spill
#: to temporary files); a statement past it fails with SQLITE_NOMEM, which sqlite3 raises as MemoryError.
HEAP_LIMIT = 32 * 1024 * 1024
#: Longest LIKE / GLOB pattern (SQLITE_LIMIT_LIKE_PATTERN_LENGTH): matching costs up to the pattern's
#: length times the text's, in one step SQLite cannot interrupt.
MAX_LIKE_PATTERN = 1000
#: Longest SQL text accepted (SQLITE_LIMIT_SQL_LENGTH).
MAX_SQL_LENGTH = 100_000
#: How long a stopped statement may take to end after its deadline or cancellation before its read
#: connection is retired (the caller is answered; the next read gets a fresh connection).
STOP_GRACE = 0.25
#: Read connections still finishing a step they could not interrupt, at most (each holds a thread
#: and up to one core until the step ends); past this a stopped statement is waited for.
MAX_RETIRED = 2

Params = Sequence[Any] | Mapping[str, Any]
__all__ = ["Changed", "Database", "DatabaseError", "DeadlineExceeded", "Outcome", "Params", "Refused"]


class Guard:
    """The per-connection state SQLite calls back into: the policy, the deadline, the stop flag.

    Installed into the connection on the connection's own thread (see :func:`_connection_class`).
    """

    def __init__(self, mode: str, attach: Sequence[tuple[str, Path]] = ()) -> None:
        self.mode = mode
        #: The other databases the server serves, attached read-only under their names.
        self.attach = tuple(attach)
        self.deadline = float("inf")
        self.stop = False
        self.refusal: str | None = None
        self.refusal_is_schema = False
        #: True while the engine itself runs BEGIN / COMMIT / ROLLBACK.
        self.internal = False
        #: Counts statements, so a late timer cannot interrupt the statement after its own.
        self.generation = 0
        self.busy = False
        #: What the running statement changes, as the authorizer allowed it (write mode; for the
        #: confirmation a dry run asks).
        self.effects: list[str] = []
        #: The tables of ``main`` the running statement may insert into, update or delete from.
        self.written: set[str] = set()
        #: The digest of a confirmed statement's changes (write mode, see :mod:`.changes`).
        self.changelog = changes.ChangeLog()
        #: The longest value the running statement may build (SQLITE_LIMIT_LENGTH), for its errors.
        self.value_limit = MAX_VALUE_BYTES
        self.connection: sqlite3.Connection | None = None

    def install(self, connection: sqlite3.Connection) -> None:
        self.connection = connection
        # The server's own databases, read-only (mode=ro), before the authorizer exists; then the limit
        # is what is attached, so no statement can attach one more, whatever the authorizer says.
        connection.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, len(self.attach))
        for name, path in self.attach:
            # The name is an identifier checked by Config (config.NAME); SQLite takes no parameter there.
            connection.execute(f'ATTACH DATABASE ? AS "{name}"', (database_uri(path, "read"),)).close()
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
        connection.setlimit(sqlite3.SQLITE_LIMIT_SQL_LENGTH, MAX_SQL_LENGTH)
        connection.setlimit(sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, MAX_LIKE_PATTERN)
        # Process-wide, and it only ever lowers an existing limit (SQLite's rule for this pragma).
        connection.execute(f"PRAGMA hard_heap_limit = {HEAP_LIMIT}").close()
        bounded_printf.install(connection, lambda: self.value_limit)
        if self.mode == "write":
            self.changelog.install(connection)
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

    def authorize(
        self, action: int, arg1: str | None, arg2: str | None, database: str | None, source: str | None
    ) -> int:
        if self.internal:  # the engine's own SQL: transactions, the change log's triggers
            return policy.OK
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() == changes.FUNCTION:
            if not self.changelog.allows(source):  # only the change log's triggers feed its digest
                self.refusal = self.refusal or policy.describe(action, arg1, arg2, database)
                return policy.DENY
        if policy.decide(self.mode, action, arg1, arg2, database):
            if self.mode == "write" and policy.changes_data(action, arg1):
                effect = policy.describe(action, arg1, arg2, database)
                if effect not in self.effects:
                    self.effects.append(effect)
                if action in _ROW_ACTIONS and database == "main" and arg1 is not None:
                    self.written.add(arg1)
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
        self.effects = []
        self.written = set()
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
    """A ``sqlite3.Connection`` subclass that installs ``guard`` as it opens, on the worker
    thread, before any statement can run."""

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


def check_file(path: Path, mode: str) -> str | None:
    """Why the operator's ``--db`` cannot be served in ``mode`` (``"read"`` or ``"write"``), as one
    line for start-up, or None when it can: not a directory or special file, readable (and
    writable for writes), and a SQLite database whose schema can be read.

    A missing file passes (read mode refuses it, write mode creates it); so does a database that
    another process holds locked (statements wait for locks when they run)."""
    try:
        if not path.exists():
            return None
        if path.is_dir():
            return f"--db {path} is a directory, not a SQLite database file"
        if not path.is_file():  # a FIFO would even block the open
            return f"--db {path} is not a regular file"
    except OSError as failure:
        return f"--db {path} cannot be read: {failure.strerror}"
    if not os.access(path, os.R_OK):
        return f"--db {path} cannot be read (permission denied)"
    if mode == "write" and not os.access(path, os.W_OK):
        return f"--db {path} cannot be written (permission denied), and --allow-write needs to"
    try:
        connection = sqlite3.connect(database_uri(path, "read"), uri=True, timeout=0)
        try:
            connection.execute("SELECT count(*) FROM sqlite_master").close()
        finally:
            connection.close()
    except sqlite3.Error as failure:
        if "locked" in str(failure) or "busy" in str(failure):
            return None
        return f"--db {path} is not a SQLite database that can be read ({failure})"
    return None


class Database:
    """One connection to one database file in one mode, opened on first use.

    The connection lives on its own :class:`Worker` thread. A statement is one call there: begin
    (write mode), execute, fetch under the caps, close the cursor, commit, so a query costs the
    event loop one thread hop, whatever the number of rows.

    Args:
        path: the database file (it must exist).
        mode: ``"read"`` or ``"write"``.
        timeout: default deadline of a statement, in seconds.
        immutable: the file never changes while served (skips locking; the bundled sample).
        attach: other databases (name, file) every connection attaches read-only, for queries that
            read ``name.table``; none can be written through this connection.
    """

    def __init__(
        self,
        path: Path,
        mode: str = "read",
        *,
        timeout: float = 5.0,
        immutable: bool = False,
        attach: Sequence[tuple[str, Path]] = (),
    ) -> None:
        if mode not in ("read", "write"):
            raise ValueError(f"mode must be 'read' or 'write', not {mode!r}")
        self.path = path
        self.mode = mode
        self.timeout = timeout
        self.immutable = immutable
        #: The guard of the next (or current) connection; a retired connection keeps its own.
        self.attach = tuple(attach)
        self._guard = Guard(mode, self.attach)
        self._worker: Worker | None = None
        #: Read workers still finishing a step they could not interrupt (see :meth:`_retire`).
        self._retired: list[Worker] = []
        self._connection: sqlite3.Connection | None = None
        # fast_acquire: a free lock is taken without a pass through the event loop (the statement
        # itself yields, on its thread hop).
        self._lock = anyio.Lock(fast_acquire=True)
        #: Counts the connections opened so far: per-connection values such as ``PRAGMA
        #: data_version`` compare only within one connection.
        self.connections_opened = 0

    @property
    def retired(self) -> int:
        """Read connections left behind in a step they could not interrupt, still finishing it."""
        self._retired = [worker for worker in self._retired if worker.alive]
        return len(self._retired)

    async def _connect(self) -> Worker:
        if self._worker is None:
            worker = Worker(f"plainmcp-sqlite-{self.mode}")
            try:
                self._connection = await worker.call(
                    functools.partial(
                        sqlite3.connect,
                        database_uri(self.path, self.mode, immutable=self.immutable),
                        uri=True,
                        isolation_level=None,  # no implicit BEGIN: transactions are the engine's, explicitly
                        timeout=min(self.timeout, 5.0),  # how long to wait for another process's lock
                        # Writes are prepared afresh: a cached statement would skip the authorizer,
                        # which tells a dry run what the statement changes.
                        cached_statements=0 if self.mode == "write" else 128,
                        factory=_connection_class(self._guard),
                    )
                )
            except sqlite3.Error as failure:
                worker.stop()
                logger.error("cannot open the database %s: %s", self.path, failure)
                raise DatabaseError(
                    f"The database cannot be opened: {scrub(str(failure), self.path, self.attach)}"
                ) from None
            except BaseException:
                worker.stop()
                raise
            self._worker = worker
            self.connections_opened += 1
        return self._worker

    async def close(self) -> None:
        """Close the connection (if open); the next statement opens it again."""
        async with self._lock:
            worker, self._worker = self._worker, None
            connection, self._connection = self._connection, None
            if worker is not None:
                try:
                    if connection is not None:
                        await worker.call(connection.close)
                finally:
                    worker.stop()

    async def run(
        self,
        sql: str,
        params: Params = (),
        *,
        max_rows: int,
        max_bytes: int = 1 << 62,
        max_value_bytes: int | None = None,
        timeout: float | None = None,
        dry_run: bool = False,
        expect_digest: str | None = None,
        skip: int = 0,
        shape: Callable[[Outcome], Any] | None = None,
    ) -> Outcome:
        """Run one statement and fetch at most ``max_rows`` rows (fewer when they pass ``max_bytes``).

        No value longer than ``max_value_bytes`` (default ``max_bytes``; at most
        :data:`MAX_VALUE_BYTES`) may be built while it runs. In write mode the statement runs in its
        own transaction, committed when it succeeds; with ``dry_run`` inside a savepoint that is
        rolled back (the outcome counts the changes it would make, says what they are, and has their
        ``digest``, see :mod:`.changes`); with ``expect_digest`` committed only when its changes have
        exactly that digest. The first ``skip``
        rows are stepped over (a later page). ``shape`` runs on the worker thread once the statement
        has ended, its result the outcome's ``shaped`` (many rows made JSON off the event loop).

        Raises:
            Changed: ``expect_digest`` was not met; nothing was committed.
            Refused: the mode does not allow what the statement does.
            DeadlineExceeded: it ran longer than ``timeout`` (default: the database's).
            DatabaseError: any other failure, with SQLite's explanation.
        """
        async with self._lock:
            worker = await self._connect()
            connection, guard = self._connection, self._guard
            limit = self.timeout if timeout is None else timeout
            generation = guard.arm(limit)
            guard.value_limit = min(MAX_VALUE_BYTES, max_bytes if max_value_bytes is None else max_value_bytes)
            timer = asyncio.get_running_loop().call_later(limit, guard.interrupt, generation)
            arguments = (connection, guard, sql, params, max_rows, max_bytes, (dry_run, expect_digest), skip, shape)
            ended = failed = overdue = False
            try:
                # The timer interrupts at the deadline; a step that cannot be interrupted is left
                # behind STOP_GRACE later (see the finally clause).
                with anyio.move_on_after(limit + STOP_GRACE):
                    outcome: Outcome = await worker.call(self._statement, *arguments)
                    ended = True
                    return outcome
                overdue = True
                raise DeadlineExceeded(DEADLINE)
            except sqlite3.Error as failure:
                ended = failed = True
                raise explain(failure, guard, self.mode, self.path, like_limit=MAX_LIKE_PATTERN) from None
            except MemoryError:  # SQLITE_NOMEM: the statement wanted more than HEAP_LIMIT
                ended = failed = True
                raise DatabaseError(_OUT_OF_MEMORY) from None
            except Changed:
                ended = failed = True
                raise
            finally:
                # Also on cancellation, where the statement may still be running on the worker
                # thread: the stop flag makes the progress handler end it within a few
                # instructions. The cleanup call queues behind it (calls run in order), then
                # rolls back an open transaction, all before the next statement may start. The
                # timer is cancelled first, so it cannot interrupt the ROLLBACK.
                timer.cancel()
                try:
                    if not ended:
                        guard.interrupt()
                    if not ended or (failed and self.mode == "write"):
                        await self._stop(worker, connection, guard, grace=0.0 if overdue else STOP_GRACE)
                except sqlite3.Error:
                    logger.exception("cleaning up after a statement failed")
                finally:
                    guard.busy = False

    async def _stop(self, worker: Worker, connection: sqlite3.Connection | None, guard: Guard, *, grace: float) -> None:
        """Wait for a stopped (or failed) statement to end and roll back what it began; or, for a
        read statement still in a step SQLite cannot interrupt after ``grace`` seconds, retire its
        connection."""
        with anyio.CancelScope(shield=True):
            if self.mode == "read" and self._may_retire():
                if grace > 0:
                    with anyio.move_on_after(grace):
                        await worker.call(self._settle, connection, guard)
                        return
                self._retire(worker, connection)
            else:
                await worker.call(self._settle, connection, guard)

    def _may_retire(self) -> bool:
        return self.retired < MAX_RETIRED

    def _retire(self, worker: Worker, connection: sqlite3.Connection | None) -> None:
        """Leave ``worker`` to finish its step alone, then close its connection and end; the next
        statement opens a new connection with a new guard. Only for reads: nothing to roll back."""
        logger.warning(
            "a statement did not stop within %.2f s of being interrupted; its connection is retired", STOP_GRACE
        )
        self._retired.append(worker)
        if worker is self._worker:
            self._worker, self._connection, self._guard = None, None, Guard(self.mode, self.attach)
        if connection is not None:
            worker.post(connection.close)
        worker.stop()

    def _statement(
        self,
        connection: sqlite3.Connection,
        guard: Guard,
        sql: str,
        params: Params,
        max_rows: int,
        max_bytes: int,
        confirmation: tuple[bool, str | None] = (False, None),
        skip: int = 0,
        shape: Callable[[Outcome], Any] | None = None,
    ) -> Outcome:
        """On the worker thread: the whole statement. On failure a write transaction is left open
        for :meth:`_settle`, which runs after the event loop cancelled the deadline timer.
        ``confirmation`` is (dry run, expected digest): see :meth:`run`."""
        connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, guard.value_limit)
        dry_run, expected = confirmation
        watched = self.mode == "write" and (dry_run or expected is not None)
        if self.mode == "write":
            _internal(connection, guard, "BEGIN IMMEDIATE")
            if dry_run:
                _internal(connection, guard, "SAVEPOINT dry_run")
            if watched:
                _watch(connection, guard, sql, params)
        before = connection.total_changes
        cursor = connection.execute(sql, params)
        try:
            outcome = fetch_rows(cursor, max_rows, max_bytes, partial=self.mode == "read", skip=skip)
        finally:
            cursor.close()  # ends the statement: no read transaction stays open
        if self.mode == "write":
            outcome.all_changes = connection.total_changes - before
            # A RETURNING statement whose rows were not all fetched has a rowcount of 0, though SQLite
            # made every change at its first step; changes() counts them. It would still hold the
            # count of an earlier statement after DDL, which changes no row: hence the guard.
            outcome.changes = _changes(connection) if outcome.all_changes else 0
            outcome.effects = tuple(guard.effects)
            if watched:
                guard.internal = True
                try:
                    outcome.digest = guard.changelog.finish(connection)
                finally:
                    guard.internal = False
            if dry_run:
                for step in ("ROLLBACK TO dry_run", "RELEASE dry_run", "ROLLBACK"):
                    _internal(connection, guard, step)
            elif expected is not None and outcome.digest != expected:
                _internal(connection, guard, "ROLLBACK")
                raise Changed(
                    "The data changed since the user confirmed the change: the statement would now make other "
                    f"changes than the ones they saw ({outcome.changes} row(s) now). Nothing was changed; run it "
                    "again to ask anew."
                )
            else:
                _internal(connection, guard, "COMMIT")
        if shape is not None:
            outcome.shaped = shape(outcome)
        return outcome

    @staticmethod
    def _settle(connection: sqlite3.Connection | None, guard: Guard) -> None:
        """On the worker thread, after a failed or cancelled statement: roll back what it began
        (the change log's triggers too)."""
        guard.changelog.reset()
        if connection is not None and connection.in_transaction:
            guard.stop = False
            _internal(connection, guard, "ROLLBACK")


_OUT_OF_MEMORY = (
    f"The statement needs more memory than this server allows ({HEAP_LIMIT // (1024 * 1024)} MiB): "
    "select fewer or shorter values (fewer columns, substr(x, 1, n), length(x)), or aggregate."
)


def _changes(connection: sqlite3.Connection) -> int:
    """Rows the last completed INSERT, UPDATE or DELETE changed itself (no trigger's)."""
    cursor = connection.execute("SELECT changes()")
    try:
        return int(cursor.fetchone()[0])
    finally:
        cursor.close()


_ROW_ACTIONS = frozenset({sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE})


def _watch(connection: sqlite3.Connection, guard: Guard, sql: str, params: Params) -> None:
    """Before a confirmed statement runs: which tables it may write (preparing ``EXPLAIN`` of it
    runs nothing, and the authorizer sees its triggers' and foreign keys' writes too), then the
    change log's triggers on them (see :mod:`.changes`)."""
    connection.execute(f"EXPLAIN {sql}", params).close()
    guard.internal = True
    try:
        guard.changelog.watch(connection, guard.written)
    finally:
        guard.internal = False


def _internal(connection: sqlite3.Connection, guard: Guard, sql: str) -> None:
    guard.internal = True
    try:
        connection.execute(sql).close()
    finally:
        guard.internal = False
