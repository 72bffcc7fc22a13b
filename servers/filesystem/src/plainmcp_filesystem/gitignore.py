"""``.gitignore`` rules for listings, walks and searches (on by default; ``gitignore: false`` turns them off).

What git does, for what a listing needs: each ``.gitignore`` applies to the directory holding it and
everything below; blank lines and ``#`` comments are skipped; ``!`` re-includes; a trailing ``/``
matches directories only; a pattern with a ``/`` before its end is anchored to the ``.gitignore``'s
directory, one without matches a name at any depth; ``*``, ``?``, ``[...]`` and ``**`` as in git.
The last matching rule wins, deeper files after shallower ones; nothing below an ignored directory
is walked (git cannot re-include there either). ``.git`` itself is always skipped. A pattern git
would refuse (a class range backwards, ``[z-a]``) is skipped with a warning in the log, as git skips it.

Rules come from the ``.gitignore`` files of the directory walked, of those below it, and of its
parents up to the allowed directory (never above it). Bounded: a file is read up to
:data:`MAX_FILE_BYTES`, at most :data:`MAX_RULES` rules of each and :data:`MAX_TOTAL_RULES` of all the
files one walk reads (the files past that are not applied, with a warning in the log). Matching is
linear in the name for the common rules (a name, ``*.ext``, ``prefix*``: compared, no regex; names
are also looked up in a dict); other rules cost up to their length per character, and one call may
spend at most :data:`MAX_MATCH_STEPS` such steps (about as many nanoseconds), past which it fails
with :class:`RulesTooCostly` (a tool error) instead of running for minutes. Plain data in, plain data
out: the search worker process rebuilds it from ``(prefix, text)`` pairs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from .anchored import AccessError, open_regular
from .globs import Glob, compile_glob

logger = logging.getLogger(__name__)

MAX_FILE_BYTES = 64 * 1024
MAX_RULES = 1000
MAX_TOTAL_RULES = 5000
#: The estimated work one call may spend matching (see globs.Segment.cost), about 5 s at worst.
MAX_MATCH_STEPS = 5_000_000_000
#: What checking one rule costs besides its characters (the interpreter's overhead, in steps).
_RULE_STEPS = 200
NAME = ".gitignore"


class RulesTooCostly(ValueError):
    """The ``.gitignore`` rules met cost more to apply than one call may spend."""


@dataclass(frozen=True, slots=True)
class Rule:
    glob: Glob
    negated: bool
    directories_only: bool

    def key(self) -> tuple[str, str] | None:
        """``("name", NAME)`` for a plain name, ``("ext", EXT)`` for ``*.EXT`` (EXT without a dot): rules
        looked up by the entry's name or extension instead of scanned; else None."""
        plain = self.glob.groups[0][0].plain if self.glob.by_name else None
        if plain is None:
            return None
        head, tail = plain
        if tail is None:
            return ("name", head)
        if not head and tail.startswith(".") and "." not in tail[1:] and len(tail) > 1:
            return ("ext", tail[1:])
        return None


class RuleSet:
    """The rules of one ``.gitignore``, the plain names among them indexed by name."""

    __slots__ = ("rules", "by_key", "scanned", "cost")

    def __init__(self, rules: list[Rule]) -> None:
        self.rules = rules
        self.by_key: dict[tuple[str, str], list[int]] = {}
        self.scanned: list[int] = []
        for index, rule in enumerate(rules):
            key = rule.key()
            if key is None:
                self.scanned.append(index)
            else:
                self.by_key.setdefault(key, []).append(index)
        self.cost = [rule.glob.cost for rule in rules]


