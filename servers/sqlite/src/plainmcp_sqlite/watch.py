"""Resource subscriptions: notice when the database changes, whoever changed it, and tell subscribers.

A background task of the server (``@server.background``). It sleeps while nobody is subscribed to
one of this server's resources, and watches only while someone is: the file, its rollback journal
and its write-ahead log (a commit in WAL mode touches only ``-wal``), through ``watchfiles``.

A file event alone is not a change: a WAL checkpoint rewrites the main file without changing any
data. So each batch of events is checked against ``PRAGMA data_version``, which SQLite changes
exactly when another connection (another process, or this server's write connection) committed.
Which table changed is not known cheaply, so every subscribed resource of this server is notified.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

import anyio
import watchfiles
from plainmcp import Server

from .engine import Database, DatabaseError

logger = logging.getLogger(__name__)

#: Resource URIs of this server start with this.
SCHEME = "sqlite://"
#: Milliseconds watchfiles waits for more events before it reports a batch.
STEP_MS = 50


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
        if not ours(server.bus.subscribed_uris()):
            await server.bus.wait_changed()
            continue
        stop = anyio.Event()
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(_stop_when_unwatched, server, stop)
            await _watch(server, db, stop)
            task_group.cancel_scope.cancel()


async def _stop_when_unwatched(server: Server, stop: anyio.Event) -> None:
    try:
        while ours(server.bus.subscribed_uris()):
            await server.bus.wait_changed()
    finally:
        # Also when the server stops: the watcher's thread returns at its next step when the
        # event is set, instead of holding shutdown until its own timeout.
        stop.set()


async def _watch(server: Server, db: Database, stop: anyio.Event) -> None:
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
        for uri in ours(server.bus.subscribed_uris()):
            await server.notify_resource_updated(uri)
    logger.info("stopped watching the database: no subscribed client")
