"""Completion of argument values: the allowed values, else the values used before in this process.

The history is per process and shared by every client of it: over HTTP, one user's values are
offered to the next. ``--history 0`` turns it off (see the README's security notes).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping

from .model import ArgumentSpec, PromptSpec

#: Longer values are not remembered: completion is for short choices, not pasted documents.
MAX_REMEMBERED_CHARS = 200
#: An integer argument whose bounds hold at most this many numbers is completed with all of them.
MAX_RANGE = 20


class History:
    """Recently used values per (prompt, argument), most recent first, at most ``size`` each."""

    def __init__(self, size: int = 20) -> None:
        self.size = size
        self._values: dict[tuple[str, str], OrderedDict[str, None]] = {}

    def remember(self, prompt: str, values: Mapping[str, str]) -> None:
        if self.size <= 0:
            return
        for argument, value in values.items():
            if not value.strip() or len(value) > MAX_REMEMBERED_CHARS or "\n" in value:
                continue
            recent = self._values.setdefault((prompt, argument), OrderedDict())
            recent[value] = None
            recent.move_to_end(value, last=False)
            while len(recent) > self.size:
                recent.popitem(last=True)

    def recent(self, prompt: str, argument: str) -> list[str]:
        return list(self._values.get((prompt, argument), ()))

    def forget(self, prompt: str) -> None:
        """Drop the values of a prompt that is no longer served."""
        for key in [key for key in self._values if key[0] == prompt]:
            del self._values[key]


def candidates(spec: PromptSpec, argument: str, history: History, prefix: str) -> list[str]:
    """Values for ``argument`` of ``spec`` starting with ``prefix`` (ignoring case): its allowed values
    in their declared order (``true``, ``false`` for a boolean; every whole number of an integer's
    bounds when there are at most MAX_RANGE of them); without them, the values used before (most
    recent first), then the default."""
    found = spec.argument(argument)
    if found is None:
        return []
    pool = _declared(found)
    if pool is None:
        pool = history.recent(spec.name, argument)
        if found.default is not None and found.default not in pool:
            pool.append(found.default)
    folded = prefix.casefold()
    return [value for value in pool if value.casefold().startswith(folded)]


def _declared(argument: ArgumentSpec) -> list[str] | None:
    """The values ``argument`` declares, in order, or None when it declares no short list."""
    if argument.values:
        return list(argument.values)
    if argument.type == "boolean":
        return ["true", "false"]
    if argument.type == "integer" and argument.minimum is not None and argument.maximum is not None:
        low, high = math.ceil(argument.minimum), math.floor(argument.maximum)
        if high - low < MAX_RANGE:
            return [str(number) for number in range(low, high + 1)]
    return None
