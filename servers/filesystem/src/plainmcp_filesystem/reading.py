"""Reading files: text by lines (head, tail, a range) within a byte cap, and whole binary files.

Memory is bounded by the cap, not by the file: a 10 GB log read with ``tail`` reads a few blocks
from its end, and a file without newlines is read in cap-sized pieces. Only text encodings are
accepted (never a codec that decompresses or transforms bytes), and never more than the cap's
bytes are decoded. Skipping to a line far into a huge file is the one read whose time grows with the
file: callers run it in a worker thread and pass a ``check`` that stops it when cancelled.
"""

from __future__ import annotations

import codecs
import json
import os
from collections.abc import Callable
from dataclasses import dataclass

from .anchored import Place, open_file

_BLOCK = 64 * 1024
_CHUNK = 1024 * 1024

#: Text encodings that are still refused: their decoders are slow on crafted input (punycode and
#: idna are quadratic), or they turn escapes into other characters (a file then reads as what it
#: is not), or they decode nothing at all.
_REFUSED = {"idna", "punycode", "undefined", "unicode_escape", "raw_unicode_escape"}


@dataclass(frozen=True, slots=True)
class TextRead:
    """What a text read returned.

    ``start_line``/``end_line`` are the 1-based lines shown (None when reading from the start of an
    unbounded file); ``truncated`` means the byte cap cut the text short; ``replaced`` means bytes
    that were not valid in the encoding became U+FFFD.
    """

    text: str
    size: int
    truncated: bool
    replaced: bool
    start_line: int | None = None
    end_line: int | None = None


def _decode(data: bytes, encoding: str, *, final: bool) -> tuple[str, bool]:
    """Decode, replacing invalid bytes; a cut multi-byte character at the end is dropped, not replaced."""
    if encoding.replace("-", "").replace("_", "").lower() in ("utf8", "utf8sig") and data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
        encoding = "utf-8"
    decoder = codecs.getincrementaldecoder(encoding)(errors="strict")
    try:
        return decoder.decode(data, final=final), False
    except UnicodeDecodeError:
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        return decoder.decode(data, final=final), True


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
    if info._is_text_encoding is False or info.name.replace("-", "_") in _REFUSED:  # type: ignore[attr-defined]
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


def _nothing() -> None:
    return None


def read_text(
    place: Place,
    *,
    max_bytes: int,
    head: int | None = None,
    tail: int | None = None,
    start_line: int | None = None,
    end_line: int | None = None,
    encoding: str = "utf-8",
    check: Callable[[], None] = _nothing,
) -> TextRead:
    """Read a text file, or part of it, returning at most ``max_bytes`` bytes of it.

    ``head`` is lines ``1..head``; ``tail`` the last ``tail`` lines; ``start_line``/``end_line`` an
    inclusive 1-based range (either end open). The caller checks that they do not conflict.
    ``check`` is called between blocks while skipping lines (it may raise to stop the read).

    Raises:
        PathDenied, PathNotFound: from :func:`~plainmcp_filesystem.anchored.open_file`.
    """
    fd = open_file(place)
    with open(fd, "rb", buffering=0, closefd=True) as file:
        size = os.fstat(file.fileno()).st_size
        if tail is not None:
            data, truncated = _tail(file, size, tail, max_bytes)
            text, replaced = _decode(data, encoding, final=True)
            return TextRead(text, size, truncated, replaced)
        if head is not None:
            start_line, end_line = 1, head
        if start_line is None and end_line is None:
            data = file.read(max_bytes)
            truncated = size > len(data)
            text, replaced = _decode(data, encoding, final=not truncated)
            return TextRead(text, size, truncated, replaced)
        data, truncated, last = _lines(file, start_line or 1, end_line, max_bytes, check)
        text, replaced = _decode(data, encoding, final=not truncated)
        return TextRead(text, size, truncated, replaced, start_line or 1, last)


def _lines(file: object, start: int, end: int | None, max_bytes: int,
           check: Callable[[], None]) -> tuple[bytes, bool, int | None]:
    """Lines ``start..end`` (inclusive, 1-based); returns (bytes, truncated, last line shown).

    Read in 1 MiB blocks: lines before ``start`` are only counted (``bytes.count`` in C), so
    memory stays at one block whatever the lines' lengths.
    """
    read = file.read  # type: ignore[attr-defined]
    line = 1
    block = b""
    position = 0
    while line < start:
        check()
        block = read(_CHUNK)
        if not block:
            return b"", False, None
        newlines = block.count(b"\n")
        if line + newlines < start:
            line += newlines
            continue
        position = -1
        for _ in range(start - line):
            position = block.index(b"\n", position + 1)
        position += 1
        line = start
    out = bytearray()
    last: int | None = None
    while True:
        size = len(block)
        while position < size:
            newline = block.find(b"\n", position)
            stop = size if newline < 0 else newline + 1
            room = max_bytes - len(out)
            if stop - position > room:
                out += block[position : position + room]
                return bytes(out), True, line
            out += block[position:stop]
            last = line
            position = stop
            if newline >= 0:
                line += 1
                if end is not None and line > end:
                    return bytes(out), False, last
        check()
        block = read(_CHUNK)
        position = 0
        if not block:
            return bytes(out), False, last


def _tail(file: object, size: int, count: int, max_bytes: int) -> tuple[bytes, bool]:
    """The last ``count`` lines, read backwards in blocks; (bytes, truncated by the cap)."""
    if count <= 0 or size == 0:
        return b"", False
    position = size
    data = b""
    # A final newline ends the last line rather than starting an empty one.
    needed = count + 1
    while position > 0 and data.count(b"\n") < needed and len(data) <= max_bytes:
        step = min(_BLOCK, position)
        position -= step
        file.seek(position)  # type: ignore[attr-defined]
        data = file.read(step) + data  # type: ignore[attr-defined]
    ends_with_newline = data.endswith(b"\n")
    lines = (data[:-1] if ends_with_newline else data).split(b"\n")
    if position > 0:
        lines = lines[1:]  # the first piece starts mid-line
    truncated = position > 0 and len(lines) < count  # the cap stopped us before enough lines
    kept = b"\n".join(lines[-count:]) + (b"\n" if ends_with_newline else b"")
    if len(kept) > max_bytes:
        return kept[-max_bytes:], True
    return kept, truncated


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
