"""Text edits: each replaces one place, exactly once (or every place, with ``replace_all``), or fails saying why.

Pure string functions (no I/O), applied in order to the text in memory: either every edit applies
or none is written. For each edit:

1. ``oldText`` found exactly once (or, with ``replace_all``, at least once): replaced.
2. Found several times: refused, with the line of every match, so the caller can add context.
3. Not found: a whitespace-tolerant match over whole lines (runs of spaces and tabs compared as one
   space, leading and trailing ones ignored). A single such match is replaced and re-indented to
   the file's indentation, and the result says so; several are refused like (2); none is refused
   with the nearest candidates: their line numbers and how each differs from ``oldText``.

Bytes outside the places edited are never touched. Matching is done on a view of the text with
every ``\r\n`` read as ``\n`` (so a model's ``\n`` matches a CRLF file), and each match is spliced
back into the original text: the replacement's line breaks become those of the text it replaces
(``\r\n`` if that had any, else ``\n``; for a match within one line, the file's most common ending),
so a file of mixed endings keeps every other line's ending as it was.
"""

from __future__ import annotations

import bisect
import difflib
import heapq
import itertools
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_LISTED = 10
#: Candidates shown when oldText matches nowhere, and the lines of the file compared (bounded time).
MAX_CANDIDATES = 3
MAX_COMPARED_LINES = 20_000
#: How much of oldText and of each candidate the shown difference compares (ndiff's cost grows fast).
MAX_DIFF_LINES = 40
MAX_DIFF_CHARS = 400
#: The longest text (in characters) an edit may produce. Checked before the text is built: chained
#: replace_all edits ("a" -> "aa", again and again) would otherwise double it at every edit.
MAX_EDITED_CHARS = 8 * 1024 * 1024
#: The most edits one call may make (each scans the whole text).
MAX_EDITS = 100
#: The largest changed region a diff is computed for (lines, and characters on either side), and the
#: longest diff returned; past them the result says the diff is not shown.
MAX_DIFF_REGION_LINES = 20_000
MAX_DIFF_REGION_CHARS = 1024 * 1024
MAX_DIFF_TEXT = 1024 * 1024
#: Places spliced between two joins (a list of millions of pieces costs more than the text).
_SPLICE_CHUNK = 4096


class EditFailed(Exception):
    """An edit that cannot be applied; the message tells the caller how to fix it."""


@dataclass(slots=True)
class EditOutcome:
    text: str
    notes: list[str] = field(default_factory=list)


