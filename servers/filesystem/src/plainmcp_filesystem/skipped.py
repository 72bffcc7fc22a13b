"""What a walk or listing could not read, said in the result instead of left out without a word.

A search, tree or listing goes on past an entry it cannot read (permission denied, gone during the
walk, swapped for a link, a read error) rather than failing the whole call; :class:`Skipped` counts
those entries by reason and keeps the first :data:`FIRST` of their paths (bounded, however many are
skipped). A result with nothing skipped carries nothing more: not the text line, not the field.

Standard library only: the regular-expression worker process uses it too (its outcome crosses as JSON).
"""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from typing import Any

from .names import wire_path

#: How many paths of skipped entries a result names (the count is always whole).
FIRST = 5

#: Reasons, as the structured content names them, and as the text says them.
PERMISSION_DENIED = "permissionDenied"
VANISHED = "vanished"
CHANGED = "changed"
READ_ERROR = "readError"
WORDS = {
    PERMISSION_DENIED: "permission denied",
    VANISHED: "gone during the walk",
    CHANGED: "changed to a link or another type during the walk",
    READ_ERROR: "read error",
}

#: The output-schema property every walking tool declares.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": (
        "present only when entries could not be read: count, reasons (reason -> count: permissionDenied, "
        f"vanished, changed, readError), first (up to {FIRST} of their paths)"
    ),
}


def reason_of(problem: OSError) -> str:
    """The reason an entry could not be read, from the system's error."""
    if problem.errno in (errno.EACCES, errno.EPERM):
        return PERMISSION_DENIED
    if problem.errno == errno.ENOENT:
        return VANISHED
    if problem.errno in (errno.ELOOP, errno.ENOTDIR):
        return CHANGED  # O_NOFOLLOW | O_DIRECTORY met a link, or no longer a directory
    return READ_ERROR


@dataclass(slots=True)
class Skipped:
    """Entries that could not be read: ``count`` in all, ``reasons`` (reason -> count), ``first`` paths.

    Paths are ``/``-separated below the walk's start, in their wire form (see names.py).
    """

    count: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    first: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return self.count > 0

    def add(self, reason: str, relative: str) -> None:
        self.count += 1
        self.reasons[reason] = self.reasons.get(reason, 0) + 1
        if len(self.first) < FIRST:
            self.first.append(wire_path(relative))

    def error(self, problem: OSError, relative: str) -> None:
        """Count an entry whose read failed with ``problem``."""
        self.add(reason_of(problem), relative)

    def absorb(self, other: Skipped, prefix: str) -> None:
        """Add what another walk skipped, its paths below ``prefix`` (wire form, ending in ``/``)."""
        self.count += other.count
        for reason, n in other.reasons.items():
            self.reasons[reason] = self.reasons.get(reason, 0) + n
        self.first += [prefix + path for path in other.first[: FIRST - len(self.first)]]

    @classmethod
    def from_wire(cls, data: dict[str, Any]) -> Skipped:
        return cls(int(data["count"]), {str(k): int(v) for k, v in data["reasons"].items()}, list(data["first"]))

    def shown(self, place: Any) -> dict[str, Any]:
        """The structured form, each path turned by ``place`` (relative -> the path the result shows)."""
        return {"count": self.count, "reasons": dict(self.reasons), "first": [place(path) for path in self.first]}

    def line(self, place: Any) -> str:
        """The text line, e.g. ``2 entries could not be read (permission denied: 2); first: /r/sub/secret``."""
        entries = "1 entry" if self.count == 1 else f"{self.count} entries"
        why = ", ".join(f"{WORDS.get(reason, reason)}: {n}" for reason, n in sorted(self.reasons.items()))
        more = f" (and {self.count - len(self.first)} more)" if self.count > len(self.first) else ""
        return f"{entries} could not be read ({why}); first: {', '.join(map(place, self.first))}{more}"


def report(skipped: Skipped, text: str, data: dict[str, Any], place: Any) -> str:
    """Add what was skipped to a result (``data`` in place); returns the text with its last line.
    Nothing skipped: both unchanged."""
    if not skipped:
        return text
    data["skipped"] = skipped.shown(place)
    return f"{text}\n{skipped.line(place)}"
