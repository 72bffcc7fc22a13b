"""Pages of a text file of any size: a byte or line range within a byte budget, and the cursor to go on.

A page is read from a byte offset: what it costs is the page, not the file, so the first page, the
tail, a byte range and every continuation of a 1 GB file each read a few tens of kilobytes. The one
read whose cost grows with the file is a far ``startLine`` (lines before it must be counted):
:func:`skip_lines` does that in 1 MiB blocks with a ``check`` that stops it when cancelled, and the
cursor a page returns carries the byte offset, so paging on never counts again.

A cursor is ``"OFFSET:LINE"`` or ``"OFFSET:LINE:END"``: the byte where the next page starts, the
number of the line that starts there (0 when unknown, after a raw byte offset), and the last line
asked for (a cut line range goes on to its end, not to the end of the file).
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO

_CHUNK = 1024 * 1024
_TAIL_BLOCK = 64 * 1024
_CURSOR = re.compile(r"(\d{1,19}):(\d{1,19})(?::(\d{1,19}))?")
_UTF8 = ("utf-8", "utf-8-sig")


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page starts: a byte ``offset``, the ``line`` starting there (0: unknown), the last line wanted."""

    offset: int
    line: int
    end: int | None = None

    def __str__(self) -> str:
        return f"{self.offset}:{self.line}" + (f":{self.end}" if self.end is not None else "")

    @classmethod
    def parse(cls, text: object) -> Cursor:
        """Raises: ValueError: not a cursor this server gave out."""
        match = _CURSOR.fullmatch(text) if isinstance(text, str) else None
        if match is None:
            raise ValueError("Invalid cursor: pass back the nextCursor of an earlier result unchanged")
        end = match.group(3)
        return cls(int(match.group(1)), int(match.group(2)), int(end) if end is not None else None)


@dataclass(frozen=True, slots=True)
class Page:
    """Text read from ``offset`` up to ``end`` (bytes); ``next`` is where to go on (None: nothing more was asked for).

    ``first_line``/``last_line`` are the 1-based lines shown (None when unknown or empty);
    ``replaced`` means invalid bytes became U+FFFD.
    """

    text: str
    offset: int
    end: int
    next: Cursor | None
    first_line: int | None
    last_line: int | None
    replaced: bool


def decode_prefix(data: bytes, encoding: str, *, final: bool) -> tuple[str, int, bool]:
    """Decode the longest whole-character prefix of ``data``: (text, bytes consumed, replaced).

    A character cut at the end is left for the next page (unless ``final``); invalid bytes become
    U+FFFD. A UTF-8 byte order mark at the start is consumed, not shown.
    """
    skip = len(codecs.BOM_UTF8) if encoding in _UTF8 and data.startswith(codecs.BOM_UTF8) else 0
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    for errors in ("strict", "replace"):
        decoder = codecs.getincrementaldecoder(encoding)(errors=errors)
        try:
            text = decoder.decode(data[skip:], final=final)
        except UnicodeDecodeError:
            continue
        pending = len(decoder.getstate()[0]) if not final else 0
        return text, len(data) - pending, errors == "replace"
    raise AssertionError("unreachable: 'replace' decoding does not raise")


def skip_lines(file: BinaryIO, start: int, check: Callable[[], None]) -> int:
    """The byte offset where line ``start`` (1-based) begins, or the file's end if it has fewer lines.

    Lines are only counted (``bytes.count`` in C), one 1 MiB block at a time: memory stays at one block.
    """
    file.seek(0)
    line, offset = 1, 0
    while line < start:
        check()
        block = file.read(_CHUNK)
        if not block:
            return offset
        newlines = block.count(b"\n")
        if line + newlines < start:
            line += newlines
            offset += len(block)
            continue
        position = -1
        for _ in range(start - line):
            position = block.index(b"\n", position + 1)
        return offset + position + 1
    return offset