def parse(text: str, limit: int = MAX_RULES) -> list[Rule]:
    """The rules of one ``.gitignore`` text, in order (the first ``limit`` of them)."""
    rules: list[Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip(" \t\r")
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        if negated:
            line = line[1:]
        elif line.startswith(("\\#", "\\!")):
            line = line[1:]
        directories_only = line.endswith("/")
        body = line.rstrip("/")
        if not body:
            continue
        # A "/" anywhere but at the end anchors the pattern: compile it as a path (leading "/" dropped).
        anchored = "/" in body
        try:
            # The compiler reads a pattern with a "/" as a path from the top ("/name" as well).
            glob = compile_glob("/" + body.lstrip("/") if anchored else body)
        except ValueError as problem:
            logger.warning(".gitignore: a rule is skipped: %s", problem)
            continue
        rules.append(Rule(glob, negated, directories_only))
        if len(rules) >= limit:
            break
    return rules


def read_rules(dir_fd: int) -> str | None:
    """The text of the ``.gitignore`` in ``dir_fd`` (a regular file, never a link), or None."""
    try:
        fd = open_regular(dir_fd, NAME)
    except (OSError, AccessError):
        return None
    with open(fd, "rb", closefd=True) as file:
        return file.read(MAX_FILE_BYTES).decode("utf-8", "replace")


class GitIgnore:
    """Rule sets by the directory (relative to the walk's start, ``""`` or ``"a/b/"``) they apply below.

    ``outer`` holds the parents' rules as ``(prefix, text)``: a parent's rule sees a path as
    ``prefix + relative`` (the way from that parent down to the walk's start, then below it).
    """

    def __init__(self, outer: tuple[tuple[str, str], ...] = ()) -> None:
        self.outer = outer
        self.rule_count = 0
        self.warned = False
        self.spent = 0
        self._sets: list[tuple[str, str, RuleSet]] = []
        for prefix, text in outer:
            self._add("", prefix, text)

    def _full(self) -> bool:
        if self.rule_count < MAX_TOTAL_RULES:
            return False
        if not self.warned:
            self.warned = True
            logger.warning(
                ".gitignore: %d rules read in the files of one walk; the files after them are not applied",
                MAX_TOTAL_RULES,
            )
        return True

    def _add(self, below: str, prefix: str, text: str) -> None:
        if self._full():
            return
        rules = parse(text, min(MAX_RULES, MAX_TOTAL_RULES - self.rule_count))
        self.rule_count += len(rules)
        self._sets.append((below, prefix, RuleSet(rules)))

    def load(self, dir_fd: int, below: str) -> None:
        """Read the ``.gitignore`` of the directory at ``below`` (``""``, or ``"a/b/"``), if it has one."""
        if self._full():
            return  # not even read
        text = read_rules(dir_fd)
        if text is not None:
            self._add(below, "", text)

    def ignored(self, relative: str, name: str, is_directory: bool) -> bool:
        """Whether the entry at ``relative`` (below the walk's start) is ignored.

        The last matching rule decides: the sets are read from the deepest, each from its last rule,
        and the first match ends the search.

        Raises:
            RulesTooCostly: this object has spent :data:`MAX_MATCH_STEPS` on its rules.
        """
        if name == ".git":
            return True
        for below, prefix, rule_set in reversed(self._sets):
            if below and not relative.startswith(below):
                continue
            found = self._last_match(rule_set, prefix + relative[len(below) :], name, is_directory)
            if found is not None:
                return not found.negated
        return False

    def _last_match(self, rule_set: RuleSet, path: str, name: str, is_directory: bool) -> Rule | None:
        rules, cost = rule_set.rules, rule_set.cost
        best = -1
        keys = [("name", name)]
        if "." in name:
            keys.append(("ext", name.rsplit(".", 1)[1]))
        for key in keys:
            for index in rule_set.by_key.get(key, ()):
                if index > best and (is_directory or not rules[index].directories_only):
                    best = index
        parts: list[str] | None = None
        spent = 0
        for index in reversed(rule_set.scanned):
            if index < best:
                break  # a looked-up rule after every rule left matched already
            rule = rules[index]
            if rule.directories_only and not is_directory:
                continue
            if rule.glob.by_name:
                spent += _RULE_STEPS + cost[index] * len(name)
                hit = rule.glob.groups[0][0].matches(name)
            else:
                spent += _RULE_STEPS + cost[index] * len(path)
                parts = parts if parts is not None else path.split("/")
                hit = rule.glob.matches_parts(parts)
            if hit:
                best = index
                break
        self.spent += spent + _RULE_STEPS
        if self.spent > MAX_MATCH_STEPS:
            raise RulesTooCostly(
                "The .gitignore rules here are too costly to apply (too many rules with wildcards for "
                "this many entries); call again with gitignore: false, or on a smaller directory"
            )
        return rules[best] if best >= 0 else None


def parents_rules(
    open_directory: Callable[[tuple[str, ...]], int], parts: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """The ``(prefix, text)`` of each ``.gitignore`` in the directories from the allowed directory down to
    (not including) the one at ``parts``; ``open_directory(parts)`` opens one (a descriptor the caller closes)."""
    found: list[tuple[str, str]] = []
    for depth in range(len(parts)):
        try:
            fd = open_directory(parts[:depth])
        except (OSError, AccessError):
            continue
        try:
            text = read_rules(fd)
        finally:
            os.close(fd)
        if text is not None:
            found.append(("/".join(parts[depth:]) + "/", text))
    return tuple(found)
