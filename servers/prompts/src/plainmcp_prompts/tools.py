"""The library as tools, for clients that only use tools: ``list_prompts`` and ``render_prompt``.

They serve exactly what ``prompts/list`` and ``prompts/get`` serve; failures (an unknown prompt, a
missing or not-allowed argument) are ``isError`` results that say what to change.
"""

from __future__ import annotations

from typing import Any

from plainmcp import Context, MCPError, Server, ToolAnnotations, ToolError, ToolResult, content

from . import rendering
from .catalog import Catalog
from .frontmatter import quote

_ARGUMENT_LISTING = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "title": {"type": "string"},
        "description": {"type": "string"},
        "required": {"type": "boolean"},
        "default": {"type": "string"},
        "values": {"type": "array", "items": {"type": "string"}},
        "type": {"enum": ["integer", "number", "boolean"]},
        "pattern": {"type": "string"},
        "minimum": {"type": "number"},
        "maximum": {"type": "number"},
    },
    "required": ["name", "required"],
}

LIST_OUTPUT = {
    "type": "object",
    "properties": {
        "prompts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "title": {"type": "string"},
                    "description": {"type": "string"},
                    "arguments": {"type": "array", "items": _ARGUMENT_LISTING},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "format": {"enum": ["plainmcp", "claude-code", "vscode", "dotprompt", "skill"]},
                },
                "required": ["name", "description", "arguments", "tags", "format"],
            },
        }
    },
    "required": ["prompts"],
}

RENDER_OUTPUT = {
    "type": "object",
    "properties": {
        "description": {"type": "string"},
        "messages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"role": {"enum": ["user", "assistant"]}, "content": {"type": "object"}},
                "required": ["role", "content"],
            },
        },
    },
    "required": ["description", "messages"],
}

LIST_INPUT = {
    "type": "object",
    "properties": {
        "tag": {"type": "string", "description": "Only prompts with this tag"},
        "query": {
            "type": "string",
            "description": "Text in the name, title or description (any case)",
        },
    },
    "additionalProperties": False,
}

RENDER_INPUT = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "A name from list_prompts"},
        "arguments": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "Values by argument name, as strings",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}

# What a model reads on every turn (issue 21: at most 110 tokens per tool with the input schema):
# when to call, what comes back, what not to do.
LIST_DESCRIPTION = (
    "List the library's prompts: arguments (required, allowed values, type, pattern, default), tags. "
    "Read-only; call before render_prompt."
)
RENDER_DESCRIPTION = (
    "Render a prompt into its messages (Markdown and data). Use only a name and arguments "
    "from list_prompts; never guess."
)
LIST_ANNOTATIONS = ToolAnnotations(title="List prompts", read_only=True, idempotent=True, open_world=False)
RENDER_ANNOTATIONS = ToolAnnotations(title="Render a prompt", read_only=True, idempotent=True, open_world=False)


class LibraryTools:
    """The tools over ``catalog``: what it serves now, as ``prompts/list`` and ``prompts/get`` do."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    async def list_prompts(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """``list_prompts``: the prompts served now, filtered by ``tag`` and ``query``."""
        tag, query = args.get("tag"), (args.get("query") or "").casefold()
        listing = [
            spec.to_listing()
            for spec in self.catalog.specs.values()
            if (tag is None or tag in spec.tags)
            and (
                not query or any(query in (text or "").casefold() for text in (spec.name, spec.title, spec.description))
            )
        ]
        lines = [f"{len(listing)} prompt{'s' if len(listing) != 1 else ''}:"] + [_describe(entry) for entry in listing]
        return ToolResult(content=[content.text("\n".join(lines))], structured={"prompts": listing})

    async def render_prompt(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """``render_prompt``: what ``prompts/get`` gives, as text and as data; refusals as tool errors."""
        spec = self.catalog.lookup(args["name"])
        if spec is None:
            raise ToolError(f"No prompt named {quote(args['name'])}. Call list_prompts to see the names.")
        try:
            result = await rendering.render_prompt(
                self.catalog.library, self.catalog.history, spec, args.get("arguments")
            )
        except MCPError as error:
            raise ToolError(error.message) from None
        return ToolResult(content=[content.text(as_text(result["messages"]))], structured=result)


def register(server: Server, tools: LibraryTools) -> None:
    """Register the tools of ``tools`` on ``server``."""
    server.tool(
        description=LIST_DESCRIPTION, input_schema=LIST_INPUT, output_schema=LIST_OUTPUT, annotations=LIST_ANNOTATIONS
    )(tools.list_prompts)
    server.tool(
        description=RENDER_DESCRIPTION,
        input_schema=RENDER_INPUT,
        output_schema=RENDER_OUTPUT,
        annotations=RENDER_ANNOTATIONS,
    )(tools.render_prompt)


def _describe(entry: dict[str, Any]) -> str:
    arguments = ", ".join(argument["name"] + ("" if argument["required"] else "?") for argument in entry["arguments"])
    return f"- {entry['name']}({arguments}): {entry['description']}"


def as_text(messages: list[dict[str, Any]]) -> str:
    """Rendered messages as Markdown, one ``## User`` / ``## Assistant`` section per turn; an
    embedded file as a fenced block under its URI."""
    parts: list[str] = []
    previous = None
    for message in messages:
        if message["role"] != previous:
            parts.append(f"## {message['role'].capitalize()}")
            previous = message["role"]
        block = message["content"]
        if block["type"] == "text":
            parts.append(block["text"])
        else:
            resource = block["resource"]
            if "blob" in resource:  # bytes have no Markdown form: named here, whole in structuredContent
                parts.append(f"{resource['uri']}: a {resource.get('mimeType', 'binary')} file (in structuredContent)")
            else:
                parts.append(f"{resource['uri']}:\n\n````\n{resource.get('text', '')}\n````")
    return "\n\n".join(parts)
