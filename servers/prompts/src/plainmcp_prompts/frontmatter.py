"""Front matter: split a Markdown file into its YAML header and its body, keeping line numbers.

A file may open with a line ``---``, a YAML mapping, and a closing line ``---`` (or ``...``); the
rest is the body. A file without that opening line is all body. YAML is read with PyYAML's safe
loader only (plain data: no tags that build objects, nothing executes), bounded while it is read
(``safeyaml``: aliases, expanded size, nesting), and the front matter is at most
:data:`MAX_FRONT_MATTER_CHARS` long.

Every problem is a :class:`FormatError` carrying the 1-based line of the *file* it concerns, so a
warning can point an editor at it. A message is at most :data:`MAX_MESSAGE_CHARS` long, and a value
read from a file appears in one only through :func:`quote`.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from . import safeyaml

OPENING = "---"
CLOSINGS = ("---", "...")
#: Longest front matter read (characters between the two ``---`` lines).
MAX_FRONT_MATTER_CHARS = 64 * 1024
#: Longest problem message; a longer one is cut (it is logged, and may reach a client).
MAX_MESSAGE_CHARS = 500
#: Longest quotation of a value read from a file, in a message.
MAX_QUOTE_CHARS = 80


class FormatError(ValueError):
    """A file that cannot be served as a prompt: what is wrong, and where (1-based file line)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        message = clip(message, MAX_MESSAGE_CHARS)
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


def clip(text: str, limit: int) -> str:
    """``text``, cut to at most ``limit`` characters (the last one an ellipsis when cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Bounded at every level: a value from a file may be long, deeply nested or (through YAML aliases)
# far larger expanded than its text; only a small prefix of it is ever formatted.
_QUOTER = reprlib.Repr()
_QUOTER.maxlevel = 2
_QUOTER.maxdict = _QUOTER.maxlist = _QUOTER.maxtuple = _QUOTER.maxset = 4
_QUOTER.maxstring = _QUOTER.maxlong = _QUOTER.maxother = MAX_QUOTE_CHARS


def quote(value: Any, limit: int = MAX_QUOTE_CHARS) -> str:
    """``repr(value)`` for a message, at most ``limit`` characters whatever the value (a string is
    cut before it is quoted; a list or mapping shows its first items, two levels deep)."""
    if isinstance(value, str):
        text = repr(value[:limit]) if len(value) <= limit else repr(value[:limit]) + "…"
    else:
        try:
            text = _QUOTER.repr(value)
        except ValueError:  # an int too long to convert to text
            text = "<a very long number>"
    return clip(text, limit + 3)


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed file: the front matter (``{}`` when absent), the body, and where the body starts."""

    meta: Mapping[str, Any]
    body: str
    #: 1-based file line of the body's first line.
    body_line: int
    #: The YAML text, kept to find the line of a key when a problem is reported.
    yaml_text: str = ""
    _lines: dict[tuple[Any, ...], int] = field(default_factory=dict, compare=False, repr=False)

    def line(self, *path: Any) -> int | None:
        """The file line of the value at ``path`` (keys and list indexes) in the front matter, or of
        its closest ancestor that exists; None without front matter."""
        if not self.yaml_text:
            return None
        if not self._lines:
            self._lines.update(_node_lines(self.yaml_text))
        for depth in range(len(path), 0, -1):
            found = self._lines.get(tuple(path[:depth]))
            if found is not None:
                return found
        return 2  # the front matter's first line


def parse(text: str) -> Document:
    """Split ``text`` into front matter and body. Raises :class:`FormatError`."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[0].rstrip() != OPENING:
        return Document({}, text, 1)
    closing = next((i for i in range(1, len(lines)) if lines[i].rstrip() in CLOSINGS), None)
    if closing is None:
        raise FormatError("the front matter opened here is never closed (no '---' line after it)", 1)
    yaml_text = "\n".join(lines[1:closing])
    if len(yaml_text) > MAX_FRONT_MATTER_CHARS:
        raise FormatError(f"the front matter is longer than {MAX_FRONT_MATTER_CHARS // 1024} Ki characters", 2)
    meta = _load_yaml(yaml_text)
    return Document(meta, "\n".join(lines[closing + 1 :]), closing + 2, yaml_text)


# Claude Code's documentation writes ``argument-hint: [pr-number] [priority]`` unquoted, which is not
# YAML; Claude Code reads it anyway, so a file that fails only because of that line is read with the
# value quoted. Nothing else is repaired.
_BARE_HINT = re.compile(r"^(argument-hint:[ \t]*)(\[.*\][ \t]+\S.*?)[ \t]*$", re.MULTILINE)


def _load_yaml(yaml_text: str) -> dict[str, Any]:
    try:
        data = safeyaml.load(yaml_text)
    except safeyaml.LimitError as error:
        raise FormatError(f"front matter refused: it {error.problem}", _line(error.problem_mark)) from None
    except yaml.MarkedYAMLError as error:
        repaired = _BARE_HINT.sub(lambda m: m.group(1) + "'" + m.group(2).replace("'", "''") + "'", yaml_text)
        if repaired != yaml_text:
            return _load_yaml(repaired)
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "not valid YAML"
        raise FormatError(f"front matter is not valid YAML: {problem}", _line(mark)) from None
    except yaml.YAMLError:
        raise FormatError("front matter is not valid YAML", 2) from None
    except (ValueError, OverflowError):  # PyYAML matched a date or number Python cannot build
        raise FormatError("front matter holds a value that cannot be read (a date or number out of range)", 2) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FormatError(f"front matter must be a mapping of keys to values, not a {_kind(data)}", 2)
    bad_key = next((key for key in data if not isinstance(key, str)), None)
    if bad_key is not None:
        raise FormatError(f"front matter key {quote(bad_key)} must be a string", 2)
    return data


def _line(mark: Any) -> int:
    # +2: the YAML starts on the file's second line, and marks count from 0.
    return mark.line + 2 if mark is not None else 2


def _kind(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(value), "value")


# The safe loader's node tree knows where everything is; the data does not. Composed only when a
# problem needs a line (with the same limits as the data), and walked with a bound as well.
_MAX_NODES = 10_000


def _node_lines(yaml_text: str) -> dict[tuple[Any, ...], int]:
    try:
        root = safeyaml.compose(yaml_text)
    except yaml.YAMLError:
        return {}
    lines: dict[tuple[Any, ...], int] = {}
    pending: list[tuple[tuple[Any, ...], Any]] = [((), root)] if root is not None else []
    while pending and len(lines) < _MAX_NODES:
        path, node = pending.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    child = (*path, key.value)
                    lines[child] = key.start_mark.line + 2
                    pending.append((child, value))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                child = (*path, index)
                lines[child] = item.start_mark.line + 2
                pending.append((child, item))
    return lines
