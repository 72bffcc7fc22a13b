"""A notes server in one screen: the smallest complete plainmcp server worth reading.

It keeps notes in memory and shows each kind of feature once: tools with validated input and an
output schema, resources and a template, subscriptions, a prompt with completion, and logging.
Run it with ``python -m plainmcp.examples.notes`` (stdio).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from plainmcp import (
    Context,
    ErrorCode,
    MCPError,
    PromptArgument,
    Server,
    ToolAnnotations,
    ToolError,
    content,
    run_stdio,
)

logger = logging.getLogger(__name__)

# The tools' schemas: module constants, compiled once by the core.
ADD_NOTE_INPUT = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "pattern": "^[a-z0-9-]{1,40}$", "description": "lowercase, digits, -"},
        "text": {"type": "string", "minLength": 1, "maxLength": 10000},
    },
    "required": ["title", "text"],
    "additionalProperties": False,
}
ADD_NOTE_OUTPUT = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "created": {"type": "boolean"}},
    "required": ["title", "created"],
}
SEARCH_NOTES_INPUT = {
    "type": "object",
    "properties": {"word": {"type": "string", "minLength": 1}},
    "required": ["word"],
}


def build_server() -> Server:
    notes: dict[str, str] = {"welcome": "plainmcp notes: add one with the add_note tool."}
    server = Server(
        "plainmcp-notes-example",
        "0.1.0",
        title="Notes (example)",
        instructions="Notes live in memory. Use add_note to write one and read note://{title} to read it.",
        resource_subscriptions=True,
    )

    async def complete_title(ctx: Context, value: str, others: dict[str, str]) -> list[str]:
        return sorted(title for title in notes if title.startswith(value))

    @server.tool(
        input_schema=ADD_NOTE_INPUT,
        output_schema=ADD_NOTE_OUTPUT,
        annotations=ToolAnnotations(idempotent=True, destructive=True, open_world=False),
    )
    async def add_note(ctx: Context, args: dict[str, Any]) -> dict[str, Any]:
        """Write a note (replacing one with the same title)."""
        title = args["title"]
        created = title not in notes
        notes[title] = args["text"]
        await ctx.info(f"note {title!r} {'created' if created else 'replaced'}", logger="notes")
        await ctx.notify_resource_updated(f"note://{title}")
        if created:
            await ctx.notify_resources_changed()
        return {"title": title, "created": created}

    @server.tool(input_schema=SEARCH_NOTES_INPUT, annotations=ToolAnnotations(read_only=True, open_world=False))
    async def search_notes(ctx: Context, args: dict[str, Any]) -> list[str]:
        """Titles of the notes that contain a word (case-insensitive)."""
        word = args["word"].casefold()
        found = sorted(title for title, text in notes.items() if word in text.casefold())
        if not found:
            raise ToolError(f"No note contains {args['word']!r}. Try a shorter word.")
        return found

    @server.resource_template(
        "note://{title}",
        "note",
        mime_type="text/plain",
        complete={"title": complete_title},
    )
    async def read_note(ctx: Context, uri: str, variables: dict[str, str]) -> str | None:
        """One note by title."""
        return notes.get(variables["title"])  # None: not found

    @server.resource("notes://index", "index", mime_type="text/plain")
    async def index(ctx: Context, uri: str) -> str:
        """Every note title, one a line."""
        return "\n".join(sorted(notes))

    @server.prompt(arguments=[PromptArgument("title", "The note to summarize", required=True, complete=complete_title)])
    async def summarize(ctx: Context, args: dict[str, str]) -> list[dict[str, Any]]:
        """Ask for a summary of one note."""
        text = notes.get(args["title"])
        if text is None:
            raise MCPError(ErrorCode.INVALID_PARAMS, f"No note titled {args['title']!r}")
        return [
            content.user(
                content.embedded_resource(content.text_contents(f"note://{args['title']}", text, "text/plain"))
            ),
            content.user("Summarize this note in one sentence."),
        ]

    return server


def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)  # stdout belongs to the stdio transport
    run_stdio(build_server())


if __name__ == "__main__":
    main()
