"""Wiring: the SQLite server from a :class:`~plainmcp_sqlite.config.Config`.

A pure factory: nothing is opened here. The read connection opens at the first statement; the write
connection (``--allow-write`` only) at the first ``execute``. Both close when serving ends
(:class:`.watch.DatabaseUpkeep`, the server's background task).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from plainmcp import Server

from . import __version__, canned, prompts, resources, tools
from .catalog import Catalog
from .config import Config, Named
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
    "A SQLite database. Start with describe_database, then describe_table or sample_rows (or the "
    "sqlite://schema resource), then query with one statement per call, values passed as params. "
    "Results are JSON rows, capped: "
    "when truncated is true, repeat the call with cursor set to next_cursor. Statements have a time limit. "
)


@dataclass(frozen=True, slots=True)
class Deps:
    """The databases the server talks to; tests and embedders may pass their own (none opened yet).

    Args:
        reader: the read-only connection to the first database, which every tool but ``execute``,
            the resources, the prompts and the watcher use by default.
        writer: the connection ``execute`` uses for the first database; None when it is read-only.
        others: the other databases (``--db NAME=PATH``), each as (name, reader, writer or None).
    """

    reader: Database
    writer: Database | None = None
    others: tuple[tuple[str, Database, Database | None], ...] = ()

    @property
    def databases(self) -> tuple[Database, ...]:
        """Every connection, for closing."""
        pairs = [(self.reader, self.writer), *((reader, writer) for _, reader, writer in self.others)]
        return tuple(db for pair in pairs for db in pair if db is not None)


def default_deps(config: Config) -> Deps:
    """The connections ``config`` asks for (none opened yet). Each database's connections attach the
    others read-only under their names."""

    def connections(named: Named) -> tuple[Database, Database | None]:
        attach = tuple((other.name, other.path) for other in config.databases if other.name != named.name)
        options: dict[str, Any] = {"timeout": config.timeout, "attach": attach}
        reader = Database(named.path, "read", immutable=config.is_sample, **options)
        return reader, Database(named.path, "write", **options) if named.writable else None

    first, *others = config.databases
    reader, writer = connections(first)
    return Deps(reader, writer, tuple((named.name, *connections(named)) for named in others))


def build_server(config: Config, deps: Deps | None = None) -> Server:
    """The SQLite server for ``config`` over ``deps`` (by default :func:`default_deps`): tools,
    resources with subscriptions, prompts, and the background task that watches the file for
    subscribers and closes the connections when serving ends. Opens nothing."""
    deps = deps or default_deps(config)
    writers = {name: writer for name, _, writer in deps.others if writer is not None}
    mode = "read-only"
    if deps.writer or writers:
        mode = "writes enabled through the execute tool" + (
            ", each confirmed by the user first" if config.confirm_writes else ""
        )
    names = [config.name, *(name for name, _, _ in deps.others)]
    several = ""
    if deps.others:
        several = (
            f" Databases: {', '.join(names)}. Tools take db, by default {names[0]}"
            + (f" ({next(iter(writers))} for execute)" if writers and deps.writer is None else "")
            + "; a query reads the other databases as name.table."
        )
    server = Server(
        NAME,
        __version__,
        title="SQLite",
        description="Explore and query a SQLite database: read-only by default, bounded in time and size",
        instructions=INSTRUCTIONS + f"This server is {mode}." + several,
        resource_subscriptions=True,
    )
    # Shared: one cache of what each database holds, checked for changes by a probe on the event loop.
    catalogue = _catalogue(deps.reader)
    others = {name: _catalogue(reader) for name, reader, _ in deps.others}
    read = tools.ReadTools(config, catalogue, others)
    write = tools.WriteTools(config, deps.writer, writers) if deps.writer is not None or writers else None
    tools.register(server, read, write)
    if config.metadata is not None:
        canned.register(server, config.metadata, read, write)
    resources.register(server, resources.DatabaseResources(config, catalogue))
    prompts.register(server, prompts.DatabasePrompts(catalogue))
    # The bundled sample never changes: it is not watched.
    watch = config.watch and not config.is_sample
    upkeep = DatabaseUpkeep(catalogue, deps.databases, watch=watch, others=others.values())
    server.background(upkeep)
    # A subscription is acknowledged once the database's watch is in place (a commit right after is heard).
    server.subscription_ready(upkeep.ready)
    return server


def _catalogue(reader: Database) -> Catalog:
    return Catalog(reader, VersionProbe(reader.path, immutable=reader.immutable))
