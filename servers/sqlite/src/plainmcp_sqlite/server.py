"""Wiring: the SQLite server from a :class:`~plainmcp_sqlite.config.Config`.

A pure factory: nothing is opened here. The read connection opens at the first statement; the write
connection (``--allow-write`` only) at the first ``execute``. Both close when serving ends
(:class:`.watch.DatabaseUpkeep`, the server's background task).
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass

from plainmcp import Server

from . import prompts, resources, tools
from .catalog import Catalog
from .config import Config
from .engine import Database
from .probe import VersionProbe
from .watch import DatabaseUpkeep

NAME = "plainmcp-sqlite"
DESCRIPTION = (
    "Explore and query a SQLite database over MCP. Read-only unless --allow-write; every statement has "
    "a deadline and results are capped. Without --db, a small bundled sample database (a bookshop) is "
    "served, read-only."
)
INSTRUCTIONS = (
    "A SQLite database. Start with list_tables and describe_table (or the sqlite://schema resource), "
    "then query with one statement per call, values passed as params. Results are JSON rows, capped: "
    "when truncated is true, page with ORDER BY ... LIMIT/OFFSET. Statements have a time limit. "
)


@dataclass(frozen=True, slots=True)
class Deps:
    """The databases the server talks to; tests and embedders may pass their own (none opened yet).

    Args:
        reader: the read-only connection every tool but ``execute``, the resources, the prompts and
            the watcher use.
        writer: the connection ``execute`` uses; None offers no ``execute`` tool.
    """

    reader: Database
    writer: Database | None = None


def default_deps(config: Config) -> Deps:
    """The connections ``config`` asks for (none opened yet)."""
    reader = Database(config.path, "read", timeout=config.timeout, immutable=config.is_sample)
    writer = Database(config.path, "write", timeout=config.timeout) if config.allow_write else None
    return Deps(reader, writer)


def build_server(config: Config, deps: Deps | None = None) -> Server:
    """The SQLite server for ``config`` over ``deps`` (by default :func:`default_deps`): tools,
    resources with subscriptions, prompts, and the background task that watches the file for
    subscribers and closes the connections when serving ends. Opens nothing."""
    deps = deps or default_deps(config)
    mode = "read-only"
    if deps.writer:
        mode = "writes enabled through the execute tool" + (
            ", each confirmed by the user first" if config.confirm_writes else ""
        )
    server = Server(
        NAME,
        importlib.metadata.version(NAME),
        title="SQLite",
        description="Explore and query a SQLite database: read-only by default, bounded in time and size",
        instructions=INSTRUCTIONS + f"This server is {mode}.",
        resource_subscriptions=True,
    )
    # Shared: one cache of what the database holds, checked for changes by a probe on the event loop.
    catalogue = Catalog(deps.reader, VersionProbe(deps.reader.path, immutable=deps.reader.immutable))
    tools.register(
        server,
        tools.ReadTools(config, catalogue),
        tools.WriteTools(config, deps.writer) if deps.writer is not None else None,
    )
    resources.register(server, resources.DatabaseResources(config, catalogue))
    prompts.register(server, prompts.DatabasePrompts(catalogue))
    # The bundled sample never changes: it is not watched.
    server.background(
        DatabaseUpkeep(catalogue, (deps.reader, deps.writer), watch=config.watch and not config.is_sample)
    )
    return server
