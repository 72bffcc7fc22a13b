"""Bounds on what a hostile server or model can make the bridge do: nesting, numbers, regular expressions.

A server's schema and a model's arguments are walked by recursive code (``jsonschema``, ``json``,
``copy``): nested a few thousand levels they raise ``RecursionError`` where nobody expects it. A model's
JSON may hold ``NaN`` (Python's parser takes it), which is not JSON and no server can be sent. And a
server's ``pattern`` is a regular expression the bridge would run on the model's text: ``(a+)+$``
backtracks for longer than the universe lasts. So:

- :func:`too_deep` finds values nested past :data:`MAX_DEPTH` levels without recursing;
- :func:`non_finite` finds the NaN and infinities in a value;
- :func:`bounded_search` runs a pattern for at most :data:`PATTERN_SECONDS` (the standard library's
  matcher checks for signals as it backtracks, so a timer signal stops it); past that, or where no
  timer can be set (off the main thread), the bridge does not judge the pattern and leaves it to the
  server, which validates every call anyway.
"""

from __future__ import annotations

import functools
import math
import re
import signal
import threading
from typing import Any

#: Levels of nesting a schema or a call's arguments may have in the bridge.
MAX_DEPTH = 64
#: The most time one ``pattern`` may take on one value.
PATTERN_SECONDS = 0.05


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels."""
    level = [value] if isinstance(value, (dict, list)) else []
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return False
    return bool(level)


def non_finite(value: Any) -> bool:
    """Whether ``value`` holds a NaN or an infinity anywhere (``value`` must not be :func:`too_deep`)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


class _OutOfTime(Exception):
    pass


def _out_of_time(signum: int, frame: Any) -> None:
    raise _OutOfTime


#: Patterns that ran out of time once: never run again (each costs at most one PATTERN_SECONDS).
_slow: set[str] = set()


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def bounded_search(pattern: str, text: str) -> bool | None:
    """Whether ``pattern`` is found in ``text``; None when the bridge cannot tell in time (or at all:
    a pattern Python cannot compile, no timer off the main thread)."""
    compiled = _compiled(pattern)
    if compiled is None or pattern in _slow or threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.signal(signal.SIGALRM, _out_of_time)
    try:
        signal.setitimer(signal.ITIMER_REAL, PATTERN_SECONDS)
        try:
            return compiled.search(text) is not None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _OutOfTime:
        _slow.add(pattern)
        return None
    finally:
        signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)