class _View:
    """The text with ``\r\n`` read as ``\n``, and the way back from a view offset to the original's."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.text = original.replace("\r\n", "\n")
        self._dominant: str | None = None
        # The view offsets of the "\n"s that were "\r\n" in the original, in order: a view offset maps
        # back by adding how many of them come before it.
        # An array, not a list: a file of millions of CRLFs would make millions of int objects.
        self._crlf_newlines = array("q")
        if len(self.text) != len(original):
            position = original.find("\r\n")
            while position >= 0:
                self._crlf_newlines.append(position - len(self._crlf_newlines))
                position = original.find("\r\n", position + 2)

    def to_original(self, offset: int) -> int:
        """The original offset of view offset ``offset`` (a removed ``\r`` counts before its ``\n``)."""
        return offset + bisect.bisect_left(self._crlf_newlines, offset)

    def line_ending(self, start: int, end: int) -> str:
        """The line ending a replacement of view span [start, end) takes."""
        segment = self.original[self.to_original(start) : self.to_original(end)]
        if "\n" in segment:
            return "\r\n" if "\r\n" in segment else "\n"
        if self._dominant is None:  # counted once per text: a replace-all asks for every place
            self._dominant = "\r\n" if len(self._crlf_newlines) * 2 > self.text.count("\n") else "\n"
        return self._dominant

    def replace_every(self, old: str, new: str) -> str:
        """The original with every place of ``old`` in the view replaced (see :meth:`splice`)."""
        if not self._crlf_newlines:
            return self.original.replace(old, new)  # no CRLF: the view is the original
        return self.splice(((place, place + len(old)) for place in _places(self.text, old)), new)

    def splice(self, spans: Iterator[tuple[int, int]] | list[tuple[int, int]], new: str) -> str:
        """The original with each view span [start, end) (in order, not overlapping) replaced by ``new``,
        its ``\n`` breaks adapted to each place; built in one pass (a replace-all of a million places
        must not copy the text a million times), joined every few thousand places (a list of millions
        of pieces would weigh more than the text)."""
        joined: list[str] = []
        pieces: list[str] = []
        done = 0
        for start, end in spans:
            ending = self.line_ending(start, end)
            begin = self.to_original(start)
            pieces += [self.original[done:begin], new if ending == "\n" else new.replace("\n", ending)]
            done = self.to_original(end)
            if len(pieces) >= _SPLICE_CHUNK:
                joined.append("".join(pieces))
                pieces.clear()
        pieces.append(self.original[done:])
        joined.append("".join(pieces))
        return "".join(joined)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _squash(line: str) -> str:
    return " ".join(line.split())


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _places(text: str, needle: str) -> Iterator[int]:
    """Where ``needle`` starts in ``text``, without overlaps (the places a replace-all replaces), as
    ``str.count`` and ``str.replace`` count them."""
    start = text.find(needle)
    while start >= 0:
        yield start
        start = text.find(needle, start + len(needle))


def _first_places(text: str, needle: str) -> list[int]:
    """The first :data:`MAX_LISTED` places (all a message names)."""
    return list(itertools.islice(_places(text, needle), MAX_LISTED))


def _lines_list(numbers: list[int], total: int | None = None) -> str:
    """The first line numbers, and how many more (``total``: how many there are, if more than given)."""
    total = len(numbers) if total is None else total
    shown = ", ".join(str(n) for n in numbers[:MAX_LISTED])
    return shown + (f" and {total - MAX_LISTED} more" if total > MAX_LISTED else "")


def _lines_of(text: str, places: list[int], total: int) -> str:
    """The lines of the first places (counted for those only: a million places must not cost a million scans)."""
    return _lines_list([_line_of(text, p) for p in places[:MAX_LISTED]], total)


def _check_size(number: int, size: int, limit: int) -> None:
    if size > limit:
        raise EditFailed(
            f"Edit {number}: the text would grow to {size} characters, more than the {limit} an edit may "
            "produce; nothing was applied (replace fewer places, or write the file with write_file)"
        )


def apply_edits(text: str, edits: list[dict[str, object]], *, max_chars: int = MAX_EDITED_CHARS) -> EditOutcome:
    """Apply ``[{"oldText", "newText", "replace_all"?}, ...]`` in order to ``text``; returns the new text and notes.

    No edit builds a text longer than ``max_chars``: its size is computed first (places x growth).

    Raises:
        EditFailed: an edit matched nowhere or (without ``replace_all``) in several places, a result
            would pass ``max_chars``, or more than :data:`MAX_EDITS` edits; nothing is applied.
    """
    if len(edits) > MAX_EDITS:
        raise EditFailed(f"At most {MAX_EDITS} edits per call; got {len(edits)}")
    current = text
    notes: list[str] = []
    for number, edit in enumerate(edits, start=1):
        old = str(edit["oldText"]).replace("\r\n", "\n")
        new = str(edit["newText"]).replace("\r\n", "\n")
        if not old:
            raise EditFailed(f"Edit {number}: oldText is empty")
        view = _View(current)
        count = view.text.count(old)  # in C, and no list of a million places
        if count == 1 or (count and edit.get("replace_all")):
            # The most each place can grow: new's "\n" may each become "\r\n", and the text
            # replaced is at least old (a CRLF it spans is one character longer in the original).
            _check_size(number, len(current) + count * (len(new) + new.count("\n") - len(old)), max_chars)
            if count > 1:
                lines = _lines_of(view.text, _first_places(view.text, old), count)
                notes.append(f"Edit {number}: replaced {count} places (lines {lines})")
            current = view.replace_every(old, new)
            continue
        if count > 1:
            lines = _lines_of(view.text, _first_places(view.text, old), count)
            raise EditFailed(
                f"Edit {number}: oldText matches {count} places (lines {lines}); "
                "include more surrounding text so it matches exactly one, or set replace_all"
            )
        start, end, replacement, note = _tolerant(view.text, old, new, number)
        _check_size(number, len(current) + len(replacement) + replacement.count("\n") - (end - start), max_chars)
        current = view.splice([(start, end)], replacement)
        notes.append(note)
    return EditOutcome(current, notes)


def _tolerant(text: str, old: str, new: str, number: int) -> tuple[int, int, str, str]:
    """The whole-line, whitespace-tolerant match of ``old``: (start, end) in ``text``, the re-indented
    replacement and a note.

    Raises:
        EditFailed: no such match (with the nearest candidates), or several.
    """
    lines = text.split("\n")
    old_lines = old.split("\n")
    if len(old_lines) > 1 and old_lines[-1] == "":
        old_lines.pop()  # oldText ending in a newline names whole lines
    wanted = [_squash(line) for line in old_lines]
    squashed = [_squash(line) for line in lines]
    size = len(wanted)
    # The first line first: slicing a window per line cost seconds for an oldText of thousands of lines.
    first_wanted = wanted[0]
    starts = [
        i for i in range(len(lines) - size + 1) if squashed[i] == first_wanted and squashed[i : i + size] == wanted
    ]
    if len(starts) > 1:
        raise EditFailed(
            f"Edit {number}: oldText matches nowhere exactly, and {len(starts)} places when whitespace "
            f"is ignored (lines {_lines_list([s + 1 for s in starts])}); include more surrounding text"
        )
    if not starts:
        raise EditFailed(
            f"Edit {number}: oldText was not found, not even ignoring whitespace.{_nearest(lines, old_lines)}"
        )
    first = starts[0]
    # Re-indent the new text by the difference between the file's and oldText's first non-blank line.
    pivot = next((k for k, line in enumerate(old_lines) if line.strip()), 0)
    have, had = _indent(lines[first + pivot]), _indent(old_lines[pivot])
    new_lines = new.split("\n")
    if new.endswith("\n") and len(new_lines) > 1:
        new_lines.pop()
    adjusted = [have + line[len(had) :] if line.startswith(had) and line.strip() else line for line in new_lines]
    start = sum(len(line) + 1 for line in lines[:first])
    end = start + sum(len(line) + 1 for line in lines[first : first + size]) - 1
    note = f"Edit {number}: no exact match; matched lines {first + 1}-{first + size} ignoring whitespace"
    if have != had:
        note += f", and re-indented the new text from {had!r} to {have!r}"
    return start, end, "\n".join(adjusted), note


def _nearest(lines: list[str], old_lines: list[str]) -> str:
    """The places most like ``old_lines`` (a window of as many lines), best first, each with its line
    number and a line-by-line diff from oldText; or a hint to read the file again."""
    first = next((line.strip() for line in old_lines if line.strip()), "")
    if not first:
        return ""
    # The best MAX_CANDIDATES so far, worst first: a line is scored in full (ratio() is the costly
    # part) only if its cheap upper bounds beat the worst of them.
    scored: list[tuple[float, int]] = []
    matcher = difflib.SequenceMatcher(b=first, autojunk=False)
    for index, line in enumerate(lines[:MAX_COMPARED_LINES]):
        bar = scored[0][0] if len(scored) == MAX_CANDIDATES else 0.5
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() > bar and matcher.quick_ratio() > bar:
            ratio = matcher.ratio()
            if ratio > bar:
                # Ties keep the earlier line: the heap orders by ratio, then by the later index first.
                item = (ratio, -index)
                if len(scored) == MAX_CANDIDATES:
                    heapq.heapreplace(scored, item)
                else:
                    heapq.heappush(scored, item)
    scored = [(ratio, -negated) for ratio, negated in scored]
    if not scored:
        return " Check the text, or read the file again: it may have changed."
    pivot = next(k for k, line in enumerate(old_lines) if line.strip())
    # ndiff is quadratic or worse: compare the first MAX_DIFF_LINES lines of a long oldText only.
    compared = old_lines[:MAX_DIFF_LINES]
    parts = []
    for _, index in sorted(scored, key=lambda item: (-item[0], item[1]))[:MAX_CANDIDATES]:
        begin = max(0, index - pivot)
        window = [line[:MAX_DIFF_CHARS] for line in lines[begin : begin + len(compared)]]
        difference = [
            line.rstrip("\n")
            for line in difflib.ndiff([line[:MAX_DIFF_CHARS] for line in compared], window)
            if line[:1] in "-+?"
        ][:12]
        shown = "\n".join("  " + line[:200] for line in difference)
        where = f"line {begin + 1}" if len(window) == 1 else f"lines {begin + 1}-{begin + len(window)}"
        parts.append(f"{where} ('-' oldText, '+' the file):\n{shown}")
    return " Nearest candidates:\n" + "\n".join(parts)


def _common_prefix(a: str, b: str) -> int:
    """How many leading characters ``a`` and ``b`` share (halving slices: comparisons run in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_suffix(a: str, b: str, floor: int) -> int:
    """How many trailing characters ``a`` and ``b`` share, none of them before index ``floor``."""
    low, high = 0, min(len(a), len(b)) - floor
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle : len(a) - low] == b[len(b) - middle : len(b) - low]:
            low = middle
        else:
            high = middle - 1
    return low


