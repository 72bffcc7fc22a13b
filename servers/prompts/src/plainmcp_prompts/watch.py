"""Keeping the library current while the server is served: the first scan, then watchfiles.

:class:`LibraryUpkeep` is the server's background task. It reads the library as serving starts
(before any request is taken), then, unless watching is off, watches the directories.

Changes are debounced by watchfiles itself: after the first change it waits until the files have
been quiet for ``debounce_ms`` (an editor's save is several writes), then the library is rescanned
once; the catalog publishes only if what is served changed. As soon as the watch is registered with
the kernel (watchfiles' RustNotify, made here so that we know the moment), one rescan catches
anything edited between the first scan and then, and ``caught_up`` is called: from then on every
change of a file is seen. The watch's waits never time out (one that does drops a change arriving
as it gives up).

Watching never ends the server. A directory that cannot be read is not watched (the library's scan
reports it); if watchfiles cannot watch the others (a folder inside them cannot be read, too many
watches), that is logged once and the library is rescanned every :data:`POLL_SECONDS` instead.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

import anyio
from plainmcp import Server, watchfiles_polling

from . import beneath
from .catalog import Catalog

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

logger = logging.getLogger(__name__)

#: Longest a burst of changes is held back before a rescan, however busy the files are.
MAX_HOLD_MS = 2000
#: Time between two rescans when watchfiles cannot watch the directories.
POLL_SECONDS = 1.0


class LibraryUpkeep:
    """The background task serving ``catalog``'s library: the first scan, then (if ``watch``) the
    watcher; ``caught_up()`` is called once the watcher runs and has rescanned."""

    def __init__(self, catalog: Catalog, *, watch: bool, debounce_ms: int, caught_up: Callable[[], None]) -> None:
        self.catalog = catalog
        self.watch = watch
        self.debounce_ms = debounce_ms
        self.caught_up = caught_up

    async def __call__(self, server: Server) -> None:
        # The first scan runs before this task's first await. Transports start the background tasks
        # before they take a request, and the event loop runs tasks in the order they were started:
        # the first request already sees every prompt. Its warnings go to the logging the command
        # line configured (build_server runs before that, so it reads nothing).
        self.catalog.load()
        if self.watch:
            await watch_library(self.catalog, self.debounce_ms, self.caught_up)


async def watch_library(catalog: Catalog, debounce_ms: int, caught_up: Callable[[], None]) -> None:
    """Rescan ``catalog``'s library on every change of its directories, until cancelled;
    ``caught_up()`` once the watcher (or the polling that replaces it) runs and has rescanned."""
    dirs = [directory for directory in catalog.library.dirs if _readable(directory)]
    if not dirs:
        logger.warning("no readable prompt directory to watch")
        return
    try:
        await _watch(catalog, dirs, debounce_ms, caught_up)
    except OSError as error:
        logger.warning(
            "cannot watch the prompt directories (%s); rescanning every %g s instead", _reason(error), POLL_SECONDS
        )
        await _poll(catalog, caught_up)


async def _watch(catalog: Catalog, dirs: list[str], debounce_ms: int, caught_up: Callable[[], None]) -> None:
    # Imported on a worker thread, not at start: the first request is answered meanwhile instead of
    # after the milliseconds watchfiles (and multiprocessing, which it imports) take to load.
    rust_notify = (await anyio.to_thread.run_sync(importlib.import_module, "watchfiles._rust_notify")).RustNotify
    # Made on a worker thread too: its constructor registers the watches (an OSError if it cannot). Made
    # by us rather than by awatch, which makes it on the loop at its first step, so that we know when.
    with anyio.CancelScope(shield=True):  # once made it is closed below, even if we are cancelled
        notify = await anyio.to_thread.run_sync(_open, rust_notify, dirs)
    stop = anyio.Event()
    with notify:
        logger.info("watching %s", ", ".join(dirs))
        # Every change from now on is seen; this rescan catches those made since the first scan.
        await _rescan(catalog)
        caught_up()
        try:
            async with anyio.create_task_group() as task_group:
                # watchfiles waits in a worker thread that a cancellation cannot interrupt; this task
                # ends that wait (the thread checks the event every step) as soon as we are cancelled.
                task_group.start_soon(_set_when_cancelled, stop)
                # No timeout (0): a wait that times out drops a change arriving as it gives up.
                hold = max(MAX_HOLD_MS, debounce_ms)
                while await anyio.to_thread.run_sync(notify.watch, hold, debounce_ms, 0, stop) != "stop":
                    await _rescan(catalog)
                task_group.cancel_scope.cancel()
        except BaseExceptionGroup as group:  # the task group wraps watchfiles' error
            failures, others = group.split(OSError)
            if failures is None or others is not None:
                raise
            raise _first(failures) from None


def _open(rust_notify: type[RustNotify], dirs: list[str]) -> RustNotify:
    """watchfiles' RustNotify on ``dirs`` (recursive), with the options its ``awatch`` reads from the
    environment (``WATCHFILES_FORCE_POLLING``, polling on WSL, ``WATCHFILES_POLL_DELAY_MS``,
    ``WATCHFILES_IGNORE_PERMISSION_DENIED``, ``WATCHFILES_DEBUG``)."""
    force_polling, poll_delay_ms = watchfiles_polling()
    return rust_notify(
        dirs,
        bool(os.environ.get("WATCHFILES_DEBUG")),
        force_polling,
        poll_delay_ms,
        True,
        bool(os.environ.get("WATCHFILES_IGNORE_PERMISSION_DENIED")),
    )


async def _rescan(catalog: Catalog) -> None:
    try:
        await catalog.reload()
    except Exception:  # a rescan must never end the watching; the traceback goes to stderr
        logger.exception("rescanning the prompt library failed")


async def _poll(catalog: Catalog, caught_up: Callable[[], None]) -> None:
    rescanned = False
    while True:
        await _rescan(catalog)
        if not rescanned:
            rescanned = True
            caught_up()
        await anyio.sleep(POLL_SECONDS)


def _first(group: BaseExceptionGroup) -> BaseException:
    error = group.exceptions[0]
    return _first(error) if isinstance(error, BaseExceptionGroup) else error


def _reason(error: OSError) -> str:
    # watchfiles raises its OSErrors without an errno; its message names paths, kept for the log.
    if error.errno:
        return os.strerror(error.errno).lower()
    return "permission denied" if isinstance(error, PermissionError) else type(error).__name__


def _readable(directory: str) -> bool:
    try:
        os.close(beneath.open_root(directory))
    except OSError:
        return False
    return True


async def _set_when_cancelled(event: anyio.Event) -> None:
    try:
        await anyio.sleep_forever()
    finally:
        event.set()
