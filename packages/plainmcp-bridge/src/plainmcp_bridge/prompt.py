"""The system prompt, built from the live tool list in three parts: role, tools in plain words, calling rules.

Small models follow plain instructions ("you must give city, a string such as Shanghai") far better than
raw JSON Schema, so each tool is described from its schema in sentences: what it does, the arguments it
needs, the ones it may take (with allowed values and bounds), and what comes back. The prompt is rebuilt
whenever the tool list changes. An operator may replace it with a file of their own, in which ``{tools}``
stands for the generated tool descriptions (so the file stays right when the tools change). No I/O here
but reading that file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .problems import quote
from .shapes import mapping

ROLE = (
    "You are an assistant that answers the user's questions and carries out their requests by calling tools. "
    "Use a tool whenever the answer depends on data the tools provide; otherwise answer directly."
)

RULES = (
    "Rules for calling tools:\n"
    "- Call one tool at a time, then wait for its result.\n"
    "- Use the tool names and argument names exactly as written above; never invent a tool or an argument.\n"
    "- Give every required argument. If you do not know a required value, ask the user instead of guessing.\n"
    "- Give values of the stated type and, where allowed values are listed, one of them exactly.\n"
    "- If a tool reports an error, tell the user what went wrong. Never invent a result.\n"
    "- When you have what you need, answer the user in plain words."
)

#: How to write a call when the model server has no tool support of its own (it drops the request's
#: tools): the first form the recovery reads, so what the model writes is what the bridge reads first.
TEXT_CALLS = (
    "How to call a tool: write exactly\n"
    '<tool_call>{"name": "<tool name>", "arguments": {<its arguments>}}</tool_call>\n'
    "and stop there: the result comes back in the next message. Write nothing after the call."
)

#: In place of the tool descriptions when the model server renders the tools itself.
RENDERED = "The tools and how to call them are given to you with this conversation; use them as they are listed."

#: In an operator's prompt file, this stands for the generated tool descriptions.
TOOLS_PLACEHOLDER = "{tools}"
#: Descriptions longer than this are cut (a server's description is not ours to let flood the context).
MAX_DESCRIPTION = 400

_TYPES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}


def build_system_prompt(
    tools: Iterable[Mapping[str, Any]],
    *,
    template: str | None = None,
    calling: str = TEXT_CALLS,
    rendered: bool = False,
) -> str:
    """The system prompt for ``tools`` (MCP tool listings). With ``template`` (an operator's text),
    ``{tools}`` in it is replaced by the tool descriptions and nothing else is added. ``calling`` says
    how a call is written (:data:`TEXT_CALLS`, or the constrained JSON form). ``rendered``: the model
    server's chat template shows the model the tools and its own way to call them, so the generated
    prompt neither describes them again nor prescribes a call format."""
    described = describe_tools(tools)
    if template is not None:
        return template.replace(TOOLS_PLACEHOLDER, described)
    if rendered:
        return f"{ROLE}\n\n{RENDERED}\n\n{RULES}"
    return f"{ROLE}\n\nThe tools:\n\n{described}\n\n{RULES}\n\n{calling}"


def load_template(path: str | Path) -> str:
    """An operator's prompt file (UTF-8). Raises OSError or UnicodeDecodeError as reading does."""
    return Path(path).read_text(encoding="utf-8")


def describe_tools(tools: Iterable[Mapping[str, Any]]) -> str:
    blocks = [describe_tool(tool) for tool in tools]
    return "\n\n".join(blocks) if blocks else "(No tools are available: answer without tools.)"


def describe_tool(tool: Mapping[str, Any]) -> str:
    """One tool in plain words: name and purpose, required and optional arguments, what comes back,
    and whether it changes anything."""
    name = str(tool.get("name"))
    description = _short(str(tool.get("description") or tool.get("title") or "").strip())
    lines = [f"{name}: {description}" if description else name]
    schema = mapping(tool.get("inputSchema"))
    properties = mapping(schema.get("properties"))
    required = [key for key in schema.get("required") or () if key in properties]
    optional = [key for key in properties if key not in required]
    if required:
        lines.append("  You must give: " + "; ".join(_argument(key, properties[key]) for key in required) + ".")
    if optional:
        lines.append("  You may give: " + "; ".join(_argument(key, properties[key]) for key in optional) + ".")
    if not properties:
        lines.append("  It takes no arguments.")
    returns = _returns(tool.get("outputSchema"))
    if returns:
        lines.append(f"  You get back: {returns}.")
    annotations = mapping(tool.get("annotations"))
    if annotations.get("destructiveHint") is True or (
        annotations.get("readOnlyHint") is not True and annotations.get("destructiveHint") is not False
    ):
        # The MCP defaults: a tool is read-only only when it says so, and destructive unless it says not.
        lines.append("  It may change or delete things.")
    return "\n".join(lines)


def _argument(name: str, schema: Any) -> str:
    return f"{name}, {value_words(schema)}"


def value_words(schema: Any, depth: int = 0) -> str:
    """A property's schema in words: type, allowed values, bounds, default, example, description."""
    if not isinstance(schema, dict):
        return "any value"
    if "enum" in schema and isinstance(schema["enum"], list):
        words = "one of " + ", ".join(quote(value) for value in schema["enum"])
    elif "const" in schema:
        words = f"exactly {quote(schema['const'])}"
    else:
        words = _type_words(schema, depth)
    extras = _bounds(schema)
    if "default" in schema:
        extras.append(f"default {quote(schema['default'])}")
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        extras.append(f"such as {quote(examples[0])}")
    description = _short(str(schema.get("description") or "").strip(), 160)
    if description:
        extras.append(description.rstrip("."))
    return words + (f" ({'; '.join(extras)})" if extras else "")


def _type_words(schema: dict[str, Any], depth: int) -> str:
    type_ = schema.get("type")
    if isinstance(type_, list):
        return " or ".join(_TYPES.get(str(item), str(item)) for item in type_)
    if type_ == "array" and isinstance(schema.get("items"), dict) and depth < 2:
        return f"a list of items, each {value_words(schema['items'], depth + 1)}"
    if type_ == "object" and isinstance(schema.get("properties"), dict) and depth < 2:
        required = set(schema.get("required") or ())
        fields = [f"{key}{'' if key in required else ' (optional)'}" for key in schema["properties"]]
        return "an object with " + ", ".join(fields)
    if isinstance(type_, str):
        return _TYPES.get(type_, type_)
    for combinator in ("anyOf", "oneOf"):
        if isinstance(schema.get(combinator), list) and depth < 2:
            return " or ".join(value_words(option, depth + 1) for option in schema[combinator])
    return "any value"


def _bounds(schema: dict[str, Any]) -> list[str]:
    words = {
        "minimum": "at least {}",
        "maximum": "at most {}",
        "exclusiveMinimum": "more than {}",
        "exclusiveMaximum": "less than {}",
        "minLength": "at least {} characters",
        "maxLength": "at most {} characters",
        "minItems": "at least {} items",
        "maxItems": "at most {} items",
        "pattern": "matching {}",
        "format": "{} format",
    }
    return [template.format(schema[key]) for key, template in words.items() if key in schema]


def _returns(schema: Any) -> str | None:
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    return (
        "; ".join(
            f"{key}, {_type_words(value, 1) if isinstance(value, dict) else 'a value'}"
            for key, value in schema["properties"].items()
        )
        or None
    )


def _short(text: str, limit: int = MAX_DESCRIPTION) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