_HUNK = re.compile(r"@@ -(\d+)((?:,\d+)?) \+(\d+)((?:,\d+)?) @@")


class DiffTooLarge(Exception):
    """The change is too large to show as a diff (the edit itself may still apply)."""


def unified_diff(old: str, new: str, name: str, *, context: int = 3) -> str:
    """A git-style unified diff of two texts (empty when equal).

    Only the region that changed (whole lines, with ``context`` lines around it) is split into lines
    and compared: the common head and tail are found by comparing slices, so an edit of one line of
    a large file costs that line, not the file.

    Raises:
        DiffTooLarge: the changed region has more than :data:`MAX_DIFF_REGION_LINES` lines or
            :data:`MAX_DIFF_REGION_CHARS` characters on a side, or the diff would be longer than
            :data:`MAX_DIFF_TEXT`; it is not built.
    """
    a, b = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    if a == b:
        return ""
    start = a.rfind("\n", 0, _common_prefix(a, b)) + 1  # the same line start in both
    tail = _common_suffix(a, b, start)
    shared = a[len(a) - tail :]
    # Both regions end just after the same newline of the shared tail (or at the end of both).
    cut = shared.find("\n") + 1 or len(shared)
    for _ in range(context):
        start = a.rfind("\n", 0, max(start - 1, 0)) + 1 if start else 0
        cut = (shared.find("\n", cut) + 1 or len(shared)) if cut < len(shared) else cut
    end_a, end_b = len(a) - tail + cut, len(b) - tail + cut
    skipped = a.count("\n", 0, start)
    sizes = (end_a - start, end_b - start)
    lines = (a.count("\n", start, end_a), b.count("\n", start, end_b))
    if max(sizes) > MAX_DIFF_REGION_CHARS or max(lines) > MAX_DIFF_REGION_LINES:
        raise DiffTooLarge(
            f"the change spans {max(lines)} lines ({max(sizes)} characters), more than a diff shows "
            f"({MAX_DIFF_REGION_LINES} lines, {MAX_DIFF_REGION_CHARS} characters)"
        )
    before = a[start:end_a].splitlines(keepends=True)
    after = b[start:end_b].splitlines(keepends=True)
    out: list[str] = []
    size = 0
    for line in difflib.unified_diff(before, after, f"a/{name}", f"b/{name}", lineterm="\n", n=context):
        if line.startswith("@@") and skipped:
            line = _HUNK.sub(lambda m: f"@@ -{int(m[1]) + skipped}{m[2]} +{int(m[3]) + skipped}{m[4]} @@", line, 1)
        line = line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        size += len(line)
        if size > MAX_DIFF_TEXT:
            raise DiffTooLarge(f"the diff is longer than {MAX_DIFF_TEXT} characters")
        out.append(line)
    return "".join(out)


def fenced(diff: str) -> str:
    """The diff in a Markdown code fence longer than any run of backticks inside it."""
    longest, run = 0, 0
    for char in diff:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    return f"{fence}diff\n{diff}{fence}"
