"""Agent Skills (Anthropic's ``SKILL.md`` folders): what is read from a skill, as a prompt.

A folder holding a file named exactly ``SKILL.md`` is a skill: that file is its instructions, every
other file below the folder (``scripts/``, ``references/``, ``assets/``...) belongs to it and is
served as a resource, never read as a prompt (:mod:`.library`, :mod:`.resources`). A skill inside
another skill's folder is a file of the outer one.

``SKILL.md``'s front matter: ``name`` (the Agent Skills rule: 1-64 of ``a-z 0-9 -``, no hyphen at
either end or twice in a row; a name outside that rule but valid as a prompt name is served with a
warning; default: the folder's name, with a warning, since the specification requires it) and
``description`` (required too: without it, the body's first line, with a warning). ``license``,
``compatibility``, ``metadata`` and ``allowed-tools``, and the keys Claude Code adds
(``argument-hint``, ``model``, ``disable-model-invocation``, ``user-invocable``, ``context``, ``agent``,
``hooks``, ``when_to_use``), are accepted and ignored.

As a prompt, a skill is one user message: its instructions, as written (nothing in them is a
template), then the optional argument ``request`` (what the user wants done with the skill) as a second
user message. A body using ``$ARGUMENTS`` or ``$1``... (Claude Code's skills) is read like a Claude
Code command instead: its arguments are substituted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import template
from .frontmatter import Document, FormatError, quote
from .model import ArgumentSpec, MessageTemplate, Slot, Text

FILENAME = "SKILL.md"
KNOWN_KEYS = {
    "name",
    "description",
    "license",
    "compatibility",
    "metadata",
    "allowed-tools",
    "argument-hint",
    "model",
    "disable-model-invocation",
    "user-invocable",
    "context",
    "agent",
    "hooks",
    "when_to_use",
}
#: The Agent Skills specification's rule for a skill's name.
SKILL_NAME = re.compile(r"(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*")
REQUEST = ArgumentSpec("request", description="What you want done with this skill")

Warn = Callable[[int | None, str], None]


def is_skill_file(path: str) -> bool:
    """Whether ``path`` (below a library directory) is a skill's ``SKILL.md``."""
    return path.rpartition("/")[2] == FILENAME


def folder_of(path: str) -> str:
    """The skill folder of the ``SKILL.md`` at ``path`` ("" for the library directory itself)."""
    return path.rpartition("/")[0]


def name(meta: dict[str, Any], path: str, doc: Document, warn: Warn, valid: re.Pattern[str]) -> str:
    """The skill's name: ``name`` from the front matter, else its folder's name (see the module
    docstring); ``valid`` is what any prompt name must match."""
    folder = folder_of(path).rpartition("/")[2]
    given = meta.get("name")
    if given is None:
        warn(None, f"a skill needs a name (the Agent Skills specification requires it); using the folder's, {folder!r}")
        given = folder or "skill"
    if not isinstance(given, str) or not valid.fullmatch(given):
        raise FormatError(f"name {quote(given)} must be 1-64 characters from a-z 0-9 -", doc.line("name"))
    if not SKILL_NAME.fullmatch(given):
        warn(doc.line("name"), f"name {given!r} breaks the Agent Skills rule (lowercase a-z, 0-9 and single hyphens)")
    elif folder and given != folder:
        warn(doc.line("name"), f"name {given!r} differs from the skill's folder name {folder!r}")
    return given


def body(
    meta: dict[str, Any], doc: Document, warn: Warn
) -> tuple[tuple[MessageTemplate, ...], tuple[ArgumentSpec, ...]]:
    """The skill's messages and arguments (see the module docstring)."""
    if not doc.body.strip():
        raise FormatError("the skill has no instructions (the body is empty)", doc.body_line)
    if meta.get("description") is None:
        warn(None, "a skill needs a description (the Agent Skills specification requires it)")
    highest, whole = template.claude_positions(doc.body, doc.body_line)
    if highest or whole:
        return _substituted(meta, doc, highest)
    instructions = MessageTemplate("user", (Text(doc.body.strip("\n")),))
    return (instructions, MessageTemplate("user", (Slot(REQUEST.name),))), (REQUEST,)


def _substituted(
    meta: dict[str, Any], doc: Document, highest: int
) -> tuple[tuple[MessageTemplate, ...], tuple[ArgumentSpec, ...]]:
    """A body written for Claude Code: ``$1``... are optional arguments ``arg1``...; ``$ARGUMENTS``
    is all of them joined, or, without them, the one optional argument ``arguments``."""
    hint = meta.get("argument-hint")
    described = hint if isinstance(hint, str) else None
    positional = [f"arg{index + 1}" for index in range(highest)]
    if positional:
        arguments = tuple(ArgumentSpec(n, description=described or f"${i + 1}") for i, n in enumerate(positional))
    else:
        arguments = (ArgumentSpec("arguments", description=described or "$ARGUMENTS"),)
    return (MessageTemplate("user", template.compile_claude(doc.body, positional, "arguments")),), arguments
