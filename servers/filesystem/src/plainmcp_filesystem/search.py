"""Searching: file names by glob (``search_files``) and file contents by text or regex (``search_content``).

Both walk with :func:`~plainmcp_filesystem.walk.walk` (never out of the allowed directories), stop at
a result cap (saying so), and step a :class:`~plainmcp_filesystem.walk.Pacer` per entry so a long
search reports progress and stops when cancelled. Content search skips binary files (a NUL byte in
the first 8 KiB) and files over a size cap, and counts what it skipped.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from .globs import Excluder, Glob
from .paths import PathDenied
from .walk import Pacer, walk

MAX_LINE_CHARS = 500
_SNIFF = 8192


async def search_names(
    start: str, glob: Glob, *, exclude: Excluder, max_depth: int, max_results: int, max_bytes: int, pacer: Pacer
) -> tuple[list[tuple[str, str]], bool]:
    """``(relative path, kind)`` of entries whose name (or relative path) matches; and truncated
    (``max_results`` reached, or the paths would weigh more than ``max_bytes``)."""
    found: list[tuple[str, str]] = []
    weight = 0
    for entry in walk(start, max_depth=max_depth, exclude=exclude):
        await pacer.step()
        if glob.matches(entry.relative, entry.name):
            weight += 2 * len(entry.relative) + len(start) * 2 + 8
            if len(found) >= max_results or weight > max_bytes:
                return found, True
            found.append((entry.relative, entry.kind))
    return found, False


def compile_query(query: str, *, regex: bool, case_sensitive: bool) -> re.Pattern[str]:
    """The pattern to search for. Raises ValueError (with re's reason) for a bad regex."""
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(query if regex else re.escape(query), flags | re.MULTILINE)
    except re.error as problem:
        raise ValueError(f"Invalid regular expression: {problem}") from None


@dataclass(slots=True)
class ContentSearch:
    """The outcome of a content search: matches and what was skipped."""

    matches: list[dict[str, Any]] = field(default_factory=list)
    files_searched: int = 0
    files_matched: int = 0
    skipped_binary: int = 0
    skipped_large: int = 0
    truncated: bool = False


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


async def search_contents(
    start: str,
    pattern: re.Pattern[str],
    *,
    include: Excluder,
    exclude: Excluder,
    context: int,
    max_depth: int,
    max_results: int,
    max_file_bytes: int,
    max_bytes: int,
    pacer: Pacer,
) -> ContentSearch:
    """Matching lines in the regular files below ``start`` (``include``: name patterns, any of)."""
    outcome = ContentSearch()
    weight = 0
    for entry in walk(start, max_depth=max_depth, exclude=exclude):
        await pacer.step()
        if entry.kind != "file" or (include and not include.excluded(entry.relative, entry.name)):
            continue
        try:
            fd = entry.open()
        except (OSError, PathDenied):
            continue
        with open(fd, "rb", closefd=True) as file:
            if os.fstat(file.fileno()).st_size > max_file_bytes:
                outcome.skipped_large += 1
                continue
            data = file.read(max_file_bytes + 1)
        if b"\x00" in data[:_SNIFF]:
            outcome.skipped_binary += 1
            continue
        outcome.files_searched += 1
        text = data.decode("utf-8", errors="replace")
        if pattern.search(text) is None:
            continue  # most files: one scan in C, no line splitting
        lines = text.splitlines()
        matched = False
        for number, line in enumerate(lines):
            if pattern.search(line) is None:
                continue
            weight += 2 * (len(entry.relative) + len(start) + min(len(line), MAX_LINE_CHARS) * (1 + 2 * context)) + 64
            if len(outcome.matches) >= max_results or weight > max_bytes:
                outcome.truncated = True
                return outcome
            if not matched:
                matched = True
                outcome.files_matched += 1
            match: dict[str, Any] = {"path": entry.relative, "line": number + 1, "text": _clip(line)}
            if context:
                match["before"] = [_clip(x) for x in lines[max(0, number - context) : number]]
                match["after"] = [_clip(x) for x in lines[number + 1 : number + 1 + context]]
            outcome.matches.append(match)
    return outcome
