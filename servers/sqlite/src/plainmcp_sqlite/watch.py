"""Resource subscriptions: notice when the database changes, whoever changed it, and tell subscribers.

:class:`DatabaseUpkeep` is the server's background task: it sleeps while nobody is subscribed to
one of this server's resources, and watches only while someone is: the file, its rollback journal
and its write-ahead log (a commit in WAL mode touches only ``-wal``), through ``watchfiles``.

A file event alone is not a change: a WAL checkpoint rewrites the main file without changing any
data. So each batch of events is checked against ``PRAGMA data_version``, which SQLite changes
exactly when another connection (another process, or this server's write connection) committed.
Which table changed is not known cheaply, so every subscribed resource of this server is notified.
When serving ends, the task closes the server's connections.

When a subscription is acknowledged: once the watch is registered with the kernel
(:meth:`DatabaseUpkeep.ready`, the server's ``subscription_ready`` gate), so a client may have the
database changed as soon as it has the answer. The wait is bounded (:data:`READY_SECONDS`, logged
once); a watch that cannot be set up is logged once and subscriptions are answered at once (without
updates). watchfiles' ``RustNotify`` is made here, on a worker thread, to know when its watch is in
place (``awatch`` makes it on the loop at its first step and does not say); the filesystem server
does the same in its own ``watch.py`` (servers do not share code).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
from plainmcp import Server, watchfiles_polling

from .catalog import Catalog
from .engine import Database, DatabaseError

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

logger = logging.getLogger(__name__)

#: Resource URIs of this server start with this.
SCHEME = "sqlite://"
#: Milliseconds between the watch thread's checks of its stop event.
STEP_MS = 50
#: Milliseconds watchfiles groups events for before it reports a batch (awatch's default).
DEBOUNCE_MS = 1600
#: How long one wait of the watch's thread lasts: 0, until changes come or it is stopped (checked every
#: step). A wait that times out drops what arrives as it gives up, so it never times out.
IDLE_MS = 0
#: The longest a subscription waits for the watch to be in place before it is answered anyway.
READY_SECONDS = 10.0


class DatabaseUpkeep:
    """The server's background task (``server.background(DatabaseUpkeep(...))``): watch the file for
    subscribers while served (when ``watch``), and close the catalogue's probe and ``databases``
    when serving ends."""

    def __init__(
        self, catalogue: Catalog, databases: Iterable[Database | None], *, watch: bool, others: Iterable[Catalog] = ()
    ) -> None:
        self.catalogue = catalogue
        self.databases = [db for db in databases if db is not None]
        self.watch = watch
        #: The catalogues of the other databases (``--db NAME=PATH``): not watched, their probes closed.
        self.others = list(others)
        #: True while a watch is registered with the kernel; ``failed`` once it could not be set up
        #: (until nobody is subscribed and it is tried again).
        self.watching = False
        self.failed = False
        self._moved = anyio.Event()  # set (and replaced) whenever watching or failed change
        self._slow_logged = False
        self._failure_logged = False

    async def __call__(self, server: Server) -> None:
        try:
            if self.watch:
                await self._watch_database(server, self.catalogue.db)
            else:
                await anyio.sleep_forever()
        finally:
            for catalogue in (self.catalogue, *self.others):
                if catalogue.probe is not None:
                    catalogue.probe.close()
            with anyio.CancelScope(shield=True):
                for db in self.databases:
                    await db.close()

    async def ready(self, uris: frozenset[str]) -> None:
        """The ``subscription_ready`` gate: return once a commit made now would be reported (the watch
        is registered), at once for no URI of this server, without a watch, or when the watch failed
        (logged), and after :data:`READY_SECONDS` at most (logged once): a subscription is always answered."""
        if not self.watch or not ours(uris):
            return
        with anyio.move_on_after(READY_SECONDS) as waiting:
            while not (self.watching or self.failed):
                await self._moved.wait()
        if waiting.cancelled_caught and not self._slow_logged:
            self._slow_logged = True
            logger.warning(
                "the database watch was not in place after %g s; subscriptions are answered without waiting for it",
                READY_SECONDS,
            )

    def _moving(self) -> None:
        self._moved.set()
        self._moved = anyio.Event()

    async def _watch_database(self, server: Server, db: Database) -> None:
        """Run for the server's lifetime: watch while clients are subscribed, publish
        ``notifications/resources/updated`` for each subscribed URI of this server when data changed."""
        while True:
            if not ours(server.subscribed_uris()):
                await server.subscriptions_changed()
                continue
            stop = anyio.Event()
            self.failed = False
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(_stop_when_unwatched, server, stop)
                await self._watch(server, db, stop)
                task_group.cancel_scope.cancel()

    async def _watch(self, server: Server, db: Database, stop: anyio.Event) -> None:
        # Imported here, at the first subscription, never before the first answer (a cold start's cost).
        import watchfiles._rust_notify  # noqa: F401

        files = watched_files(db.path)
        # Read before the watch exists: a commit after its registration makes an event and a new version.
        version = await data_version(db)
        try:
            with anyio.CancelScope(shield=True):  # once made it is closed below
                notify = await anyio.to_thread.run_sync(_open, str(db.path.resolve().parent))
        except Exception:
            # The watcher must never end the serving: without it, subscriptions just go quiet.
            if not self._failure_logged:
                self._failure_logged = True
                logger.exception("the database watch could not be set up; subscriptions get no updates")
            self.failed = True
            self._moving()
            await stop.wait()
            return
        try:
            self.watching = True
            self._moving()
            logger.info("watching the database for subscribed clients")
            while True:
                changes = await anyio.to_thread.run_sync(notify.watch, DEBOUNCE_MS, STEP_MS, IDLE_MS, stop)
                if isinstance(changes, str):  # "stop" (nobody subscribed, or serving ends)
                    break
                if not any(changed in files for _, changed in changes):
                    continue
                current = await data_version(db)
                if current is not None and current == version:
                    continue
                version = current
                for uri in ours(server.subscribed_uris()):
                    await server.notify_resource_updated(uri, observed=True)
        finally:
            self.watching = False
            self._moving()
            notify.close()
        logger.info("stopped watching the database: no subscribed client")


def ours(uris: Iterable[str]) -> list[str]:
    return sorted(uri for uri in uris if uri.startswith(SCHEME))


def watched_files(path: Path) -> set[str]:
    """The database file and the journal files whose change can mean new data."""
    base = str(path.resolve())
    return {base, base + "-wal", base + "-journal"}


async def data_version(db: Database) -> int | None:
    try:
        return int((await db.run("PRAGMA data_version", max_rows=1, timeout=1.0)).rows[0][0])
    except DatabaseError:
        logger.warning("could not read the database's data_version", exc_info=True)
        return None


async def _stop_when_unwatched(server: Server, stop: anyio.Event) -> None:
    try:
        while ours(server.subscribed_uris()):
            await server.subscriptions_changed()
    finally:
        # Also when the server stops: the watcher's thread returns at its next step when the
        # event is set, instead of holding shutdown until its own timeout.
        stop.set()


def _open(directory: str) -> RustNotify:
    """A RustNotify on the database's directory, not recursive, registered when it returns. Runs on a
    worker thread."""
    from watchfiles._rust_notify import RustNotify  # imported by the watcher already

    force_polling, poll_delay_ms = watchfiles_polling()
    return RustNotify([directory], False, force_polling, poll_delay_ms, False, True)
