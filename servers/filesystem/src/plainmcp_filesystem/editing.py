"""Text edits: each replaces one place, exactly once, or fails saying why.

Pure string functions (no I/O), applied in order to the text in memory: either every edit applies
or none is written. For each edit:

1. ``oldText`` found exactly once: replaced.
2. Found several times: refused, with the line of every match, so the caller can add context.
3. Not found: a whitespace-tolerant match over whole lines (runs of spaces and tabs compared as one
   space, leading and trailing ones ignored). A single such match is replaced and re-indented to
   the file's indentation, and the result says so; several are refused like (2); none is refused
   with the most similar line as a hint.

Line endings: matching is done on ``\\n``; a file written with ``\\r\\n`` keeps ``\\r\\n``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

MAX_LISTED = 10


class EditFailed(Exception):
    """An edit that cannot be applied; the message tells the caller how to fix it."""


@dataclass(slots=True)
class EditOutcome:
    text: str
    notes: list[str] = field(default_factory=list)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _squash(line: str) -> str:
    return " ".join(line.split())


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _occurrences(text: str, needle: str) -> list[int]:
    found, start = [], text.find(needle)
    while start >= 0:
        found.append(start)
        start = text.find(needle, start + 1)
    return found


def _lines_list(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:MAX_LISTED])
    return shown + (f" and {len(numbers) - MAX_LISTED} more" if len(numbers) > MAX_LISTED else "")


def apply_edits(text: str, edits: list[dict[str, str]]) -> EditOutcome:
    """Apply ``[{"oldText", "newText"}, ...]`` in order to ``text``; returns the new text and notes.

    Raises:
        EditFailed: an edit matched nowhere or in several places (nothing is applied).
    """
    crlf = "\r\n" in text
    current = text.replace("\r\n", "\n")
    notes: list[str] = []
    for number, edit in enumerate(edits, start=1):
        old = edit["oldText"].replace("\r\n", "\n")
        new = edit["newText"].replace("\r\n", "\n")
        if not old:
            raise EditFailed(f"Edit {number}: oldText is empty")
        places = _occurrences(current, old)
        if len(places) == 1:
            current = current[: places[0]] + new + current[places[0] + len(old):]
            continue
        if len(places) > 1:
            lines = _lines_list([_line_of(current, p) for p in places])
            raise EditFailed(
                f"Edit {number}: oldText matches {len(places)} places (lines {lines}); "
                "include more surrounding text so it matches exactly one"
            )
        current, note = _tolerant(current, old, new, number)
        notes.append(note)
    if crlf:
        current = current.replace("\n", "\r\n")
    return EditOutcome(current, notes)


def _tolerant(text: str, old: str, new: str, number: int) -> tuple[str, str]:
    lines = text.split("\n")
    old_lines = old.split("\n")
    if len(old_lines) > 1 and old_lines[-1] == "":
        old_lines.pop()  # oldText ending in a newline names whole lines
    wanted = [_squash(line) for line in old_lines]
    squashed = [_squash(line) for line in lines]
    size = len(wanted)
    starts = [i for i in range(len(lines) - size + 1) if squashed[i : i + size] == wanted]
    if len(starts) > 1:
        raise EditFailed(
            f"Edit {number}: oldText matches nowhere exactly, and {len(starts)} places when whitespace "
            f"is ignored (lines {_lines_list([s + 1 for s in starts])}); include more surrounding text"
        )
    if not starts:
        raise EditFailed(f"Edit {number}: oldText was not found, not even ignoring whitespace.{_hint(lines, old_lines)}")
    start = starts[0]
    # Re-indent the new text by the difference between the file's and oldText's first non-blank line.
    pivot = next((k for k, line in enumerate(old_lines) if line.strip()), 0)
    have, had = _indent(lines[start + pivot]), _indent(old_lines[pivot])
    new_lines = new.split("\n")
    if new.endswith("\n") and len(new_lines) > 1:
        new_lines.pop()
    adjusted = [have + line[len(had):] if line.startswith(had) and line.strip() else line for line in new_lines]
    lines[start : start + size] = adjusted
    end = start + size
    note = f"Edit {number}: no exact match; matched lines {start + 1}-{end} ignoring whitespace"
    if have != had:
        note += f", and re-indented the new text from {had!r} to {have!r}"
    return "\n".join(lines), note


def _hint(lines: list[str], old_lines: list[str]) -> str:
    first = next((line.strip() for line in old_lines if line.strip()), "")
    if not first:
        return ""
    best, best_ratio = -1, 0.6
    matcher = difflib.SequenceMatcher(b=first, autojunk=False)
    for index, line in enumerate(lines[:20_000]):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio:
            ratio = matcher.ratio()
            if ratio > best_ratio:
                best, best_ratio = index, ratio
    if best < 0:
        return " Check the text, or read the file again: it may have changed."
    return f" The most similar line is line {best + 1}: {lines[best].strip()[:200]!r}"


def unified_diff(old: str, new: str, name: str) -> str:
    """A git-style unified diff of two texts (empty when equal)."""
    before = old.replace("\r\n", "\n").splitlines(keepends=True)
    after = new.replace("\r\n", "\n").splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", lineterm="\n"):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def fenced(diff: str) -> str:
    """The diff in a Markdown code fence longer than any run of backticks inside it."""
    longest, run = 0, 0
    for char in diff:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}diff\n{diff}{fence}"
