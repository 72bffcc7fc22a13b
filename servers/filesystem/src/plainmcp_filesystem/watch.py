"""One file watcher per server, feeding resource subscriptions and list changes.

Lifecycle: a background task (``Server.background``) waits until someone listens
(``Server.listeners()``: a connection being served, or a 2026-07-28 listen stream), then watches;
when the last one leaves it stops. Nothing is watched while nobody could be told.

What is watched: every directory below the allowed directories, *each one non-recursively*, as
found by our own walk. The notify backend's recursive mode follows symbolic links (a link to ``/``
would make it watch the whole disk and report changes outside the roots); watching the directories
the walk found keeps it inside. When a burst adds or removes directories, the watch is rebuilt:
the new one is registered before the old one closes, and what the old one saw meanwhile is
published (no change is lost; one may be told twice). At most :data:`MAX_WATCHED_DIRECTORIES` are
watched (a warning says when more exist).

When a subscription is acknowledged: once the watch that reports its changes is registered with
the kernel (:meth:`Watcher.covering`, the server's ``subscription_ready`` gate), so a client may
change the file as soon as it has the answer. The wait is bounded (:data:`READY_SECONDS`); a watch
that cannot be set up is logged once and subscriptions are answered at once (without updates).

What is sent, per burst (changes grouped until ``debounce_ms`` or a quiet 50 ms): one
``notifications/resources/updated`` per subscribed URI that the burst touched (a file, or
anything below a subscribed directory), and one ``notifications/resources/list_changed`` if files
came or went. A burst of thousands of changes is one batch, so clients are never flooded.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING

import anyio
from plainmcp import watchfiles_polling

from .access import file_uri_path
from .anchored import open_directory
from .paths import AccessError, AccessPolicy
from .walk import walk

if TYPE_CHECKING:
    from plainmcp import Server
    from watchfiles._rust_notify import RustNotify

    from .resources import FileIndex

logger = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = 1, 2, 3
MAX_WATCHED_DIRECTORIES = 20_000
STEP_MS = 50
#: How long one wait of the watch's thread lasts: 0, until changes come or it is stopped (checked every
#: step). A wait that times out drops what arrives as it gives up, so it never times out.
IDLE_MS = 0
#: The longest a subscription waits for the watch to be in place before it is answered anyway.
READY_SECONDS = 10.0


def _ancestors(path: str, stop: set[str]) -> Iterable[str]:
    """``path`` and its parent directories, up to one in ``stop`` (an allowed directory)."""
    while True:
        yield path
        if path in stop:
            return
        parent = os.path.dirname(path)
        if parent == path:
            return
        path = parent


class ChangeFeed:
    """Turns batches of changed paths into notifications; shared by the watcher and the write tools.

    While ``watcher`` watches, the write tools leave publishing to it, so a change is announced once.
    """

    def __init__(self, server: Server, policy: AccessPolicy, index: FileIndex | None, watcher: Watcher | None) -> None:
        self.server = server
        self.policy = policy
        self.index = index
        self.watcher = watcher

    async def publish(self, paths: Iterable[str], structural: bool) -> None:
        """Announce a batch: ``paths`` are real paths that changed; ``structural`` if names came or went."""
        roots = {root.real for root in self.policy.roots}
        touched: set[str] = set()
        for path in paths:
            touched.update(_ancestors(path, roots))
        for uri in sorted(self.server.subscribed_uris()):
            subscribed = file_uri_path(uri)
            if subscribed is None:
                continue
            try:
                real = self.policy.resolve(subscribed, must_exist=False).real
            except AccessError:
                continue
            if real in touched:
                await self.server.notify_resource_updated(uri, observed=True)
        if structural:
            if self.index is not None:
                self.index.invalidate()
            await self.server.notify_resources_changed(observed=True)

    async def after_write(self, paths: list[str], structural: bool) -> None:
        """Called by the write tools; publishes only when no watcher will."""
        if self.index is not None and structural:
            self.index.invalidate()
        if self.watcher is None or not self.watcher.watching:
            await self.publish(paths, structural)


class Watcher:
    """Watches the directories of ``policy`` (the operator's) for one server, while someone listens:
    ``server.background(functools.partial(watcher.run, feed=feed))``, and
    ``server.subscription_ready(watcher.covering)`` so that a subscription is acknowledged once its
    changes would be seen.

    ``watching`` is True while a watch is registered with the kernel; ``ready`` is set each time one
    is (tests wait on it before changing files); ``directories`` are the ones watched; ``failed`` is
    True once the watch could not be set up (until nobody listens and it is tried again).
    """

    def __init__(self, policy: AccessPolicy, *, debounce_ms: int) -> None:
        self.policy = policy
        self.debounce_ms = debounce_ms
        self.directories: set[str] = set()
        self.watching = False
        self.failed = False
        self.ready = anyio.Event()
        self._moved = anyio.Event()  # set (and replaced) whenever watching, directories or failed change
        self._slow_logged = False

    async def run(self, server: Server, *, feed: ChangeFeed) -> None:
        """Watch while ``server`` has listeners, publishing each batch of changes to ``feed``."""
        while True:
            while not server.listeners():
                await server.subscriptions_changed()
            done = anyio.Event()
            self.failed = False
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._watch, feed, done)
                try:
                    while server.listeners():
                        await server.subscriptions_changed()
                finally:
                    done.set()  # the watch's thread sees it within STEP_MS (also when we are cancelled)
            logger.info("nobody listens: file watcher stopped")

    async def covering(self, uris: frozenset[str]) -> None:
        """Return once a change of ``uris`` made now would be reported: a watch is registered and
        includes the directory of each (a new directory once the watch is rebuilt). Also returns
        when the watch failed (its error was logged; subscriptions then get no updates, as before),
        and after :data:`READY_SECONDS` at most (logged once): a subscription is always answered."""
        with anyio.move_on_after(READY_SECONDS) as waiting:
            while not (self.failed or (self.watching and all(self._covers(uri) for uri in uris))):
                await self._moved.wait()
        if waiting.cancelled_caught and not self._slow_logged:
            self._slow_logged = True
            logger.warning(
                "the file watch was not in place after %g s; subscriptions are answered without waiting for it",
                READY_SECONDS,
            )

    def _covers(self, uri: str) -> bool:
        """True unless ``uri`` names a path whose directory exists but is not watched yet (a rebuild
        will add it). What cannot be watched (outside, unreadable, past the limit) is not waited for."""
        try:
            subscribed = file_uri_path(uri)
            if subscribed is None or len(self.directories) >= MAX_WATCHED_DIRECTORIES:
                return True
            real = self.policy.resolve(subscribed, must_exist=False).real
        except (AccessError, OSError, ValueError):  # not ours to watch; never fail the subscription
            return True
        directory = real if real in self.directories else os.path.dirname(real)
        if directory in self.directories:
            return True
        return not (os.path.isdir(directory) and os.access(directory, os.R_OK | os.X_OK))

    def _moving(self) -> None:
        self._moved.set()
        self._moved = anyio.Event()

    def _scan(self) -> list[str]:
        """The directories to watch: the allowed ones and every directory below (links not followed)."""
        found: list[str] = []
        for root, place in self.policy.places():
            try:
                fd = open_directory(place.anchor, place.parts)
            except AccessError:
                continue
            try:
                found.append(root.real)
                for entry in walk(fd, max_depth=10_000):
                    if entry.kind == "directory":
                        if len(found) >= MAX_WATCHED_DIRECTORIES:
                            logger.warning(
                                "more than %d directories: only the first are watched", MAX_WATCHED_DIRECTORIES
                            )
                            return found
                        found.append(os.path.join(root.real, *entry.relative.split("/")))
            finally:
                os.close(fd)
        return found

    async def _watch(self, feed: ChangeFeed, done: anyio.Event) -> None:
        # Imported here, at the first listener, never before the first answer (a cold start's cost).
        # watchfiles' RustNotify registers its watches in its constructor: made on a worker thread
        # (thousands of directories take a while), it says exactly when the watch is in place, which
        # awatch (it makes one on the loop at its first step) does not.
        import watchfiles._rust_notify  # noqa: F401

        try:
            notify = await self._open()
            try:
                rebuild = await self._missed() or await self._follow(notify, feed, done)
                while rebuild:
                    # The new watch is in place before the old one closes, and what the old one saw
                    # meanwhile is published: a rebuild loses no change (some may be told twice).
                    older, notify = notify, await self._open()
                    try:
                        leftover = await anyio.to_thread.run_sync(older.watch, self.debounce_ms, STEP_MS, 1, done)
                    finally:
                        older.close()
                    rebuild = await self._publish(leftover, feed) or await self._follow(notify, feed, done)
            finally:
                notify.close()
        except Exception:
            # The watcher must never end the serving: without it, subscriptions just go quiet.
            logger.exception("the file watcher failed; subscriptions get no further updates")
            self.failed = True
        finally:
            self.watching = False
            self.ready = anyio.Event()
            self._moving()

    async def _open(self) -> RustNotify:
        """A watch on the directories a new scan finds, registered (then :attr:`watching`)."""
        directories = await anyio.to_thread.run_sync(self._scan)
        with anyio.CancelScope(shield=True):  # once made it is returned, for the caller to close
            notify = await anyio.to_thread.run_sync(_open, directories)
        self.directories = set(directories)
        self.watching = True
        logger.info("watching %d directories", len(directories))
        self.ready.set()
        self._moving()
        return notify

    async def _missed(self) -> bool:
        """True if directories were made between the first scan and the first watch's registration:
        they have no watch and made no event (later, the watch being replaced sees them come)."""
        return not set(await anyio.to_thread.run_sync(self._scan)) <= self.directories

    async def _follow(self, notify: RustNotify, feed: ChangeFeed, done: anyio.Event) -> bool:
        """Publish what ``notify`` reports until ``done`` (False) or until directories came or went
        (True: the caller rebuilds the watch)."""
        while True:
            changes = await anyio.to_thread.run_sync(notify.watch, self.debounce_ms, STEP_MS, IDLE_MS, done)
            if changes == "stop":
                return False
            if await self._publish(changes, feed):
                return True

    async def _publish(self, changes: set[tuple[int, str]] | str, feed: ChangeFeed) -> bool:
        """Publish one batch (a string is none: "timeout", "stop", or "signal", never on a worker
        thread); True if it added a directory not watched or removed one watched."""
        if isinstance(changes, str):
            return False
        structural = any(kind != MODIFIED for kind, _ in changes)
        await feed.publish([path for _, path in changes], structural)
        return structural and self._directories_changed(changes)

    def _directories_changed(self, changes: Iterable[tuple[int, str]]) -> bool:
        for kind, path in changes:
            if kind == DELETED and path in self.directories:
                return True
            if kind == ADDED and path not in self.directories and os.path.isdir(path) and not os.path.islink(path):
                return True
        return False


def _open(directories: list[str]) -> RustNotify:
    """A RustNotify on ``directories``, each on its own (watchfiles' recursive mode follows links, and a
    link to / would watch the whole disk); unreadable ones are skipped. Runs on a worker thread."""
    from watchfiles._rust_notify import RustNotify  # imported by the watcher already

    force_polling, poll_delay_ms = watchfiles_polling()
    return RustNotify(directories, False, force_polling, poll_delay_ms, False, True)
