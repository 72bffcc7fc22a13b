"""Reading files: a part of a text file within a byte budget (see :mod:`.paging`), and whole binary files.

Memory is bounded by the budget, not by the file: a 10 GB log read with ``tail`` reads a few blocks
from its end, and a file without newlines is read in budget-sized pages. Only text encodings are
accepted (never a codec that decompresses or transforms bytes), and never more than the budget's
bytes are decoded. Skipping to a line far into a huge file is the one read whose time grows with the
file: callers run it in a worker thread and pass a ``check`` that stops it when cancelled.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .anchored import Place, open_file
from .paging import Cursor, Page, read_page, skip_lines, tail_start

#: Text encodings that are still refused: their decoders are slow on crafted input (punycode and
#: idna are quadratic), or they turn escapes into other characters (a file then reads as what it
#: is not), or they decode nothing at all.
_REFUSED = {"idna", "punycode", "undefined", "unicode_escape", "raw_unicode_escape"}


def check_encoding(encoding: object) -> str:
    """The canonical name of a *text* encoding.

    Raises:
        LookupError: not a known encoding.
        ValueError: a codec that is not a text encoding (``zlib``, ``bz2``, ``base64``, ``rot13``,
            ...: they decompress or transform bytes, and a tiny file would decode to gigabytes).
    """
    if not isinstance(encoding, str) or not encoding or len(encoding) > 64:
        raise LookupError(encoding)
    info = codecs.lookup(encoding)
    # CodecInfo marks the codecs that are not bytes <-> str text encodings (the stdlib sets it on
    # base64, bz2, hex, quopri, rot13, uu and zlib); str.decode refuses those for the same reason.
    if info._is_text_encoding is False or info.name.replace("-", "_") in _REFUSED:
        raise ValueError(f"Not a text encoding: {encoding!r}; use a character encoding such as utf-8 or latin-1")
    return info.name


def json_weight(text: str) -> int:
    """The bytes ``text`` takes as a JSON string (escapes included)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def fit_text(text: str, limit: int) -> tuple[str, bool]:
    """``text``, cut so that it weighs at most ``limit`` bytes as JSON; and whether it was cut.

    A binary file read as text is mostly escapes (a NUL byte is six bytes of JSON): without this,
    a 1 MiB read would outgrow the 4 MiB message limit and fail as an internal error.
    """
    weight = json_weight(text)
    if weight <= limit:
        return text, False
    while weight > limit and text:
        text = text[: max(0, int(len(text) * limit / weight * 0.95) - 1)]
        weight = json_weight(text)
    return text, True


@dataclass(frozen=True, slots=True)
class TextPart:
    """What a text read returned: the ``page`` (for head plus tail, the head), the ``tail`` page with
    head plus tail, the bytes between them that were not read, the file's ``size``, and whether a
    ``tail`` wanted more lines than its budget held."""

    page: Page
    size: int
    tail: Page | None = None
    omitted: int = 0
    tail_cut: bool = False

    @property
    def replaced(self) -> bool:
        return self.page.replaced or (self.tail is not None and self.tail.replaced)


def _nothing() -> None:
    return None


def read_part(
    place: Place, want: dict[str, Any], *, budget: int, encoding: str, check: Callable[[], None] = _nothing
) -> TextPart:
    """Read the part of a text file ``want`` names, at most ``budget`` bytes of it.

    ``want`` holds a tool's arguments: ``cursor``; or ``offset``/``length`` (bytes); or
    ``startLine``/``endLine`` (1-based, inclusive, either end open); or ``head`` and/or ``tail``
    (lines; together they share the budget); or nothing (the file from its start). The caller
    checks that they do not conflict. ``check`` is called between blocks while skipping lines.

    Raises:
        PathDenied, PathNotFound: from :func:`~plainmcp_filesystem.anchored.open_file`.
        ValueError: a cursor this server did not give out.
    """
    fd = open_file(place)
    with open(fd, "rb", buffering=0, closefd=True) as file:
        size = os.fstat(file.fileno()).st_size
        if "cursor" in want:
            return TextPart(read_page(file, size, Cursor.parse(want["cursor"]), budget=budget, encoding=encoding), size)
        if "offset" in want or "length" in want:
            offset = want.get("offset", 0)
            at = Cursor(offset, 1 if offset == 0 else 0)
            return TextPart(
                read_page(file, size, at, budget=budget, encoding=encoding, length=want.get("length")), size
            )
        if "startLine" in want or "endLine" in want:
            start = want.get("startLine", 1)
            offset = skip_lines(file, start, check) if start > 1 else 0
            at = Cursor(offset, start, want.get("endLine"))
            return TextPart(read_page(file, size, at, budget=budget, encoding=encoding), size)
        head, tail = want.get("head"), want.get("tail")
        if tail is None:
            at = Cursor(0, 1, head)
            return TextPart(read_page(file, size, at, budget=budget, encoding=encoding), size)
        first = None
        if head is not None:
            budget //= 2
            first = read_page(file, size, Cursor(0, 1, head), budget=budget, encoding=encoding)
        head_end = first.end if first is not None else 0
        # The tail never starts before the head's end: with fewer lines than head + tail, nothing is shown twice.
        start, whole = tail_start(file, size, tail, budget, floor=head_end)
        cut = not whole and start > head_end
        last = read_page(file, size, Cursor(start, 0), budget=budget, encoding=encoding)
        if first is None:
            return TextPart(last, size, tail_cut=cut)
        return TextPart(first, size, tail=last, omitted=start - head_end, tail_cut=cut)


def read_bytes(place: Place, *, max_bytes: int) -> bytes:
    """A whole file, if it is at most ``max_bytes`` long.

    Raises:
        PathDenied, PathNotFound: from :func:`~plainmcp_filesystem.anchored.open_file`.
        ValueError: the file is larger than ``max_bytes`` (the message says how large).
    """
    fd = open_file(place)
    with open(fd, "rb", closefd=True) as file:
        size = os.fstat(file.fileno()).st_size
        if size > max_bytes:
            raise ValueError(f"The file is {size} bytes; the limit is {max_bytes} bytes")
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"The file grew past the limit of {max_bytes} bytes while being read")
    return data
