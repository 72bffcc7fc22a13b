"""Templates: substitution only, and embedding another file of the library.

No code runs in a template. What each format understands (and nothing else is interpreted):

- plainmcp files: ``{{name}}`` (spaces inside the braces allowed) is the value of argument
  ``name``; ``{{> path}}`` embeds the library file at ``path`` (relative to the embedding file's
  folder) as an embedded resource; ``\\{{`` is a literal ``{{``. Any other ``{{`` is an error, so a
  typo or a template-language construct (``{{#if}}``) is reported instead of served.
- Claude Code command files: ``$ARGUMENTS`` and ``$1``, ``$2``...
- VS Code prompt files: ``${input:name}`` and ``${input:name:placeholder}``.

A value is inserted as it is: it is never scanned for placeholders, so an argument cannot reach
another argument or a file.
"""

from __future__ import annotations

import json
import mimetypes
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from plainmcp import content

from . import beneath
from .frontmatter import FormatError, quote
from .model import Embed, MessageTemplate, Segment, Slot, Text, When

#: Argument names: what ``{{...}}`` accepts, and what the front matter may declare.
ARGUMENT_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")

_NATIVE = re.compile(r"\\\{\{|\{\{(?P<inner>[^\n]*?)\}\}|\{\{")
_CLAUDE = re.compile(r"\$ARGUMENTS\b|\$(?P<index>[1-9][0-9]*)")
_VSCODE = re.compile(r"\$\{input:(?P<name>[A-Za-z0-9_-]+)(?::(?P<hint>[^}\n]*))?\}")

#: Largest file that may be embedded.
MAX_EMBED_BYTES = 256 * 1024
#: Highest ``$N`` of a Claude Code command (each is an argument of the prompt).
MAX_POSITIONAL = 32
#: Files one prompt may embed.
MAX_EMBEDS = 32
#: Largest rendered prompt (text, argument values and embedded files together), in the bytes its text
#: takes in the JSON message, not in characters: a control character travels as six (``\u0001``), a
#: non-ASCII one as up to four, so a count of characters would let a prompt past the message limit.
#: A template may repeat a placeholder thousands of times, so this is checked before text is built.
MAX_RENDER_BYTES = 1024 * 1024


class TooLarge(ValueError):
    """The prompt, rendered, would be larger than MAX_RENDER_BYTES."""


class LineCounter:
    """File lines of offsets in ``text`` (which starts at file line ``first_line``), asked in
    increasing order: each newline is counted once, where counting from the start for every
    placeholder of a 256 KiB file would be quadratic."""

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.line = first_line
        self.offset = 0

    def at(self, offset: int) -> int:
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def merge_segments(segments: list[Segment]) -> tuple[Segment, ...]:
    """``segments`` without empty texts, neighbouring texts joined (once per run: a file of thousands
    of ``\\{{`` would make adding each piece to the text so far quadratic)."""
    merged: list[Segment] = []
    run: list[str] = []
    for segment in segments:
        if isinstance(segment, Text):
            run.append(segment.text)
            continue
        if any(run):
            merged.append(Text("".join(run)))
        run = []
        merged.append(segment)
    if any(run):
        merged.append(Text("".join(run)))
    return tuple(merged)


def compile_native(text: str, first_line: int) -> tuple[Segment, ...]:
    """Segments of a plainmcp template. Raises FormatError (with the file line) for a ``{{`` that
    is neither a placeholder nor an embed."""
    segments: list[Segment] = []
    position = 0
    lines = LineCounter(text, first_line)
    for match in _NATIVE.finditer(text):
        segments.append(Text(text[position : match.start()]))
        position = match.end()
        token = match.group(0)
        if token == "\\{{":
            segments.append(Text("{{"))
            continue
        line = lines.at(match.start())
        inner = match.group("inner")
        if inner is None:
            raise FormatError("'{{' is never closed with '}}' (write \\{{ for a literal '{{')", line)
        inner = inner.strip()
        if inner.startswith(">"):
            path = inner[1:].strip()
            if not path:
                raise FormatError("'{{>}}' needs the path of the file to embed", line)
            check_embed_path(path, line)
            segments.append(Embed(path, line))
        elif ARGUMENT_NAME.fullmatch(inner):
            segments.append(Slot(inner))
        else:
            raise FormatError(
                f"{quote('{{' + inner + '}}')} is not a placeholder: templates only substitute {{{{argument}}}} and embed "
                "{{> file}} (write \\{{ for a literal '{{')",
                line,
            )
    segments.append(Text(text[position:]))
    return merge_segments(segments)


def claude_positions(text: str, first_line: int = 1) -> tuple[int, bool]:
    """(highest ``$N`` used, whether ``$ARGUMENTS`` is used) in a Claude Code command body (which
    starts at file line ``first_line``). Raises FormatError for a ``$N`` above MAX_POSITIONAL."""
    highest, whole = 0, False
    for match in _CLAUDE.finditer(text):
        index = match.group("index")
        if index is None:
            whole = True
        elif len(index) > 2 or int(index) > MAX_POSITIONAL:  # length first: int() of 5,000 digits fails
            line = first_line + text.count("\n", 0, match.start())
            raise FormatError(
                f"{quote(match.group(0), 12)} is beyond ${MAX_POSITIONAL}, the highest positional "
                "argument a command may use",
                line,
            )
        else:
            highest = max(highest, int(index))
    return highest, whole


