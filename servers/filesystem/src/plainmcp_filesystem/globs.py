"""Glob patterns for ``search_files``, ``excludePatterns`` and ``include``, matched without backtracking.

Relative paths use ``/`` on every system. A pattern without ``/`` matches a *name* at any depth
(``*.py``, ``node_modules``); a pattern with ``/`` matches the whole relative path, segment by
segment, where a ``**`` segment spans directories (``src/**/test_*.py``: zero or more; a trailing
``a/**``: everything below ``a``, one or more). ``*`` and ``?`` never cross ``/``; ``[...]`` is a
class (``[!...]`` negated). Matching is case-sensitive and dot files are not special (``*``
matches ``.env``).

Why not one regular expression per pattern: ``*a*a*a*b`` translated to ``[^/]*a[^/]*a...`` makes
Python's backtracking engine take time exponential in the number of stars on a crafted name. Here a
segment with two stars or more is split at its stars into fixed-length pieces, and each piece is
placed at its leftmost match, which is optimal for ``*`` and never revisited (a segment with one
star at most is one regex: a single repeat cannot backtrack badly); ``**`` segments are placed the
same way over path segments. Matching costs at most (name length x pattern length), and patterns are capped at
:data:`MAX_PATTERN_CHARS` characters and :data:`MAX_SEGMENTS` segments.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

MAX_PATTERN_CHARS = 1000
MAX_SEGMENTS = 64
#: The most patterns one list may hold (checked here, not in the tools' schemas: bounds a model never
#: reaches cost every turn there).
MAX_PATTERNS = 100


def _class(segment: str, start: int) -> tuple[str, int] | None:
    """The regex of the class opening at ``segment[start]`` and the index after it, or None (a lone ``[``)."""
    i = start + 1
    negated = i < len(segment) and segment[i] == "!"
    if negated:
        i += 1
    body_start = i
    if i < len(segment) and segment[i] == "]":
        i += 1  # a "]" first is a member, not the end
    end = segment.find("]", i)
    if end < 0:
        return None
    body = segment[body_start:end]
    out = []
    for k, char in enumerate(body):
        # A "-" between two members is a range; anywhere else, and every other character, literal.
        out.append("-" if char == "-" and 0 < k < len(body) - 1 else re.escape(char))
    return "[" + ("^" if negated else "") + "".join(out) + "]", end + 1


def _pieces(segment: str) -> list[list[str]]:
    """``segment`` split at its stars: each piece a list of one-character regexes."""
    pieces: list[list[str]] = [[]]
    i = 0
    while i < len(segment):
        char = segment[i]
        if char == "*":
            if pieces[-1] or len(pieces) == 1:
                pieces.append([])
            i += 1
            continue
        if char == "?":
            pieces[-1].append(".")
        elif char == "[" and (found := _class(segment, i)) is not None:
            pieces[-1].append(found[0])
            i = found[1]
            continue
        else:
            pieces[-1].append(re.escape(char))
        i += 1
    return pieces


def _literal(piece: list[str]) -> str | None:
    """The text a piece matches if it has no wildcard or class, else None."""
    text = "".join(piece)
    plain = re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)
    return plain if re.escape(plain) == text else None


class Segment:
    """One name pattern (no ``/``). ``matches(name)`` runs in time linear in the name per piece.

    ``cost`` estimates a match's work per character of the name: a pattern of literal text around
    one star at most is compared with ``==``/``startswith``/``endswith`` (cost 0: constant); any
    other costs up to its length per character of the name (a regex piece placed at each position).
    """

    __slots__ = ("exact", "head", "head_length", "middle", "tail", "tail_length", "min_length", "plain", "cost")

    def __init__(self, text: str) -> None:
        pieces = _pieces(text)
        compile_piece = lambda piece: re.compile("".join(piece), re.DOTALL)  # noqa: E731
        literals = [_literal(piece) for piece in pieces]
        # The common patterns ("node_modules", "*.pyc", "build*"): no regex, constant time.
        self.plain: tuple[str, str | None] | None = None
        self.cost = 0
        if len(pieces) <= 2 and all(literal is not None for literal in literals):
            self.plain = (literals[0] or "", literals[1] if len(pieces) == 2 else None)
        else:
            self.cost = sum(map(len, pieces)) + 1
        if len(pieces) <= 2:
            # No star, or one: a single regex with at most one unbounded repeat cannot backtrack
            # more than (name length x pattern length), and one call is the fastest match.
            self.exact: re.Pattern[str] | None = re.compile(".*".join("".join(piece) for piece in pieces), re.DOTALL)
            self.head = self.tail = None
            self.head_length = self.tail_length = 0
            self.middle: list[re.Pattern[str]] = []
            self.min_length = sum(map(len, pieces))
            return
        self.exact = None
        first, *middle, last = pieces
        self.head = compile_piece(first) if first else None
        self.head_length = len(first)
        self.tail = compile_piece(last) if last else None
        self.tail_length = len(last)
        self.middle = [compile_piece(piece) for piece in middle if piece]
        self.min_length = sum(map(len, pieces))

    def matches(self, name: str) -> bool:
        if self.plain is not None:
            head, tail = self.plain
            if tail is None:
                return name == head
            return len(name) >= len(head) + len(tail) and name.startswith(head) and name.endswith(tail)
        if self.exact is not None:
            return self.exact.fullmatch(name) is not None
        size = len(name)
        if size < self.min_length:
            return False
        if self.head is not None and self.head.match(name) is None:
            return False
        end = size - self.tail_length
        if self.tail is not None and self.tail.fullmatch(name, end) is None:
            return False
        position = self.head_length
        for piece in self.middle:
            # Leftmost placement: a later match could only leave less room to the pieces after it.
            found = piece.search(name, position, end)
            if found is None:
                return False
            position = found.end()
        return True


def _fits(group: list[Segment], names: list[str], at: int) -> bool:
    return all(segment.matches(names[at + k]) for k, segment in enumerate(group))


@dataclass(frozen=True, slots=True)
class Glob:
    """A compiled pattern: by name (no ``/``) or by relative path (groups of segments between ``**``)."""

    pattern: str
    by_name: bool
    groups: tuple[list[Segment], ...]
    trailing_globstar: bool

    @property
    def cost(self) -> int:
        """The estimated work of one match per character of the path (see :attr:`Segment.cost`)."""
        return sum(segment.cost for group in self.groups for segment in group)

    def matches(self, relative: str, name: str) -> bool:
        """Whether the entry at ``relative`` (``/``-separated, below the walk's start) matches."""
        if self.by_name:
            return self.groups[0][0].matches(name)
        return self.matches_parts(relative.split("/"))

    def matches_parts(self, names: list[str]) -> bool:
        groups = self.groups
        if len(groups) == 1:
            return len(names) == len(groups[0]) and _fits(groups[0], names, 0)
        first, *middle, last = groups
        needed = sum(map(len, groups)) + (1 if self.trailing_globstar else 0)
        if len(names) < needed:
            return False
        if not _fits(first, names, 0) or not _fits(last, names, len(names) - len(last)):
            return False
        position, end = len(first), len(names) - len(last)
        for group in middle:
            # Leftmost placement again, over path segments.
            while position + len(group) <= end and not _fits(group, names, position):
                position += 1
            if position + len(group) > end:
                return False
            position += len(group)
        return True


def compile_glob(pattern: str) -> Glob:
    """Compile one pattern.

    Raises:
        ValueError: empty, longer than :data:`MAX_PATTERN_CHARS`, or more than :data:`MAX_SEGMENTS` segments.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise ValueError("a pattern must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ValueError(f"a pattern may be at most {MAX_PATTERN_CHARS} characters long")
    cleaned = pattern.strip().removeprefix("./").rstrip("/")
    texts = [text for text in cleaned.split("/") if text] or ["*"]
    if len(texts) > MAX_SEGMENTS:
        raise ValueError(f"a pattern may have at most {MAX_SEGMENTS} segments")
    try:
        if "/" not in cleaned:
            return Glob(pattern, True, ([Segment(texts[0])],), False)
        groups: list[list[Segment]] = [[]]
        for text in texts:
            if text == "**":
                if groups[-1] or len(groups) == 1:
                    groups.append([])
                continue
            groups[-1].append(Segment(text))
    except re.error as problem:  # a class range backwards ("[z-a]")
        raise ValueError(f"invalid pattern {pattern[:100]!r}: {problem.msg}") from None
    if len(groups) == 2 and not groups[0] and len(groups[1]) == 1:
        return Glob(pattern, True, (groups[1],), False)  # "**/NAME" is NAME at any depth
    return Glob(pattern, False, tuple(groups), texts[-1] == "**")


class Excluder:
    """Any of several patterns; an excluded directory is not descended into."""

    __slots__ = ("globs", "by_path")

    def __init__(self, patterns: Iterable[str] = ()) -> None:
        """Raises: ValueError: a bad pattern (:func:`compile_glob`), or more than :data:`MAX_PATTERNS`."""
        patterns = tuple(patterns)
        if len(patterns) > MAX_PATTERNS:
            raise ValueError(f"give at most {MAX_PATTERNS} patterns")
        self.globs = tuple(compile_glob(p) for p in patterns)
        self.by_path = any(not glob.by_name for glob in self.globs)

    def __bool__(self) -> bool:
        return bool(self.globs)

    def excluded(self, relative: str, name: str) -> bool:
        names = relative.split("/") if self.by_path else []
        return any(
            glob.groups[0][0].matches(name) if glob.by_name else glob.matches_parts(names) for glob in self.globs
        )
