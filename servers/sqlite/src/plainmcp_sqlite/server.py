"""Wiring: the SQLite server from a :class:`~plainmcp_sqlite.config.Config`.

A pure factory: nothing is opened here. The read connection opens at the first statement; the write
connection (``--allow-write`` only) at the first ``execute``. Both close when serving ends.
"""

from __future__ import annotations

from dataclasses import dataclass

import anyio
from plainmcp import Server

from . import __version__, catalog, prompts, resources, tools, watch
from .config import Config
from .engine import Database
from .probe import VersionProbe

NAME = "plainmcp-sqlite"

INSTRUCTIONS = (
    "A SQLite database. Start with list_tables and describe_table (or the sqlite://schema resource), "
    "then query with one statement per call, values passed as params. Results are JSON rows, capped: "
    "when truncated is true, page with ORDER BY ... LIMIT/OFFSET. Statements have a time limit. "
)


@dataclass(frozen=True, slots=True)
class Deps:
    """The databases the server talks to; tests may pass their own."""

    reader: Database
    writer: Database | None = None


def default_deps(config: Config) -> Deps:
    """The connections ``config`` asks for (none opened yet)."""
    reader = Database(config.path, "read", timeout=config.timeout, immutable=config.is_sample)
    writer = Database(config.path, "write", timeout=config.timeout) if config.allow_write else None
    return Deps(reader, writer)


def build_server(config: Config | None = None, deps: Deps | None = None) -> Server:
    """The SQLite server: tools, resources with subscriptions, prompts, and the file watcher."""
    config = config or Config()
    deps = deps or default_deps(config)
    mode = "writes enabled through the execute tool" if deps.writer else "read-only"
    server = Server(
        NAME,
        __version__,
        title="SQLite",
        description="Explore and query a SQLite database: read-only by default, bounded in time and size",
        instructions=INSTRUCTIONS + f"This server is {mode}.",
        resource_subscriptions=True,
    )
    # Shared: one cache of what the database holds, checked for changes by a probe on the event loop.
    catalogue = catalog.Catalog(deps.reader, VersionProbe(deps.reader.path, immutable=deps.reader.immutable))
    tools.register(server, config, catalogue, deps.writer)
    resources.register(server, config, catalogue)
    prompts.register(server, config, catalogue)

    @server.background
    async def lifetime(server: Server) -> None:
        """Watch the file for subscribers while served; close the connections when serving ends."""
        try:
            if config.watch and not config.is_sample:  # the bundled sample never changes
                await watch.watch_database(server, deps.reader)
            else:
                await anyio.sleep_forever()
        finally:
            if catalogue.probe is not None:
                catalogue.probe.close()
            with anyio.CancelScope(shield=True):
                for db in (deps.reader, deps.writer):
                    if db is not None:
                        await db.close()

    return server
