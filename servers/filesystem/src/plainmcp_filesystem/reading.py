"""Reading files: text by lines (head, tail, a range) within a byte cap, and whole binary files.

Memory is bounded by the cap, not by the file: a 10 GB log read with ``tail`` reads a few blocks
from its end, and a file without newlines is read in cap-sized pieces.
"""

from __future__ import annotations

import codecs
import io
import os
from dataclasses import dataclass

from .paths import AccessPolicy

_BLOCK = 64 * 1024


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


def check_encoding(encoding: str) -> str:
    """The codec's canonical name. Raises LookupError for an unknown encoding."""
    return codecs.lookup(encoding).name


def read_text(
    policy: AccessPolicy,
    real_path: str,
    *,
    max_bytes: int,
    head: int | None = None,
    tail: int | None = None,
    start_line: int | None = None,
    end_line: int | None = None,
    encoding: str = "utf-8",
) -> TextRead:
    """Read a text file, or part of it, returning at most ``max_bytes`` bytes of it.

    ``head`` is lines ``1..head``; ``tail`` the last ``tail`` lines; ``start_line``/``end_line`` an
    inclusive 1-based range (either end open). The caller checks that they do not conflict.

    Raises:
        PathDenied, PathNotFound: from :meth:`AccessPolicy.open_file`.
    """
    fd = policy.open_file(real_path)
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
        data, truncated, last = _lines(file, start_line or 1, end_line, max_bytes)
        text, replaced = _decode(data, encoding, final=not truncated)
        return TextRead(text, size, truncated, replaced, start_line or 1, last)


def _lines(file: object, start: int, end: int | None, max_bytes: int) -> tuple[bytes, bool, int | None]:
    """Lines ``start..end`` (inclusive, 1-based); returns (bytes, truncated, last line shown)."""
    reader = io.BufferedReader(file, _BLOCK)  # type: ignore[arg-type]
    line = 1
    out = bytearray()
    last: int | None = None
    while end is None or line <= end:
        piece = reader.readline(max_bytes + 1)  # bounded: a file without newlines comes in pieces
        if not piece:
            return bytes(out), False, last
        if line >= start:
            room = max_bytes - len(out)
            if len(piece) > room:
                out += piece[:room]
                return bytes(out), True, line
            out += piece
            last = line
        if piece.endswith(b"\n"):
            line += 1
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


def read_bytes(policy: AccessPolicy, real_path: str, *, max_bytes: int) -> bytes:
    """A whole file, if it is at most ``max_bytes`` long.

    Raises:
        PathDenied, PathNotFound: from :meth:`AccessPolicy.open_file`.
        ValueError: the file is larger than ``max_bytes`` (the message says how large).
    """
    fd = policy.open_file(real_path)
    with open(fd, "rb", closefd=True) as file:
        size = os.fstat(file.fileno()).st_size
        if size > max_bytes:
            raise ValueError(f"The file is {size} bytes; the limit is {max_bytes} bytes")
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ValueError(f"The file grew past the limit of {max_bytes} bytes while being read")
    return data