def compile_claude(text: str, positional: Sequence[str], whole: str) -> tuple[Segment, ...]:
    """Segments of a Claude Code command: ``$N`` is argument ``positional[N-1]``; ``$ARGUMENTS`` is
    argument ``whole`` when there are no positional arguments, else all of them joined by spaces."""
    segments: list[Segment] = []
    position = 0
    for match in _CLAUDE.finditer(text):
        segments.append(Text(text[position : match.start()]))
        position = match.end()
        index = match.group("index")
        if index is not None:
            segments.append(Slot(positional[int(index) - 1]))
        elif positional:
            segments.append(Slot(whole, joined=tuple(positional)))
        else:
            segments.append(Slot(whole))
    segments.append(Text(text[position:]))
    return merge_segments(segments)


def vscode_inputs(text: str) -> dict[str, str | None]:
    """The ``${input:name:placeholder}`` variables of a VS Code prompt, in order of first use, with
    the first placeholder text given for each."""
    inputs: dict[str, str | None] = {}
    for match in _VSCODE.finditer(text):
        hint = (match.group("hint") or "").strip() or None
        if inputs.get(match.group("name")) is None:
            inputs[match.group("name")] = hint
    return inputs


def compile_vscode(text: str) -> tuple[Segment, ...]:
    segments: list[Segment] = []
    position = 0
    for match in _VSCODE.finditer(text):
        segments.append(Text(text[position : match.start()]))
        position = match.end()
        segments.append(Slot(match.group("name")))
    segments.append(Text(text[position:]))
    return merge_segments(segments)


def slot_names(messages: Sequence[MessageTemplate]) -> list[str]:
    """Every argument name the templates use, in order of first use."""
    names: dict[str, None] = {}

    def visit(segments: Sequence[Segment]) -> None:
        for segment in segments:
            if isinstance(segment, Slot):
                for name in segment.joined or (segment.name,):
                    names[name] = None
            elif isinstance(segment, When):
                names[segment.name] = None
                visit(segment.then)
                visit(segment.otherwise)

    for message in messages:
        visit(message.segments)
    return list(names)


# ------------------------------------------------------------------------------------- rendering


@dataclass(frozen=True, slots=True)
class EmbeddedFile:
    """A file to embed: its text, or for a binary file (:func:`binary_mime_type`) its bytes as
    ``blob`` (``text`` is then empty)."""

    uri: str
    text: str
    mime_type: str
    blob: bytes | None = None


EmbedReader = Callable[[Embed], EmbeddedFile]


