"""Resource subscriptions: notice when the database changes, whoever changed it, and tell subscribers.

:class:`DatabaseUpkeep` is the server's background task: it sleeps while nobody is subscribed to
one of this server's resources, and watches only while someone is: the file, its rollback journal
and its write-ahead log (a commit in WAL mode touches only ``-wal``), through ``watchfiles``.

A file event alone is not a change: a WAL checkpoint rewrites the main file without changing any
data. So each batch of events is checked against ``PRAGMA data_version``, which SQLite changes
exactly when another connection (another process, or this server's write connection) committed.
Which table changed is not known cheaply, so every subscribed resource of this server is notified.
When serving ends, the task closes the server's connections.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import anyio
from plainmcp import Server

from .catalog import Catalog
from .engine import Database, DatabaseError

logger = logging.getLogger(__name__)

#: Resource URIs of this server start with this.
SCHEME = "sqlite://"
#: Milliseconds watchfiles waits for more events before it reports a batch.
STEP_MS = 50


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

    async def __call__(self, server: Server) -> None:
        try:
            if self.watch:
                await watch_database(server, self.catalogue.db)
            else:
                await anyio.sleep_forever()
        finally:
            for catalogue in (self.catalogue, *self.others):
                if catalogue.probe is not None:
                    catalogue.probe.close()
            with anyio.CancelScope(shield=True):
                for db in self.databases:
                    await db.close()


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


async def watch_database(server: Server, db: Database) -> None:
    """Run for the server's lifetime: watch while clients are subscribed, publish
    ``notifications/resources/updated`` for each subscribed URI of this server when data changed."""
    while True:
        if not ours(server.subscribed_uris()):
            await server.subscriptions_changed()
            continue
        stop = anyio.Event()
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(_stop_when_unwatched, server, stop)
            await _watch(server, db, stop)
            task_group.cancel_scope.cancel()


async def _stop_when_unwatched(server: Server, stop: anyio.Event) -> None:
    try:
        while ours(server.subscribed_uris()):
            await server.subscriptions_changed()
    finally:
        # Also when the server stops: the watcher's thread returns at its next step when the
        # event is set, instead of holding shutdown until its own timeout.
        stop.set()


async def _watch(server: Server, db: Database, stop: anyio.Event) -> None:
    import watchfiles  # here, not at start: only a subscribed client needs it (tens of ms of cold start)

    files = watched_files(db.path)
    version = await data_version(db)
    logger.info("watching the database for subscribed clients")
    async for _changes in watchfiles.awatch(
        db.path.resolve().parent,
        watch_filter=lambda _change, name: name in files,
        recursive=False,
        step=STEP_MS,
        stop_event=stop,
    ):
        current = await data_version(db)
        if current is not None and current == version:
            continue
        version = current
        for uri in ours(server.subscribed_uris()):
            await server.notify_resource_updated(uri, observed=True)
    logger.info("stopped watching the database: no subscribed client")
