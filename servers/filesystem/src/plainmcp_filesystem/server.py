"""Wiring: the filesystem server, built from a :class:`Config` and the :class:`Deps` it works on.

:func:`build_server` is a pure factory: it opens nothing and starts nothing. What the server works
on outside its process (the allowed directories, opened; the file watcher) comes in ``deps``,
built by :func:`default_deps` unless a test or an embedder passes its own.
"""

from __future__ import annotations

import functools
import logging
import time
from dataclasses import dataclass

import anyio
from plainmcp import Server, add_app_view, app_tool_meta

from . import __version__, views, write_tools
from .access import Access
from .config import Config
from .directory_tools import DIRECTORY_TREE, LIST_DIRECTORY, DirectoryTools
from .paths import AccessPolicy
from .read_tools import (
    GET_FILE_INFO,
    LIST_ALLOWED_DIRECTORIES,
    READ_MEDIA_FILE,
    READ_MULTIPLE_FILES,
    READ_TEXT_FILE,
    FileTools,
)
from .resources import FileIndex, FileResources
from .resources import register as register_resources
from .search_tools import SEARCH_CONTENT, SEARCH_FILES, SearchTools
from .toolkit import add_tool, large_by_design
from .watch import ChangeFeed, Watcher
from .write_tools import (
    APPEND_FILE,
    COPY_FILE,
    CREATE_DIRECTORY,
    DELETE_FILE,
    EDIT_FILE,
    MOVE_FILE,
    WRITE_FILE,
    WriteTools,
)
from .writing import sweep_temporaries

logger = logging.getLogger(__name__)

NAME = "plainmcp-filesystem"
#: ``--help``'s summary.
DESCRIPTION = "MCP server for files below the given directories: read-only unless --allow-write."
INSTRUCTIONS = (
    "File access limited to the allowed directories (list_allowed_directories). Paths may be absolute or "
    "relative to the first allowed directory. Read files with read_text_file: results are capped at about 10k "
    "tokens, and a cut one gives nextCursor to pass back as cursor (or head/tail/startLine/endLine for a part). "
    "Find files by name with search_files and by content with search_content; listings and searches skip what "
    ".gitignore ignores unless gitignore is false. Files are also resources (file:// URIs) that can be "
    "subscribed to for change notifications."
)

#: A temporary file unchanged this long is left over from a killed server (a write in progress
#: changes its file all the time).
STALE_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class Deps:
    """What the server works on outside its process.

    Attributes:
        policy: the allowed directories, opened: every file operation starts from their descriptors.
        watcher: reports changes on disk below them while someone listens (None: no watching; the
            server then announces only its own writes). One watcher serves one server.
    """

    policy: AccessPolicy
    watcher: Watcher | None = None


def default_deps(config: Config) -> Deps:
    """Open ``config.roots`` (kept open while the server lives) and, with ``config.watch``, make a watcher.

    Raises:
        ValueError: an allowed directory does not exist or is not a directory.
    """
    policy = AccessPolicy(config.roots)
    # Without the operator's directories there is nothing to watch (the clients' roots vary per client).
    watcher = Watcher(policy, debounce_ms=config.debounce_ms) if config.watch and config.roots else None
    return Deps(policy, watcher)


def build_server(config: Config, deps: Deps | None = None) -> Server:
    """The filesystem server. Read tools always; write tools with ``config.allow_write`` (and then a
    background sweep of temporary files interrupted writes left behind); ``delete_file`` with
    ``config.allow_delete``; the watcher of ``deps`` as a background task, when there is one.

    Raises:
        ValueError: without ``deps``, from :func:`default_deps`.
    """
    deps = deps if deps is not None else default_deps(config)
    access = Access(deps.policy, use_roots=config.use_roots)
    server = Server(
        NAME,
        __version__,
        title="Filesystem",
        description="Safe file access with content search and live resource subscriptions",
        instructions=INSTRUCTIONS,
        resource_subscriptions=True,
    )
    server.roots_changed(access.roots_changed)
    _register_read_tools(server, config, access)
    index = FileIndex(deps.policy, config.max_resources)
    register_resources(server, FileResources(config, access, index))
    feed = ChangeFeed(server, deps.policy, index, deps.watcher)
    if config.allow_write:
        _register_write_tools(server, config, WriteTools(config, access, feed.after_write))
        server.background(functools.partial(_sweep, deps.policy))
    if deps.watcher is not None:
        server.background(functools.partial(deps.watcher.run, feed=feed))
        server.subscription_ready(deps.watcher.covering)
    return server


def _register_read_tools(server: Server, config: Config, access: Access) -> None:
    files, directories, search = FileTools(config, access), DirectoryTools(config, access), SearchTools(config, access)
    # In listing order.
    add_tool(server, READ_TEXT_FILE, files.read_text_file)
    add_tool(server, READ_MULTIPLE_FILES, files.read_multiple_files)
    add_tool(server, READ_MEDIA_FILE, files.read_media_file)
    large = large_by_design(config)
    add_tool(server, LIST_DIRECTORY, directories.list_directory, meta=large)
    add_tool(server, DIRECTORY_TREE, directories.directory_tree, meta=large)
    add_tool(server, SEARCH_FILES, search.search_files, meta=large)
    add_tool(server, SEARCH_CONTENT, search.search_content, meta=large)
    add_tool(server, GET_FILE_INFO, files.get_file_info)
    add_tool(server, LIST_ALLOWED_DIRECTORIES, files.list_allowed_directories)


def _register_write_tools(server: Server, config: Config, tools: WriteTools) -> None:
    add_tool(server, WRITE_FILE, tools.write_file)
    add_tool(server, APPEND_FILE, tools.append_file)
    add_app_view(
        server,
        write_tools.DIFF_URI,
        views.document("diff.html"),
        name="edit_diff",
        title="Edit diff",
        description="edit_file's dry run as a diff (line numbers, whitespace, CRLF/BOM) with an apply button",
    )
    add_tool(server, EDIT_FILE, tools.edit_file, meta=app_tool_meta(write_tools.DIFF_URI))
    add_tool(server, CREATE_DIRECTORY, tools.create_directory)
    add_tool(server, MOVE_FILE, tools.move_file)
    add_tool(server, COPY_FILE, tools.copy_file)
    if config.allow_delete:
        add_tool(server, DELETE_FILE, tools.delete_file)


async def _sweep(policy: AccessPolicy, server: Server) -> None:
    """The background task that removes temporary files killed servers left behind, once, at start."""
    removed = await anyio.to_thread.run_sync(
        functools.partial(
            sweep_temporaries,
            [place for _, place in policy.places()],
            older_than=STALE_SECONDS,
            now=time.time(),
            max_entries=100_000,
        )
    )
    if removed:
        logger.info("removed %d temporary files left behind by an interrupted write", removed)
