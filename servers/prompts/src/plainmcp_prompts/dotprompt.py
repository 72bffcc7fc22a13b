"""Dotprompt files (``*.prompt``, Google's Genkit format): what is read, and the template subset served.

Front matter: ``name`` (default: the file name without ``.prompt``; ``greet.formal.prompt``, a
variant, is ``greet.formal``), ``description``, ``input.schema`` and ``input.default``. ``model``,
``config``, ``output``, ``tools``, ``variant``, ``version``, ``metadata`` and ``ext`` are accepted and
ignored (they configure a model call this server does not make). Files whose name starts with ``_``
are Dotprompt partials, not prompts, and are not read.

``input.schema`` is Picoschema (``name: string, description``; ``name?: ...`` optional; ``name(enum,
description): [a, b]``; scalar types ``string``, ``integer``, ``number``, ``boolean``, ``any``) or a JSON
Schema object (``properties`` with ``type``, ``description``, ``enum``, ``pattern``, ``minimum``,
``maximum``, ``default``; ``required``). Each property is an argument, checked by the server like any
typed argument (:mod:`.typed`); a default makes it optional. Arrays and objects cannot be MCP prompt
arguments (those are single strings): such a file is reported and skipped. Without a schema, every
variable of the template is an optional argument (Handlebars renders a missing one as empty).

Template (Handlebars, no code): ``{{name}}`` and ``{{{name}}}`` (inserted as they are; nothing is
HTML-escaped), ``{{role "user"}}`` / ``{{role "model"}}`` (assistant) / ``{{role "system"}}`` (a user
turn: MCP prompts have no system role) start a message, ``{{#if name}}...{{else}}...{{/if}}`` and
``{{#unless name}}...{{/unless}}``, comments ``{{! }}`` / ``{{!-- --}}``, ``~`` whitespace control,
``\\{{`` for a literal ``{{``. Anything else (``{{#each}}``, partials, ``{{history}}``, ``{{media}}``,
``{{section}}``, helpers, paths like ``a.b``) is reported with its line and the file is skipped, so a
file is never served meaning something other than what its author wrote.
"""

from __future__ import annotations

import re
from typing import Any

from .arguments import Warn, declare
from .frontmatter import Document, FormatError, quote
from .model import ArgumentSpec, MessageTemplate, Segment, Slot, Text, When
from .template import ARGUMENT_NAME, merge_segments

SUFFIX = ".prompt"
KNOWN_KEYS = {
    "name",
    "description",
    "input",
    "model",
    "config",
    "output",
    "tools",
    "variant",
    "version",
    "metadata",
    "ext",
    "format",
}
ROLES = {"user": "user", "model": "assistant", "system": "user"}
#: Deepest nesting of ``{{#if}}`` / ``{{#unless}}``.
MAX_BLOCK_DEPTH = 16

_TAG = re.compile(r"\\\{\{|\{\{!--.*?--\}\}|\{\{\{(?P<raw>[^{}\n]*)\}\}\}|\{\{(?P<inner>[^{}]*?)\}\}|\{\{", re.DOTALL)
_NOT_TEXT = re.compile(r"\{\{!--.*?--\}\}|\{\{~?\s*(?:role\b|!|#|/|else\b)[^{}]*\}\}", re.DOTALL)
_PICO_KEY = re.compile(r"(?P<name>[^?(]+?)(?P<optional>\?)?(?:\((?P<kind>[a-z]+)(?:,\s*(?P<description>.*))?\))?")
_PICO_SCALARS = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "any": "string"}


def load(doc: Document, warn: Warn) -> tuple[tuple[MessageTemplate, ...], tuple[ArgumentSpec, ...]]:
    """The messages and arguments of a Dotprompt file. Raises FormatError (with the file line)."""
    meta = doc.meta
    arguments = _arguments(meta.get("input"), doc, warn)
    declared = {argument.name: argument for argument in arguments}
    messages, used = _compile(doc.body, doc.body_line, declared)
    if "input" not in meta or not isinstance(meta.get("input"), dict) or "schema" not in meta["input"]:
        return messages, tuple(ArgumentSpec(name) for name in used)
    undeclared = [name for name in used if name not in declared]
    if undeclared:
        raise FormatError(
            f"the template uses {', '.join(undeclared)} but input.schema does not declare "
            f"{'it' if len(undeclared) == 1 else 'them'}",
            doc.line("input", "schema"),
        )
    return messages, arguments


# --------------------------------------------------------------------------------------- the schema