def _align(data: bytes, offset: int, encoding: str) -> int:
    """Bytes to skip at the start of a raw UTF-8 byte range that begins inside a character."""
    if offset == 0 or encoding not in _UTF8:
        return 0
    skip = 0
    while skip < min(3, len(data)) and 0x80 <= data[skip] <= 0xBF:
        skip += 1
    return skip


def read_page(file: BinaryIO, size: int, at: Cursor, *, budget: int, encoding: str, length: int | None = None) -> Page:
    """Up to ``budget`` bytes from ``at.offset`` (or ``length``, if smaller), stopping after line ``at.end``.

    A page that stops on the budget ends after its last whole line when it holds one, so pages
    never split a line they need not split; ``length`` (a raw byte range) is cut only at a character.
    """
    if at.offset > size:
        # Past the end there is nothing to read (and seek refuses offsets beyond 2**63 outright).
        at = Cursor(size, 0, at.end)
    want = min(budget, length) if length is not None else budget
    encoding = _byte_order(file, encoding, at.offset)
    file.seek(at.offset)
    data = file.read(want)
    skip = _align(data, at.offset, encoding)
    offset, data = at.offset + skip, data[skip:]
    line = at.line if skip == 0 else 0
    done = offset + len(data) >= size
    if at.end is not None and line:
        wanted = at.end - line + 1
        cut = _nth_newline(data, wanted) if wanted > 0 else 0
        if cut is not None:
            data, done = data[:cut], True
    if not done and length is None:
        last_newline = data.rfind(b"\n")
        if last_newline >= 0:
            data = data[: last_newline + 1]
    text, consumed, replaced = decode_prefix(data, encoding, final=done)
    end = offset + consumed
    lines = data[:consumed].count(b"\n")
    last = (line + lines - (1 if data[:consumed].endswith(b"\n") else 0)) if line and consumed else None
    finished = done or (length is not None and end >= at.offset + length)
    following = None if finished else Cursor(end, line + lines if line else 0, at.end)
    return Page(text, offset, end, following, line if line and consumed else None, last, replaced)


def _byte_order(file: BinaryIO, encoding: str, offset: int) -> str:
    """For UTF-16 and UTF-32 read from inside the file, the byte order its BOM says (a page from the
    middle has no BOM of its own); little-endian without one, as Python's decoders assume."""
    if encoding not in ("utf-16", "utf-32") or offset == 0:
        return encoding
    file.seek(0)
    start = file.read(4)
    width = "32" if encoding == "utf-32" else "16"
    big = start.startswith(codecs.BOM_UTF32_BE if width == "32" else codecs.BOM_UTF16_BE)
    return f"utf-{width}-{'be' if big else 'le'}"


def _nth_newline(data: bytes, count: int) -> int | None:
    """The offset just after the ``count``-th newline of ``data``, or None if it has fewer."""
    position = -1
    for _ in range(count):
        position = data.find(b"\n", position + 1)
        if position < 0:
            return None
    return position + 1


def tail_start(file: BinaryIO, size: int, count: int, budget: int, floor: int = 0) -> tuple[int, bool]:
    """Where the last ``count`` lines begin, reading blocks backwards, and whether all of them fit:
    never more than ``budget`` bytes before the end nor before ``floor`` (a tail of endless lines is
    cut to the budget)."""
    if count <= 0 or size == 0:
        return size, True
    position, found = size, 0
    # A final newline ends the last line rather than starting an empty one.
    file.seek(size - 1)
    needed = count + (1 if file.read(1) == b"\n" else 0)
    floor = max(floor, size - budget)
    while position > floor:
        step = min(_TAIL_BLOCK, position - floor)
        file.seek(position - step)
        block = file.read(step)
        index = len(block)
        while index > 0:
            index = block.rfind(b"\n", 0, index)
            if index < 0:
                break
            found += 1
            if found == needed:
                return position - step + index + 1, True
        position -= step
    return floor, floor == 0