def render(
    messages: Sequence[MessageTemplate], values: Mapping[str, str], read_embed: EmbedReader
) -> list[dict[str, Any]]:
    """Prompt messages: each template's text with ``values`` substituted, split around embedded
    files (a message holds one content block, so an embed becomes a message of its own, same role).

    Raises TooLarge, before building it, for a result of more than MAX_RENDER_BYTES as JSON.
    """
    rendered: list[dict[str, Any]] = []
    size = 0
    sizes: dict[str, int] = {}  # a value repeated a thousand times is measured once

    def count(length: int) -> None:
        nonlocal size
        size += length
        if size > MAX_RENDER_BYTES:
            raise TooLarge(f"larger than {MAX_RENDER_BYTES} bytes once encoded")

    def value_size(name: str) -> int:
        if name not in sizes:
            sizes[name] = json_size(values.get(name, ""))
        return sizes[name]

    def flat(segments: Sequence[Segment]) -> Iterator[Segment]:
        """The segments with each condition replaced by its chosen branch."""
        for segment in segments:
            if isinstance(segment, When):
                yield from flat(segment.then if segment.holds(values.get(segment.name, "")) else segment.otherwise)
            else:
                yield segment

    for message in messages:
        pending: list[str] = []
        conditional = any(isinstance(segment, When) for segment in message.segments)
        for segment in flat(message.segments) if conditional else message.segments:
            if isinstance(segment, Text):
                count(json_size(segment.text))
                pending.append(segment.text)
            elif isinstance(segment, Slot):
                if segment.joined:
                    parts = [v for v in (values.get(n, "") for n in segment.joined) if v]
                    count(sum(value_size(n) for n in segment.joined) + len(parts))
                    pending.append(" ".join(parts))
                else:
                    count(value_size(segment.name))
                    pending.append(values.get(segment.name, ""))
            else:
                assert isinstance(segment, Embed)  # no When is left: flat() chose their branches, or there were none
                _flush(rendered, message.role, pending)
                pending = []
                embedded = read_embed(segment)
                if embedded.blob is not None:
                    count(-(-len(embedded.blob) // 3) * 4)  # as it travels: base64
                    contents = content.blob_contents(embedded.uri, embedded.blob, embedded.mime_type)
                else:
                    count(json_size(embedded.text))
                    contents = content.text_contents(embedded.uri, embedded.text, embedded.mime_type)
                rendered.append(content.message(message.role, content.embedded_resource(contents)))
        _flush(rendered, message.role, pending)
    return rendered


def json_size(text: str) -> int:
    """The bytes ``text`` takes inside a JSON string, escapes included (the quotes not)."""
    if text.isascii() and text.isprintable():  # the common case: as many bytes as characters, but escapes
        return len(text) + text.count('"') + text.count("\\")
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2


def _flush(rendered: list[dict[str, Any]], role: str, pending: list[str]) -> None:
    """Add the text gathered so far as a message, without the blank lines around it (none if blank)."""
    text = "".join(pending).strip("\n")
    if text.strip():
        rendered.append(content.message(role, text))


# -------------------------------------------------------------------------------------- embedding


def check_embed_path(path: str, line: int | None = None) -> None:
    """Refuse, as written, a path that could leave the library. Raises FormatError."""
    if "\x00" in path or "\\" in path:
        raise FormatError(f"embedded path {quote(path)} may not contain backslashes or NUL", line)
    if path.startswith(("/", "~")) or re.match(r"[A-Za-z]:", path):
        raise FormatError(f"embedded path {quote(path)} must be relative to the embedding file", line)


def read_embedded(root: str, folder: str, path: str) -> tuple[str, str | bytes]:
    """(path below ``root``, text or bytes) of the file ``path`` written in a file of ``folder`` (a
    path below ``root``): :func:`open_embedded`, then :func:`read_embedded_data`. Raises FormatError."""
    with open_embedded(root, folder, path) as (fd, relative):
        return relative, read_embedded_data(fd, path, relative)


def read_embedded_data(fd: int, path: str, relative: str) -> str | bytes:
    """The content of the embedded file open as ``fd``: bytes for a binary file (its type, from its
    resolved path ``relative``, is an image, audio, PDF...: :func:`binary_mime_type`), else its text
    (:func:`read_embedded_text`). At most MAX_EMBED_BYTES either way. Raises FormatError."""
    if binary_mime_type(relative) is None:
        return read_embedded_text(fd, path)
    return _read_limited(fd, path)


@contextmanager
def open_embedded(root: str, folder: str, path: str) -> Iterator[tuple[int, str]]:
    """(descriptor, path below ``root``) of the file ``path`` written in a file of ``folder``,
    opened at every call through directory descriptors from ``root`` (``beneath``): links inside the
    library are followed, a link or ``..`` leading out is refused whenever it appears. The file must
    not be hidden (on its resolved path). The descriptor is closed on leaving.

    Raises FormatError with a message that names no host path.
    """
    check_embed_path(path)
    try:
        fd, relative = beneath.open_below(root, f"{folder}/{path}" if folder else path)
    except beneath.OutsideError:
        raise FormatError(f"embedded file {quote(path)} is outside the library directory") from None
    except OSError:
        raise FormatError(f"embedded file {quote(path)} does not exist or is not a readable regular file") from None
    try:
        if any(part.startswith(".") for part in relative.split("/")):
            raise FormatError(f"embedded file {quote(path)} is hidden; hidden files are never embedded")
        yield fd, relative
    finally:
        os.close(fd)


def read_embedded_text(fd: int, path: str) -> str:
    """The text of the embedded file open as ``fd`` (``path`` as written, for messages): a regular
    file of at most MAX_EMBED_BYTES of UTF-8. Raises FormatError."""
    data = _read_limited(fd, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError(f"embedded file {quote(path)} is not UTF-8 text") from None


def _read_limited(fd: int, path: str) -> bytes:
    try:
        data = beneath.read_regular(fd, MAX_EMBED_BYTES + 1)
    except OSError:
        data = None
    if data is None:
        raise FormatError(f"embedded file {quote(path)} does not exist or is not a readable regular file")
    if len(data) > MAX_EMBED_BYTES:
        raise FormatError(f"embedded file {quote(path)} is larger than {MAX_EMBED_BYTES // 1024} KiB")
    return data


#: Types embedded as bytes (a blob); every other file must be UTF-8 text.
_BINARY_TYPES = ("image/", "audio/", "video/", "application/pdf", "application/zip", "application/octet-stream")


def binary_mime_type(path: str) -> str | None:
    """The type of ``path`` if, by its name, it is a binary file (an image, audio, video, PDF or ZIP
    file), else None: anything else is embedded as text, and must be UTF-8."""
    guessed, _ = mimetypes.guess_type(path)
    return guessed if guessed is not None and guessed.startswith(_BINARY_TYPES) else None


def mime_type(path: str) -> str:
    if path.endswith((".md", ".markdown")):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(path)
    return guessed if guessed and guessed.startswith("text/") else "text/plain"