def _arguments(raw: Any, doc: Document, warn: Warn) -> tuple[ArgumentSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        raise FormatError("input must be a mapping (with schema and default)", doc.line("input"))
    for key in raw:
        if key not in ("schema", "default"):
            warn(doc.line("input", key), f"unknown key {quote(key)} in input (ignored)")
    defaults = raw.get("default") or {}
    if not isinstance(defaults, dict):
        raise FormatError("input.default must be a mapping of argument names to values", doc.line("input", "default"))
    schema = raw.get("schema")
    if schema is None:
        return ()
    if isinstance(schema, str):
        raise FormatError(
            f"input.schema {quote(schema)} names a schema registered in code; this server can only read a "
            "schema written in the file",
            doc.line("input", "schema"),
        )
    if not isinstance(schema, dict):
        raise FormatError("input.schema must be a mapping", doc.line("input", "schema"))
    if schema.get("type") == "object" or isinstance(schema.get("properties"), dict):
        items = _json_schema(schema, doc)
    else:
        items = _picoschema(schema, doc)
    arguments = []
    for item, where in items:
        default = defaults.get(item["name"])
        if default is not None and "default" not in item:
            item["default"] = default
        if item.get("default") is not None:
            item["required"] = False  # a default makes it optional
        arguments.append(declare(item, lambda *key, where=where: doc.line(*where), warn))
    unknown = [name for name in defaults if not any(argument.name == name for argument in arguments)]
    if unknown:
        raise FormatError(
            f"input.default sets {quote(unknown[0])}, which input.schema does not declare", doc.line("input", "default")
        )
    return tuple(arguments)


def _picoschema(schema: dict[str, Any], doc: Document) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
    items = []
    for key, value in schema.items():
        where = ("input", "schema", key)
        match = _PICO_KEY.fullmatch(str(key))
        if match is None or not ARGUMENT_NAME.fullmatch(match["name"].strip()):
            raise FormatError(f"{quote(key)} is not an argument name this server accepts", doc.line(*where))
        name, kind = match["name"].strip(), match["kind"]
        item: dict[str, Any] = {"name": name, "required": match["optional"] is None}
        if kind == "enum":
            item["values"] = value
            if match["description"]:
                item["description"] = match["description"].strip()
        elif kind is not None or isinstance(value, (dict, list)):
            raise FormatError(
                f"argument {name!r} is {'an ' + kind if kind else 'a structure'}: MCP prompt arguments are "
                "single strings (use string, integer, number, boolean or enum)",
                doc.line(*where),
            )
        else:
            text = str(value) if value is not None else ""
            type_name, _, description = text.partition(",")
            type_name = type_name.strip()
            if type_name not in _PICO_SCALARS:
                raise FormatError(
                    f"argument {name!r} has type {quote(type_name)}; one of {', '.join(_PICO_SCALARS)} is needed",
                    doc.line(*where),
                )
            item["type"] = _PICO_SCALARS[type_name]
            if description.strip():
                item["description"] = description.strip()
        items.append((item, where))
    return items


def _json_schema(schema: dict[str, Any], doc: Document) -> list[tuple[dict[str, Any], tuple[Any, ...]]]:
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(properties, dict) or not isinstance(required, list):
        raise FormatError(
            "input.schema's properties must be a mapping and required a list", doc.line("input", "schema")
        )
    items = []
    for name, prop in properties.items():
        where = ("input", "schema", "properties", name)
        if not isinstance(prop, dict):
            raise FormatError(f"property {quote(name)} must be a mapping", doc.line(*where))
        kind = prop.get("type", "string")
        if kind in ("array", "object", "null") or not isinstance(kind, str):
            raise FormatError(
                f"argument {quote(name)} is of type {quote(kind)}: MCP prompt arguments are single strings",
                doc.line(*where),
            )
        item: dict[str, Any] = {"name": name, "type": kind, "required": name in required}
        for key in ("description", "pattern", "minimum", "maximum", "default", "title"):
            if key in prop:
                item[key] = prop[key]
        if "enum" in prop:
            item["values"] = prop["enum"]
        items.append((item, where))
    return items


# ------------------------------------------------------------------------------------- the template


def _compile(
    body: str, first_line: int, declared: dict[str, ArgumentSpec]
) -> tuple[tuple[MessageTemplate, ...], list[str]]:
    """The messages of a Dotprompt template, and the argument names it uses (in order)."""
    messages: list[MessageTemplate] = []
    used: dict[str, None] = {}
    role = "user"
    # The segments being built: one list per open block; each open block's (kind, name, then, line).
    stack: list[list[Segment]] = [[]]
    blocks: list[tuple[str, str, list[Segment] | None, int]] = []
    strip_next = False
    position = 0

    def add_text(text: str) -> None:
        nonlocal strip_next
        if strip_next:
            text = text.lstrip()
            strip_next = False
        stack[-1].append(Text(text))

    for match in _TAG.finditer(body):
        add_text(body[position : match.start()])
        position = match.end()
        token = match.group(0)
        line = first_line + body.count("\n", 0, match.start())
        if token == "\\{{":
            stack[-1].append(Text("{{"))
            continue
        if token.startswith("{{!--"):
            continue
        raw, inner = match.group("raw"), match.group("inner")
        if raw is None and inner is None:
            raise FormatError("'{{' is never closed with '}}' (write \\{{ for a literal '{{')", line)
        tag = (raw if raw is not None else inner).strip()
        if tag.startswith("~"):
            _strip_end(stack[-1])
            tag = tag[1:].strip()
        if tag.endswith("~"):
            strip_next = True
            tag = tag[:-1].strip()
        if raw is not None:
            tag = "{" + tag  # a triple stash takes only a variable: checked below
        if tag.startswith("!"):
            continue
        if tag.startswith(("#if ", "#unless ")):
            kind, _, name = tag[1:].partition(" ")
            name = _variable(name.strip(), line)
            if len(blocks) >= MAX_BLOCK_DEPTH:
                raise FormatError(f"conditions are nested more than {MAX_BLOCK_DEPTH} deep", line)
            used[name] = None
            blocks.append((kind, name, None, line))
            stack.append([])
        elif tag == "else":
            if not blocks or blocks[-1][2] is not None:
                raise FormatError("{{else}} outside an {{#if}} or {{#unless}} (or a second one)", line)
            kind, name, _, opened = blocks[-1]
            blocks[-1] = (kind, name, stack.pop(), opened)
            stack.append([])
        elif tag in ("/if", "/unless"):
            if not blocks or blocks[-1][0] != tag[1:]:
                raise FormatError(f"{{{{{tag}}}}} closes no open {{{{#{tag[1:]}}}}}", line)
            kind, name, then, _ = blocks.pop()
            last = stack.pop()
            then, otherwise = (then, last) if then is not None else (last, [])
            argument = declared.get(name)
            stack[-1].append(
                When(
                    name,
                    merge_segments(then),
                    merge_segments(otherwise),
                    negate=kind == "unless",
                    boolean=argument is not None and argument.type == "boolean",
                )
            )
        elif tag.startswith("role "):
            if blocks:
                raise FormatError("{{role}} inside a condition: a message cannot start conditionally", line)
            wanted = tag[5:].strip().strip("\"'")
            if wanted not in ROLES:
                raise FormatError(f"role {quote(wanted)} is not one of user, model, system", line)
            messages.append(MessageTemplate(role, merge_segments(stack[0])))
            stack[0] = []
            role = ROLES[wanted]
        else:
            name = _variable(tag.removeprefix("{"), line)
            used[name] = None
            stack[-1].append(Slot(name))
    add_text(body[position:])
    if blocks:
        raise FormatError(f"{{{{#{blocks[-1][0]} {blocks[-1][1]}}}}} is never closed", blocks[-1][3])
    messages.append(MessageTemplate(role, merge_segments(stack[0])))
    kept = tuple(message for message in messages if any(_has_text(s) for s in message.segments))
    if not kept:
        raise FormatError("the prompt has no text (the body is empty)", first_line)
    return kept, list(used)


def _variable(tag: str, line: int) -> str:
    word = tag.split()[0] if tag.split() else tag
    if ARGUMENT_NAME.fullmatch(tag) and tag not in ("history", "media", "section"):
        return tag
    if word in ("history", "media", "section") or word.startswith(("#", ">", "/")):
        what = {
            "history": "{{history}} needs a conversation",
            "media": "{{media}} needs media parts",
            "section": "{{section}} needs output sections",
        }.get(word, f"{quote('{{' + tag + '}}', 40)}")
        raise FormatError(
            f"{what}: this server serves variables, {{{{role}}}}, {{{{#if}}}} and {{{{#unless}}}} only",
            line,
        )
    raise FormatError(
        f"{quote('{{' + tag + '}}', 40)} is not a variable (a name of letters, digits, _ and -; no paths, "
        "helpers or loops)",
        line,
    )


def _strip_end(segments: list[Segment]) -> None:
    if segments and isinstance(segments[-1], Text):
        segments[-1] = Text(segments[-1].text.rstrip())


def _has_text(segment: Segment) -> bool:
    return not isinstance(segment, Text) or bool(segment.text.strip())


def without_tags(body: str) -> str:
    """``body`` without its role tags, comments and block tags (what a description is taken from)."""
    return _NOT_TEXT.sub("", body)


def default_name(filename: str) -> str:
    """``greet.prompt`` -> ``greet``; a variant ``greet.formal.prompt`` -> ``greet.formal``."""
    return filename.removesuffix(SUFFIX)
