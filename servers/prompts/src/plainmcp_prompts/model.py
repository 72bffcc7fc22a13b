"""What a loaded prompt is: plain, frozen data, the same whichever file format it came from.

Two specs compare equal exactly when they would be served the same way, which is how the watcher
tells a real change from a save that changed nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Text:
    """Literal text of a template."""

    text: str


@dataclass(frozen=True, slots=True)
class Slot:
    """The value of argument ``name``. ``positional`` marks Claude Code's ``$ARGUMENTS`` (all
    positional values joined by spaces), which has no argument of its own when ``$1``... are used."""

    name: str
    joined: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Embed:
    """Another file of the library, embedded as a resource: ``path`` as written (relative to the
    embedding file's folder); ``line`` is where it was written, for messages."""

    path: str
    line: int


@dataclass(frozen=True, slots=True)
class When:
    """Dotprompt's ``{{#if name}}then{{else}}otherwise{{/if}}`` (``negate``: ``{{#unless}}``): ``then``
    when argument ``name`` is set (not empty, and for a boolean not ``false``), else ``otherwise``."""

    name: str
    then: tuple[Segment, ...]
    otherwise: tuple[Segment, ...] = ()
    negate: bool = False
    boolean: bool = False

    def holds(self, value: str) -> bool:
        truthy = bool(value) and not (self.boolean and value == "false")
        return truthy != self.negate


Segment = Text | Slot | Embed | When


@dataclass(frozen=True, slots=True)
class MessageTemplate:
    role: str  # "user" | "assistant"
    segments: tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class ArgumentSpec:
    name: str
    description: str | None = None
    title: str | None = None
    required: bool = False
    #: Used when the argument is absent or empty; None means "empty string".
    default: str | None = None
    #: Allowed values; empty means any value.
    values: tuple[str, ...] = ()
    #: "string", "integer", "number" or "boolean" (:mod:`.typed`: what a value must look like).
    type: str = "string"
    #: A pattern the whole value must match (:mod:`.pattern`), as written.
    pattern: str | None = None
    #: Bounds of an integer or number, inclusive.
    minimum: int | float | None = None
    maximum: int | float | None = None

    def to_listing(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        entry["required"] = self.required
        if self.default is not None:
            entry["default"] = self.default
        if self.values:
            entry["values"] = list(self.values)
        if self.type != "string":
            entry["type"] = self.type
        if self.pattern is not None:
            entry["pattern"] = self.pattern
        if self.minimum is not None:
            entry["minimum"] = self.minimum
        if self.maximum is not None:
            entry["maximum"] = self.maximum
        return entry


@dataclass(frozen=True, slots=True)
class PromptSpec:
    """One prompt, ready to serve.

    ``root`` is the library directory the file lives in and ``path`` its path below it (with ``/``);
    ``source`` is the file's text as read, served as the prompt's resource.
    """

    name: str
    description: str
    messages: tuple[MessageTemplate, ...]
    source: str
    root: str
    path: str
    format: str  # "plainmcp" | "claude-code" | "vscode" | "dotprompt" | "skill"
    title: str | None = None
    arguments: tuple[ArgumentSpec, ...] = ()
    tags: tuple[str, ...] = ()
    #: A skill's other files (paths below its folder, sorted), served as its resources.
    files: tuple[str, ...] = ()
    #: Whether ``files`` was cut at a bound of the scan (the skill has more): its manifest would not
    #: be complete, so the skills extension leaves it out.
    files_cut: bool = False

    def argument(self, name: str) -> ArgumentSpec | None:
        return next((argument for argument in self.arguments if argument.name == name), None)

    def to_listing(self) -> dict[str, Any]:
        """The entry of the ``list_prompts`` tool: the MCP listing plus defaults, values and tags."""
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        entry["description"] = self.description
        entry["arguments"] = [argument.to_listing() for argument in self.arguments]
        entry["tags"] = list(self.tags)
        entry["format"] = self.format
        return entry
