"""Front matter: split a Markdown file into its YAML header and its body, keeping line numbers.

A file may open with a line ``---``, a YAML mapping, and a closing line ``---`` (or ``...``); the
rest is the body. A file without that opening line is all body. YAML is read with PyYAML's safe
loader only (plain data: no tags that build objects, nothing executes).

Every problem is a :class:`FormatError` carrying the 1-based line of the *file* it concerns, so a
warning can point an editor at it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

OPENING = "---"
CLOSINGS = ("---", "...")


class FormatError(ValueError):
    """A file that cannot be served as a prompt: what is wrong, and where (1-based file line)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


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
    meta = _load_yaml(yaml_text)
    return Document(meta, "\n".join(lines[closing + 1 :]), closing + 2, yaml_text)


# Claude Code's documentation writes ``argument-hint: [pr-number] [priority]`` unquoted, which is not
# YAML; Claude Code reads it anyway, so a file that fails only because of that line is read with the
# value quoted. Nothing else is repaired.
_BARE_HINT = re.compile(r"^(argument-hint:[ \t]*)(\[.*\][ \t]+\S.*?)[ \t]*$", re.MULTILINE)


def _load_yaml(yaml_text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(yaml_text)
    except yaml.MarkedYAMLError as error:
        repaired = _BARE_HINT.sub(lambda m: m.group(1) + "'" + m.group(2).replace("'", "''") + "'", yaml_text)
        if repaired != yaml_text:
            return _load_yaml(repaired)
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context or "not valid YAML"
        # +2: the YAML starts on the file's second line, and marks count from 0.
        raise FormatError(f"front matter is not valid YAML: {problem}", mark.line + 2 if mark else 2) from None
    except yaml.YAMLError as error:
        raise FormatError(f"front matter is not valid YAML: {error}", 2) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FormatError(f"front matter must be a mapping of keys to values, not a {_kind(data)}", 2)
    bad_key = next((key for key in data if not isinstance(key, str)), None)
    if bad_key is not None:
        raise FormatError(f"front matter key {bad_key!r} must be a string", 2)
    return data


def _kind(value: Any) -> str:
    return {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}.get(type(value), "value")


# The safe loader's node tree knows where everything is; the data does not. Composed only when a
# problem needs a line, and walked breadth-first with a bound, since YAML aliases can make a small
# text describe a huge graph.
_MAX_NODES = 10_000


def _node_lines(yaml_text: str) -> dict[tuple[Any, ...], int]:
    try:
        root = yaml.compose(yaml_text, Loader=yaml.SafeLoader)
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
