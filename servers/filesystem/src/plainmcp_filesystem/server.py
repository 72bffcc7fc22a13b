"""Wiring: the filesystem server, built from a :class:`Config`. A pure factory: no I/O happens until
a transport serves it, except opening the allowed directories (their descriptors are kept: every
file operation starts from them)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import anyio
from plainmcp import Server

from . import read_tools, resources, write_tools
from .access import Access
from .config import Config
from .paths import AccessPolicy
from .watch import ChangeFeed, Watcher
from .writing import sweep_temporaries

logger = logging.getLogger(__name__)

NAME = "plainmcp-filesystem"
VERSION = "0.1.0"

INSTRUCTIONS = (
    "File access limited to the allowed directories (list_allowed_directories). Paths may be absolute or "
    "relative to the first allowed directory. Read files with read_text_file (use head/tail/startLine/endLine "
    "for large files); find files by name with search_files and by content with search_content. Files are also "
    "resources (file:// URIs) that can be subscribed to for change notifications."
)


@dataclass(frozen=True, slots=True)
class Parts:
    """What :func:`build_server` made besides the server, for tests and embedding."""

    access: Access
    feed: ChangeFeed
    watcher: Watcher | None


#: A temporary file unchanged this long is left over from a killed server (a write in progress
#: changes its file all the time).
STALE_SECONDS = 60.0


def _sweeper(policy: AccessPolicy) -> Callable[[Server], Awaitable[None]]:
    """The background task that removes temporary files killed servers left behind, once, at start."""

    async def sweep(server: Server) -> None:
        removed = await anyio.to_thread.run_sync(functools.partial(
            sweep_temporaries, [place for _, place in policy.places()], older_than=STALE_SECONDS,
            now=time.time(), max_entries=100_000))
        if removed:
            logger.info("removed %d temporary files left behind by an interrupted write", removed)

    return sweep


def build_server(config: Config, *, parts: list[Parts] | None = None) -> Server:
    """The filesystem server. Read tools always; write tools with ``config.allow_write`` (and then a
    background sweep of temporary files interrupted writes left behind); ``delete_file`` with
    ``config.allow_delete``; a file watcher with ``config.watch``.

    ``parts``, when given, receives the :class:`Parts` (a list, so the return type stays ``Server``).

    Raises:
        ValueError: an allowed directory does not exist or is not a directory.
    """
    policy = AccessPolicy(config.roots)
    access = Access(policy, use_roots=config.use_roots)
    server = Server(
        NAME,
        VERSION,
        title="Filesystem",
        description="Safe file access with content search and live resource subscriptions",
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
    )
    server.on_roots_changed = access.roots_changed
    read_tools.register(server, config, access)
    index = resources.register(server, config, access)
    feed = ChangeFeed(server, policy, index)
    if config.allow_write:
        write_tools.register(server, config, access, feed.after_write)
        server.background(_sweeper(policy))
    watcher = None
    if config.watch:
        watcher = Watcher(feed, debounce_ms=config.debounce_ms)
        server.background(watcher.run)
    if parts is not None:
        parts.append(Parts(access, feed, watcher))
    return server
