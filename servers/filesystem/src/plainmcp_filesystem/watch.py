"""One file watcher per server, feeding resource subscriptions and list changes.

Lifecycle: a background task (``Server.background``) waits until someone listens
(``Server.listeners()``: a connection being served, or a 2026-07-28 listen stream), then watches;
when the last one leaves it stops. Nothing is watched while nobody could be told.

What is watched: every directory below the allowed directories, *each one non-recursively*, as
found by our own walk. The notify backend's recursive mode follows symbolic links (a link to ``/``
would make it watch the whole disk and report changes outside the roots); watching the directories
the walk found keeps it inside. When a burst adds or removes directories, the watch is rebuilt.
At most :data:`MAX_WATCHED_DIRECTORIES` are watched (a warning says when more exist).

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

from .access import file_uri_path
from .anchored import open_directory
from .paths import AccessError, AccessPolicy
from .walk import walk

if TYPE_CHECKING:
    from plainmcp import Server

    from .resources import FileIndex

logger = logging.getLogger(__name__)

ADDED, MODIFIED, DELETED = 1, 2, 3
MAX_WATCHED_DIRECTORIES = 20_000
STEP_MS = 50


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
    ``server.background(functools.partial(watcher.run, feed=feed))``.

    ``watching`` is True while a watch is in place; ``ready`` is set each time one is (tests wait on
    it before changing files); ``directories`` are the ones watched.
    """

    def __init__(self, policy: AccessPolicy, *, debounce_ms: int) -> None:
        self.policy = policy
        self.debounce_ms = debounce_ms
        self.directories: set[str] = set()
        self.watching = False
        self.ready = anyio.Event()
        self._stop: anyio.Event | None = None

    async def run(self, server: Server, *, feed: ChangeFeed) -> None:
        """Watch while ``server`` has listeners, publishing each batch of changes to ``feed``."""
        while True:
            while not server.listeners():
                await server.subscriptions_changed()
            done = anyio.Event()
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(self._watch, feed, done)
                try:
                    while server.listeners():
                        await server.subscriptions_changed()
                finally:
                    # The watcher's thread sees these within STEP_MS (also when we are cancelled).
                    done.set()
                    if self._stop is not None:
                        self._stop.set()
            logger.info("nobody listens: file watcher stopped")

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
        # Imported here, at the first listener, and on the event loop: imported on a worker thread the
        # watch was in place later than the listen's acknowledgement by that much more, and a change made
        # right after subscribing went unseen (the demo's edit, regression: tests/e2e/test_demo.py).
        import watchfiles

        try:
            while not done.is_set():
                directories = await anyio.to_thread.run_sync(self._scan)
                self.directories = set(directories)
                stop = self._stop = anyio.Event()
                self.watching = True
                logger.info("watching %d directories", len(directories))
                self.ready.set()
                try:
                    # Each directory on its own (recursive=False): watchfiles' recursive mode
                    # follows links, and a link to / would watch the whole disk.
                    async for changes in watchfiles.awatch(
                        *directories,
                        watch_filter=None,
                        debounce=self.debounce_ms,
                        step=STEP_MS,
                        stop_event=stop,
                        recursive=False,
                        ignore_permission_denied=True,
                    ):
                        structural = any(kind != MODIFIED for kind, _ in changes)
                        await feed.publish([path for _, path in changes], structural)
                        if structural and self._directories_changed(changes):
                            break  # rebuild the watch with the new set of directories
                finally:
                    self.ready = anyio.Event()
        except Exception:
            # The watcher must never end the serving: without it, subscriptions just go quiet.
            logger.exception("the file watcher failed; subscriptions get no further updates")
        finally:
            self.watching = False

    def _directories_changed(self, changes: Iterable[tuple[int, str]]) -> bool:
        for kind, path in changes:
            if kind == DELETED and path in self.directories:
                return True
            if kind == ADDED and os.path.isdir(path) and not os.path.islink(path):
                return True
        return False
