"""A server program's start-up without garbage-collection passes over the modules it is importing.

Importing a server allocates tens of thousands of objects (functions, classes, schemas) that live as
long as the process. CPython's collector counts allocations, so it runs its passes all through those
imports: 45 of them for the conformance fixture, 5 ms of its 90 ms cold start here, and nearly
all they walk is there to stay. A program defers collection before its imports and, once start-up is over, moves
the survivors out of the collector's sight for good (``gc.freeze``: later passes, full ones
included, never walk them again, and forked workers do not copy the pages those passes would touch):

    # the server's __main__.py, before any other import
    from plainmcp import defer_collection

    defer_collection()

:func:`plainmcp.run_server_command` calls :func:`resume_collection` once the server is built, before it
serves. Collection is deferred, never turned off: past a large allocation count it runs anyway, so
a program that imports the module and never serves collects less often, and nothing worse. The few
hundred cyclic objects that start-up leaves unreachable stay frozen too (a few tens of KiB).

Only a program's entry point should call this: a library must not change its host's collector.
"""

from __future__ import annotations

import gc

#: Allocations between two youngest-generation passes while start-up lasts (CPython's default is 700).
#: More than a server's imports make, so no pass runs during them, and a bound all the same.
STARTUP_THRESHOLD = 200_000

_saved_thresholds: tuple[int, ...] | None = None


def defer_collection() -> None:
    """Hold off the collector's passes until :func:`resume_collection` (idempotent)."""
    global _saved_thresholds
    if _saved_thresholds is None:
        _saved_thresholds = gc.get_threshold()
        gc.set_threshold(STARTUP_THRESHOLD, *_saved_thresholds[1:])


def resume_collection() -> None:
    """End the start-up begun by :func:`defer_collection`: what exists now is frozen (never walked
    again) and the collector's thresholds are restored. Does nothing without a deferral, so a host
    that embeds a server keeps its own collector as it is."""
    global _saved_thresholds
    if _saved_thresholds is None:
        return
    saved, _saved_thresholds = _saved_thresholds, None
    gc.freeze()
    gc.set_threshold(*saved)
