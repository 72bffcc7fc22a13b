"""File formats: what is read from a prompt file, exactly, for each format understood.

**plainmcp** (any ``.md`` file not recognised as one of the others). Front matter keys:
``name`` (default: the file name), ``title``, ``description`` (default: the body's first line),
``tags`` (a list of strings), ``arguments`` (a list; each item a name, or a mapping of the keys
:mod:`.arguments` reads: ``name``, ``title``, ``description``, ``required``, ``default``, ``values``,
``type``, ``pattern``, ``minimum``, ``maximum``). Without an ``arguments`` key, each ``{{placeholder}}`` of the body is a required argument.
The body is split into turns by ``## User`` / ``## Assistant`` headings (``messages.py``);
``{{name}}`` and ``{{> file}}`` are its only template syntax (``template.py``).

**Claude Code command files** (front matter with ``argument-hint``, ``allowed-tools``, ``model`` or
``disable-model-invocation``, or a body using ``$ARGUMENTS``, and no ``arguments`` key). ``description``
is read; ``argument-hint`` names the arguments when it is a list of ``[bracketed]`` words and is
otherwise the arguments' description; the other keys are accepted and ignored. ``$1``, ``$2``... are
optional arguments (named after the hint, else ``arg1``, ``arg2``...); ``$ARGUMENTS`` is then all of
them joined by spaces, or, without positional ones, one optional argument ``arguments``. The body is
one user message. ``!`command``` lines and ``@file`` references are left as text: nothing runs.

**VS Code prompt files** (``*.prompt.md``). ``name`` (default: the file name without
``.prompt.md``) and ``description`` are read; ``mode``, ``agent``, ``model``, ``tools`` and
``argument-hint`` are accepted and ignored. Each ``${input:name}`` / ``${input:name:placeholder}`` is a
required argument (the placeholder text is its description). Other variables (``${selection}``,
``${file}``, ``${workspaceFolder}``...) describe an editor this server does not have; they are left as
text. The body is one user message.

**Dotprompt files** (``*.prompt``): :mod:`.dotprompt` says what is read. **Agent Skills** (a file
named ``SKILL.md``, whatever its front matter): :mod:`.skills`.

``format: plainmcp | claude-code | vscode | dotprompt`` in the front matter overrides the detection
(a skill is known by its file name alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from . import dotprompt, skills, template
from .arguments import declare, scalar
from .frontmatter import Document, FormatError, parse, quote
from .messages import split_turns
from .model import ArgumentSpec, Embed, MessageTemplate, PromptSpec

FORMATS = ("plainmcp", "claude-code", "vscode", "dotprompt")
VSCODE_SUFFIX = ".prompt.md"
#: Prompt names: what the conformance suite accepts, and safe in every client's slash-command menu.
PROMPT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
MAX_DESCRIPTION = 200

_CLAUDE_KEYS = {"argument-hint", "allowed-tools", "model", "disable-model-invocation"}
_KNOWN_KEYS = {
    "plainmcp": {"name", "title", "description", "tags", "arguments", "format"},
    "claude-code": {"name", "description", "format", *_CLAUDE_KEYS},
    "vscode": {"name", "description", "format", "mode", "agent", "model", "tools", "argument-hint"},
    "dotprompt": dotprompt.KNOWN_KEYS,
    "skill": skills.KNOWN_KEYS,
}

Warn = Callable[[int | None, str], None]


def detect(meta: dict[str, Any], body: str, path: str, doc: Document) -> str:
    """Which format a file is written in (see the module docstring)."""
    if skills.is_skill_file(path):  # by its file name alone: a skill is a folder, not a front matter key
        return "skill"
    forced = meta.get("format")
    if forced is not None:
        if forced not in FORMATS:
            raise FormatError(f"format must be one of {', '.join(FORMATS)}, not {quote(forced)}", doc.line("format"))
        return str(forced)
    if path.endswith(VSCODE_SUFFIX):
        return "vscode"
    if path.endswith(dotprompt.SUFFIX):
        return "dotprompt"
    if "arguments" not in meta and (_CLAUDE_KEYS & meta.keys() or "$ARGUMENTS" in body):
        return "claude-code"
    return "plainmcp"


def load_prompt(text: str, *, root: str, path: str, warn: Warn) -> PromptSpec:
    """The prompt in file ``path`` (below library directory ``root``) whose content is ``text``.

    Raises FormatError (with the file line) when the file cannot be served; calls
    ``warn(line, message)`` for what is served anyway but probably not meant.
    """
    doc = parse(text)
    meta = dict(doc.meta)
    kind = detect(meta, doc.body, path, doc)
    for key in meta:
        if key not in _KNOWN_KEYS[kind]:
            warn(doc.line(key), f"unknown front matter key {quote(key)} for a {kind} file (ignored)")
    name = skills.name(meta, path, doc, warn, PROMPT_NAME) if kind == "skill" else _name(meta, path, kind, doc)
    if kind == "plainmcp":
        messages, arguments = _plainmcp_body(meta, doc, warn)
    elif kind == "claude-code":
        messages, arguments = _claude_body(meta, doc)
    elif kind == "dotprompt":
        messages, arguments = dotprompt.load(doc, warn)
    elif kind == "skill":
        messages, arguments = skills.body(meta, doc, warn)
    else:
        messages, arguments = _vscode_body(doc)
    return PromptSpec(
        name=name,
        title=_optional_string(meta, "title", doc) if kind == "plainmcp" else None,
        description=_optional_string(meta, "description", doc)
        or _first_line(dotprompt.describe(messages) if kind == "dotprompt" else doc.body)
        or name,
        arguments=arguments,
        tags=_tags(meta, doc) if kind == "plainmcp" else (),
        messages=messages,
        source=text,
        root=root,
        path=path,
        format=kind,
    )


# -------------------------------------------------------------------------------- common fields


def _name(meta: dict[str, Any], path: str, kind: str, doc: Document) -> str:
    name = meta.get("name")
    if name is not None:
        if not isinstance(name, str) or not PROMPT_NAME.fullmatch(name):
            raise FormatError(f"name {quote(name)} must be 1-64 characters from A-Z a-z 0-9 _ . -", doc.line("name"))
        return name
    filename = path.rsplit("/", 1)[-1]
    stem = filename[: -len(VSCODE_SUFFIX)] if kind == "vscode" and filename.endswith(VSCODE_SUFFIX) else filename
    stem = dotprompt.default_name(stem) if kind == "dotprompt" else stem.removesuffix(".md")
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-")[:64] or "prompt"


def _optional_string(meta: dict[str, Any], key: str, doc: Document) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FormatError(f"{key} must be a string", doc.line(key))
    return value.strip() or None


def _first_line(body: str) -> str | None:
    for line in body.split("\n"):
        line = line.strip().lstrip("#").strip()
        if line and line.casefold().removesuffix(":") not in ("user", "assistant"):
            return line if len(line) <= MAX_DESCRIPTION else line[: MAX_DESCRIPTION - 1] + "…"
    return None


def _tags(meta: dict[str, Any], doc: Document) -> tuple[str, ...]:
    tags = meta.get("tags")
    if tags is None:
        return ()
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise FormatError("tags must be a list of strings", doc.line("tags"))
    return tuple(dict.fromkeys(tag.strip() for tag in tags if tag.strip()))


# ------------------------------------------------------------------------------------- plainmcp


def _plainmcp_body(
    meta: dict[str, Any], doc: Document, warn: Warn
) -> tuple[tuple[MessageTemplate, ...], tuple[ArgumentSpec, ...]]:
    messages = tuple(
        MessageTemplate(section.role, template.compile_native(section.text, section.line))
        for section in split_turns(doc.body, doc.body_line)
    )
    embeds = [segment for message in messages for segment in message.segments if isinstance(segment, Embed)]
    if len(embeds) > template.MAX_EMBEDS:
        raise FormatError(
            f"more than {template.MAX_EMBEDS} embedded files ({{{{> ...}}}}) in one prompt",
            embeds[template.MAX_EMBEDS].line,
        )
    used = template.slot_names(messages)
    if "arguments" not in meta:
        return messages, tuple(ArgumentSpec(name, required=True) for name in used)
    arguments = _arguments(meta["arguments"], doc, warn)
    declared = {argument.name for argument in arguments}
    undeclared = [name for name in used if name not in declared]
    if undeclared:
        raise FormatError(
            f"the body uses {', '.join('{{' + n + '}}' for n in undeclared)} but arguments does not declare "
            f"{'it' if len(undeclared) == 1 else 'them'}",
            doc.line("arguments"),
        )
    return messages, arguments


def _arguments(raw: Any, doc: Document, warn: Warn) -> tuple[ArgumentSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise FormatError("arguments must be a list (of names, or of mappings with a name)", doc.line("arguments"))
    arguments: list[ArgumentSpec] = []
    for index, item in enumerate(raw):
        argument = _argument(item, index, doc, warn)
        if any(existing.name == argument.name for existing in arguments):
            raise FormatError(f"argument {argument.name!r} is declared twice", doc.line("arguments", index))
        arguments.append(argument)
    return tuple(arguments)


def _argument(item: Any, index: int, doc: Document, warn: Warn) -> ArgumentSpec:
    return declare(item, lambda *key: doc.line("arguments", index, *key), warn)


# ----------------------------------------------------------------------------------- claude code


def _hint_names(hint: str | None) -> list[str] | None:
    """``[pr-number] [priority]`` -> ["pr-number", "priority"]; None if the hint is not such a list."""
    if not hint or not re.fullmatch(r"\s*(\[[^\[\]]+\]\s*)+", hint):
        return None
    names = [re.sub(r"[^A-Za-z0-9_-]+", "_", word.strip()).strip("_") for word in re.findall(r"\[([^\[\]]+)\]", hint)]
    return [name if name and name[0].isalpha() else f"arg{i + 1}" for i, name in enumerate(names)]


def _claude_body(meta: dict[str, Any], doc: Document) -> tuple[tuple[MessageTemplate, ...], tuple[ArgumentSpec, ...]]:
    hint = meta.get("argument-hint")
    if hint is not None and not isinstance(hint, str):
        hint = scalar(hint) if not isinstance(hint, list) else " ".join(f"[{h}]" for h in hint)
    highest, whole = template.claude_positions(doc.body, doc.body_line)
    if not doc.body.strip():
        raise FormatError("the command has no text (the body is empty)", doc.body_line)
    arguments: list[ArgumentSpec] = []
    if highest:
        names = _hint_names(hint) or []
        positional = [names[i] if i < len(names) else f"arg{i + 1}" for i in range(highest)]
        positional = [name if positional.index(name) == i else f"arg{i + 1}" for i, name in enumerate(positional)]
        describe = hint if _hint_names(hint) is None else None
        arguments = [ArgumentSpec(name, description=describe or f"${i + 1}") for i, name in enumerate(positional)]
    else:
        positional = []
        if whole:
            arguments = [ArgumentSpec("arguments", description=hint or "$ARGUMENTS")]
    segments = template.compile_claude(doc.body, positional, "arguments")
    return (MessageTemplate("user", segments),), tuple(arguments)


# ---------------------------------------------------------------------------------------- vscode


def _vscode_body(doc: Document) -> tuple[tuple[MessageTemplate, ...], tuple[ArgumentSpec, ...]]:
    if not doc.body.strip():
        raise FormatError("the prompt has no text (the body is empty)", doc.body_line)
    inputs = template.vscode_inputs(doc.body)
    arguments = tuple(ArgumentSpec(name, description=hint, required=True) for name, hint in inputs.items())
    return (MessageTemplate("user", template.compile_vscode(doc.body)),), arguments


def load_file_text(text: str, *, root: str, path: str) -> tuple[PromptSpec, list[tuple[int | None, str]]]:
    """:func:`load_prompt` collecting the warnings: (spec, [(line, message)])."""
    warnings: list[tuple[int | None, str]] = []
    spec = load_prompt(text, root=root, path=path, warn=lambda line, message: warnings.append((line, message)))
    return spec, warnings
