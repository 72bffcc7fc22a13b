"""Glob patterns for ``search_files`` and ``excludePatterns``, compiled once to one regex each.

Relative paths use ``/`` on every system. A pattern without ``/`` matches a *name* at any depth
(``*.py``, ``node_modules``); a pattern with ``/`` matches the whole relative path, where ``**``
spans directories (``src/**/test_*.py``). ``*`` and ``?`` never cross ``/``; ``[...]`` is a class.
Matching is case-sensitive and dot files are not special (``*`` matches ``.env``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                # "**/" is zero or more whole directories; a trailing "**" is everything below.
                if pattern.startswith("**/", i):
                    out.append("(?:.*/)?")
                    i += 3
                else:
                    out.append(".*")
                    i += 2
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) or pattern.startswith("[]", i) else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Glob:
    pattern: str
    regex: re.Pattern[str]
    by_name: bool

    def matches(self, relative: str, name: str) -> bool:
        """Whether the entry at ``relative`` (``/``-separated, below the walk's start) matches."""
        return self.regex.match(name if self.by_name else relative) is not None


def compile_glob(pattern: str) -> Glob:
    """Compile one pattern. Raises ValueError for an empty pattern."""
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError("a pattern must be a non-empty string")
    cleaned = pattern.strip().removeprefix("./").rstrip("/")
    by_name = "/" not in cleaned
    return Glob(pattern, re.compile(_translate(cleaned) + r"\Z", re.DOTALL), by_name)


class Excluder:
    """Any of several patterns; an excluded directory is not descended into."""

    __slots__ = ("globs",)

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        self.globs = tuple(compile_glob(p) for p in patterns)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def excluded(self, relative: str, name: str) -> bool:
        return any(glob.matches(relative, name) for glob in self.globs)
