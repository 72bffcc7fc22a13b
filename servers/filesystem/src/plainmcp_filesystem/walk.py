"""Bounded directory walks that cannot be led out of the allowed directories.

The walk starts from an open directory descriptor (see :mod:`plainmcp_filesystem.anchored`), holds
an open descriptor for each directory on its path and opens each child relative to its parent with
``O_NOFOLLOW | O_DIRECTORY``: a directory swapped for a symbolic link while the walk
runs fails to open and is skipped, instead of being followed. Links are reported, never descended.
Entries come sorted by name in each directory (deterministic output), depth first, parents before
children. The walk is synchronous and fast; :class:`Pacer` lets an async caller interleave
checkpoints (so cancellation lands) and progress reports.
"""

from __future__ import annotations

import errno
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass
from time import monotonic
from typing import TYPE_CHECKING, Any

from .anchored import DIR_FLAGS, PathDenied, open_regular, reopen
from .gitignore import NAME as GITIGNORE
from .gitignore import GitIgnore
from .globs import Excluder
from .skipped import Skipped

if TYPE_CHECKING:
    from plainmcp import Context

#: The longest a walk runs on the event loop without yielding.
YIELD_SECONDS = 0.02

#: The most entries a walk reads from one directory (the first found, then sorted): a directory of
#: millions of entries would otherwise hold them all in memory to sort them.
MAX_DIRECTORY_ENTRIES = 100_000


@dataclass(slots=True)
class Entry:
    """One entry met by a walk.

    ``relative`` is ``/``-separated below the start; ``depth`` is 1 for the start's children.
    ``dir_fd`` (the directory holding it) is valid only until the walk moves on.
    """

    relative: str
    name: str
    kind: str  # "file", "directory", "symlink" or "other"
    depth: int
    dir_fd: int
    entry: os.DirEntry[str]
    #: Only with ``report_ignored``: what ``.gitignore`` rules ignore, reported so the caller can pace itself.
    ignored: bool = False

    def lstat(self) -> os.stat_result:
        return self.entry.stat(follow_symlinks=False)

    def open(self) -> int:
        """Open this entry for reading if it is still a regular file; the caller closes the fd.
        Raises OSError, or PathDenied for anything but a regular file."""
        return open_regular(self.dir_fd, self.name)


def entry_kind(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return "symlink"
    if entry.is_dir(follow_symlinks=False):
        return "directory"
    if entry.is_file(follow_symlinks=False):
        return "file"
    return "other"


def _scan(fd: int) -> list[os.DirEntry[str]]:
    # At most MAX_DIRECTORY_ENTRIES per directory: sorting needs them all in memory at once.
    with os.scandir(fd) as found:
        return sorted(itertools.islice(found, MAX_DIRECTORY_ENTRIES), key=lambda e: e.name)


def walk(
    start: int,
    *,
    max_depth: int,
    exclude: Excluder | None = None,
    include_hidden: bool = True,
    ignore: GitIgnore | None = None,
    report_ignored: bool = False,
    skipped: Skipped | None = None,
) -> Iterator[Entry]:
    """Walk below the open directory ``start`` (a descriptor the caller keeps; not included), at
    most ``max_depth`` levels.

    Excluded entries (and everything below an excluded directory) are skipped, as are hidden ones
    (names starting with ``.``) unless ``include_hidden``. Of a directory holding more than
    :data:`MAX_DIRECTORY_ENTRIES` entries, only that many are walked. Directories that vanish, cannot be read,
    or turn into links during the walk are skipped (still yielded themselves, not descended into);
    with ``skipped`` each is counted there with its reason, so the caller can say so. With
    ``ignore``, what its ``.gitignore`` rules (and those of every directory walked) ignore is skipped too; with ``report_ignored`` such
    entries are yielded marked ``ignored`` (never descended into), so that an async caller yields to
    the event loop while thousands of them are skipped (see :meth:`Pacer.idle`).

    Raises:
        PathDenied: ``start`` cannot be read.
    """
    try:
        top = reopen(start)
    except OSError:
        raise PathDenied("The directory cannot be read") from None
    stack: list[tuple[int, Iterator[os.DirEntry[str]], str, int]] = []
    try:
        listing = _scan(top)
        _load_rules(ignore, top, listing, "")
        stack.append((top, iter(listing), "", 1))
    except OSError:
        os.close(top)
        raise PathDenied("The directory cannot be read") from None
    try:
        while stack:
            fd, entries, prefix, depth = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                os.close(fd)
                continue
            name = entry.name
            if not include_hidden and name.startswith("."):
                continue
            relative = prefix + name
            if exclude and exclude.excluded(relative, name):
                continue
            kind = entry_kind(entry)
            if ignore is not None and ignore.ignored(relative, name, kind == "directory"):
                if report_ignored:
                    yield Entry(relative, name, kind, depth, fd, entry, ignored=True)
                continue
            yield Entry(relative, name, kind, depth, fd, entry)
            if kind != "directory" or depth >= max_depth:
                continue
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as problem:
                if problem.errno in (errno.EMFILE, errno.ENFILE):
                    raise  # out of descriptors: the walk would be silently incomplete
                if skipped is not None:
                    skipped.error(problem, relative)  # gone, unreadable, or no longer a directory
                continue
            try:
                listing = _scan(child)
            except OSError as problem:
                os.close(child)
                if skipped is not None:
                    skipped.error(problem, relative)
                continue
            _load_rules(ignore, child, listing, relative + "/")
            stack.append((child, iter(listing), relative + "/", depth + 1))
    finally:
        for fd, *_ in stack:
            os.close(fd)


def _load_rules(ignore: GitIgnore | None, fd: int, listing: list[os.DirEntry[str]], below: str) -> None:
    # Only a directory whose listing shows a .gitignore costs an open.
    if ignore is not None and any(entry.name == GITIGNORE for entry in listing):
        ignore.load(fd, below)


async def sleep(seconds: float) -> None:
    # anyio is imported here, not at the top: the search worker process uses this module without it.
    import anyio

    await anyio.sleep(seconds)


class Pacer:
    """Gives a long synchronous loop checkpoints and progress: call :meth:`step` per item.

    Every ``every`` items, and whenever :data:`YIELD_SECONDS` have passed since it last did, it
    yields to the event loop (other requests run, a cancelled request stops there); every ``every``
    items it also reports progress, if the request asked for it, as the count so far (no total:
    walks do not know it).
    """

    __slots__ = ("ctx", "every", "count", "label", "since")

    def __init__(self, ctx: Context | Any, label: str, every: int = 2048) -> None:
        self.ctx = ctx
        self.label = label
        self.every = every
        self.count = 0
        self.since = monotonic()

    async def idle(self) -> None:
        """Yield to the event loop if :data:`YIELD_SECONDS` have passed, without counting an item."""
        if monotonic() - self.since > YIELD_SECONDS:
            await sleep(0)
            self.since = monotonic()

    async def step(self) -> None:
        self.count += 1
        if self.count % self.every == 0:
            await sleep(0)
            await self.ctx.report_progress(self.count, None, f"{self.count} {self.label}")
            self.since = monotonic()
        elif monotonic() - self.since > YIELD_SECONDS:
            # Entries can be slow (a content search reads each file): yield by time as well.
            await sleep(0)
            self.since = monotonic()
