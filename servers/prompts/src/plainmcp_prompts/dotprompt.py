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
from dataclasses import dataclass
from typing import Any

from .arguments import Warn, declare
from .frontmatter import Document, FormatError, quote
from .model import ArgumentSpec, MessageTemplate, Segment, Slot, Text, When
from .template import ARGUMENT_NAME, LineCounter, merge_segments

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
# No two neighbouring parts may match the same characters: a key is front matter, up to 64 KiB,
# and overlapping parts (a "\\s*" before a ".*") backtrack quadratically over a long run of spaces.
_PICO_KEY = re.compile(r"(?P<name>[^?(]+?)(?P<optional>\?)?(?:\((?P<kind>[a-z]+)(?:,(?P<description>.*))?\))?")
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
    compiler = _Compiler(declared)
    position = 0
    lines = LineCounter(body, first_line)
    for match in _TAG.finditer(body):
        compiler.text(body[position : match.start()])
        position = match.end()
        compiler.tag(match, lines.at(match.start()))
    compiler.text(body[position:])
    return compiler.finish(first_line), list(compiler.used)


@dataclass
class _Block:
    """An open ``{{#if}}`` / ``{{#unless}}``: ``then`` is set once its ``{{else}}`` is seen."""

    kind: str
    name: str
    line: int
    then: list[Segment] | None = None


class _Compiler:
    """The state of one template being compiled: the messages so far, and the open blocks."""

    def __init__(self, declared: dict[str, ArgumentSpec]) -> None:
        self.declared = declared
        self.messages: list[MessageTemplate] = []
        self.used: dict[str, None] = {}
        self.role = "user"
        self.stack: list[list[Segment]] = [[]]  # the segments being built: one list per open block
        self.blocks: list[_Block] = []
        self.strip_next = False

    def text(self, text: str) -> None:
        if self.strip_next:
            text, self.strip_next = text.lstrip(), False
        self.stack[-1].append(Text(text))

    def tag(self, match: re.Match[str], line: int) -> None:
        token = match.group(0)
        if token == "\\{{":
            self.stack[-1].append(Text("{{"))
            return
        if token.startswith("{{!--"):
            return
        raw, inner = match.group("raw"), match.group("inner")
        if raw is None and inner is None:
            raise FormatError("'{{' is never closed with '}}' (write \\{{ for a literal '{{')", line)
        tag = (raw if raw is not None else inner).strip()
        if tag.startswith("~"):
            if self.stack[-1] and isinstance(self.stack[-1][-1], Text):
                self.stack[-1][-1] = Text(self.stack[-1][-1].text.rstrip())
            tag = tag[1:].strip()
        if tag.endswith("~"):
            self.strip_next, tag = True, tag[:-1].strip()
        if raw is not None:  # a triple stash holds a variable only
            self.variable(tag, line)
        elif tag.startswith("!"):
            return
        elif tag.startswith(("#if ", "#unless ")):
            self.open(tag, line)
        elif tag == "else":
            if not self.blocks or self.blocks[-1].then is not None:
                raise FormatError("{{else}} outside an {{#if}} or {{#unless}} (or a second one)", line)
            self.blocks[-1].then = self.stack.pop()
            self.stack.append([])
        elif tag in ("/if", "/unless"):
            self.close(tag[1:], line)
        elif tag.startswith("role "):
            self.switch_role(tag[5:].strip().strip("\"'"), line)
        else:
            self.variable(tag, line)

    def variable(self, tag: str, line: int) -> None:
        name = _variable(tag, line)
        self.used[name] = None
        self.stack[-1].append(Slot(name))

    def open(self, tag: str, line: int) -> None:
        kind, _, name = tag[1:].partition(" ")
        name = _variable(name.strip(), line)
        if len(self.blocks) >= MAX_BLOCK_DEPTH:
            raise FormatError(f"conditions are nested more than {MAX_BLOCK_DEPTH} deep", line)
        self.used[name] = None
        self.blocks.append(_Block(kind, name, line))
        self.stack.append([])

    def close(self, kind: str, line: int) -> None:
        if not self.blocks or self.blocks[-1].kind != kind:
            raise FormatError(f"{{{{/{kind}}}}} closes no open {{{{#{kind}}}}}", line)
        block = self.blocks.pop()
        last = self.stack.pop()
        then, otherwise = (block.then, last) if block.then is not None else (last, [])
        argument = self.declared.get(block.name)
        self.stack[-1].append(
            When(
                block.name,
                merge_segments(then),
                merge_segments(otherwise),
                negate=kind == "unless",
                boolean=argument is not None and argument.type == "boolean",
            )
        )

    def switch_role(self, wanted: str, line: int) -> None:
        if self.blocks:
            raise FormatError("{{role}} inside a condition: a message cannot start conditionally", line)
        if wanted not in ROLES:
            raise FormatError(f"role {quote(wanted)} is not one of user, model, system", line)
        self.messages.append(MessageTemplate(self.role, merge_segments(self.stack[0])))
        self.stack[0] = []
        self.role = ROLES[wanted]

    def finish(self, first_line: int) -> tuple[MessageTemplate, ...]:
        if self.blocks:
            block = self.blocks[-1]
            raise FormatError(f"{{{{#{block.kind} {block.name}}}}} is never closed", block.line)
        self.messages.append(MessageTemplate(self.role, merge_segments(self.stack[0])))
        kept = tuple(message for message in self.messages if any(_has_text(s) for s in message.segments))
        if not kept:
            raise FormatError("the prompt has no text (the body is empty)", first_line)
        return kept


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


def _has_text(segment: Segment) -> bool:
    return not isinstance(segment, Text) or bool(segment.text.strip())


def describe(messages: tuple[MessageTemplate, ...]) -> str:
    """The first message's text with its variables as ``{{name}}`` and without its conditions: what
    a description is taken from when the file has none (its first line). Built from the compiled
    template, so it costs one pass whatever the body holds."""
    parts = []
    for segment in messages[0].segments if messages else ():
        if isinstance(segment, Text):
            parts.append(segment.text)
        elif isinstance(segment, Slot):
            parts.append("{{" + segment.name + "}}")
    return "".join(parts)


def default_name(filename: str) -> str:
    """``greet.prompt`` -> ``greet``; a variant ``greet.formal.prompt`` -> ``greet.formal``."""
    return filename.removesuffix(SUFFIX)
