"""``.gitignore`` rules for listings, walks and searches (on by default; ``gitignore: false`` turns them off).

What git does, for what a listing needs: each ``.gitignore`` applies to the directory holding it and
everything below; blank lines and ``#`` comments are skipped; ``!`` re-includes; a trailing ``/``
matches directories only; a pattern with a ``/`` before its end is anchored to the ``.gitignore``'s
directory, one without matches a name at any depth; ``*``, ``?``, ``[...]`` and ``**`` as in git.
The last matching rule wins, deeper files after shallower ones; nothing below an ignored directory
is walked (git cannot re-include there either). ``.git`` itself is always skipped.

Rules come from the ``.gitignore`` files of the directory walked, of those below it, and of its
parents up to the allowed directory (never above it). Bounded: a file is read up to
:data:`MAX_FILE_BYTES`, at most :data:`MAX_RULES` rules of each; a pattern the glob compiler refuses
is skipped. Plain data in, plain data out: the search worker process rebuilds it from
``(prefix, text)`` pairs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from .anchored import AccessError, open_regular
from .globs import Glob, compile_glob

MAX_FILE_BYTES = 64 * 1024
MAX_RULES = 1000
NAME = ".gitignore"


@dataclass(frozen=True, slots=True)
class Rule:
    glob: Glob
    negated: bool
    directories_only: bool


def parse(text: str) -> list[Rule]:
    """The rules of one ``.gitignore`` text, in order."""
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
        except ValueError:
            continue
        rules.append(Rule(glob, negated, directories_only))
        if len(rules) >= MAX_RULES:
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
        self._sets: list[tuple[str, str, list[Rule]]] = [("", prefix, parse(text)) for prefix, text in outer]

    def load(self, dir_fd: int, below: str) -> None:
        """Read the ``.gitignore`` of the directory at ``below`` (``""``, or ``"a/b/"``), if it has one."""
        text = read_rules(dir_fd)
        if text is not None:
            self._sets.append((below, "", parse(text)))

    def ignored(self, relative: str, name: str, is_directory: bool) -> bool:
        """Whether the entry at ``relative`` (below the walk's start) is ignored."""
        if name == ".git":
            return True
        verdict = False
        for below, prefix, rules in self._sets:
            if below and not relative.startswith(below):
                continue
            path = prefix + relative[len(below) :]
            parts: list[str] | None = None
            for rule in rules:
                if rule.directories_only and not is_directory:
                    continue
                if rule.glob.by_name:
                    hit = rule.glob.groups[0][0].matches(name)
                else:
                    parts = parts if parts is not None else path.split("/")
                    hit = rule.glob.matches_parts(parts)
                if hit:
                    verdict = not rule.negated
        return verdict


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
