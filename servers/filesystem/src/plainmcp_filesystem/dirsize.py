"""The total size of directories: every regular file below each, summed, within one entry budget.

A walk per directory (:func:`~plainmcp_filesystem.walk.walk`: through descriptors, links never
followed, so a link cannot make a tree count twice or lead outside). Everything is counted,
``.gitignore`` or not: this is what the directory holds on disk. Synchronous: callers run it in a
worker thread and pass a ``check`` that stops it when the call is cancelled.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from . import anchored
from .anchored import DIR_FLAGS, Place
from .names import name_from_wire
from .skipped import READ_ERROR, Skipped
from .walk import walk

#: Entries between two calls of ``check``.
CHECK_EVERY = 1024


@dataclass(slots=True)
class Sizes:
    """``totals`` by directory name; ``partial``: the names whose walk the budget (or depth) cut short,
    or that hold something that could not be read (``skipped``, its paths below the listed directory)."""

    totals: dict[str, int] = field(default_factory=dict)
    partial: list[str] = field(default_factory=list)
    skipped: Skipped = field(default_factory=Skipped)


def directory_sizes(
    place: Place, names: Iterable[str], *, max_entries: int, max_depth: int, check: Callable[[], None]
) -> Sizes:
    """The total bytes of the regular files below each directory ``names`` holds in ``place``.

    At most ``max_entries`` entries are visited over all of them; a directory whose walk stops there
    has the sum so far and is listed in ``partial``, as is one below which something could not be read
    (counted in ``skipped``). A name that is gone, unreadable or no longer a directory is left out
    (and counted in ``skipped``).
    ``names`` are in their wire form (see names.py), and so are the keys of the result.
    """
    sizes = Sizes()
    left = max_entries
    with anchored.directory(place) as fd:
        for name in names:
            try:
                child = os.open(name_from_wire(name), DIR_FLAGS, dir_fd=fd)
            except OSError as problem:
                sizes.skipped.error(problem, name_from_wire(name))
                continue
            total, cut, inner = 0, left <= 0, Skipped()
            try:
                for entry in walk(child, max_depth=max_depth, skipped=inner):
                    left -= 1
                    if left < 0:
                        cut = True
                        break
                    if left % CHECK_EVERY == 0:
                        check()
                    if entry.kind == "file":
                        try:
                            total += entry.lstat().st_size
                        except OSError as problem:
                            inner.error(problem, entry.relative)
            except anchored.PathDenied:  # the directory itself cannot be listed
                sizes.skipped.add(READ_ERROR, name_from_wire(name))
                continue
            finally:
                os.close(child)
            sizes.totals[name] = total
            sizes.skipped.absorb(inner, name + "/")
            if cut or inner:
                sizes.partial.append(name)
    return sizes
