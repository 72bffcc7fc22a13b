"""Benchmark peer: the bundled prompt library of plainmcp-prompts served by the official SDK's
low-level ``Server`` (mcp 2.x), written the way an SDK user would: front matter with PyYAML,
``{{name}}`` substituted with a regex, ``## User`` / ``## Assistant`` lines split with a regex.

It does less than plainmcp-prompts (no allowed-value checks, no embeds, no completion, no
watching), which favours the peer. The library is read once at start.
"""

import re
import sys
from pathlib import Path

import anyio
import mcp.types as types
import yaml
from mcp.server import Server
from mcp.server.stdio import stdio_server

LIBRARY = Path(sys.argv[1])
ROLE = re.compile(r"^#{1,6}\s*(User|Assistant)\s*:?\s*$", re.MULTILINE | re.IGNORECASE)
SLOT = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}")


def load(path: Path) -> tuple[types.Prompt, dict, str]:
    text = path.read_text(encoding="utf-8")
    meta, body = {}, text
    if text.startswith("---\n"):
        head, _, body = text[4:].partition("\n---\n")
        meta = yaml.safe_load(head) or {}
    arguments = [a if isinstance(a, dict) else {"name": a} for a in meta.get("arguments") or []]
    prompt = types.Prompt(
        name=meta.get("name", path.stem),
        title=meta.get("title"),
        description=meta.get("description"),
        arguments=[
            types.PromptArgument(name=a["name"], description=a.get("description"), required=a.get("required", False))
            for a in arguments
        ],
    )
    return prompt, {a["name"]: a.get("default", "") for a in arguments}, body


PROMPTS = {prompt.name: (prompt, defaults, body) for prompt, defaults, body in map(load, sorted(LIBRARY.glob("*.md")))}


async def list_prompts(ctx, params):
    return types.ListPromptsResult(prompts=[entry[0] for entry in PROMPTS.values()])


async def get_prompt(ctx, params):
    prompt, defaults, body = PROMPTS[params.name]
    values = {**defaults, **(params.arguments or {})}
    missing = [a.name for a in prompt.arguments or [] if a.required and not values.get(a.name)]
    if missing:
        raise ValueError(f"Missing required arguments: {', '.join(missing)}")
    text = SLOT.sub(lambda m: str(values.get(m.group(1), "")), body)
    parts = ROLE.split(text)
    turns = [("user", parts[0])] + [(parts[i].lower(), parts[i + 1]) for i in range(1, len(parts), 2)]
    messages = [
        types.PromptMessage(role=role, content=types.TextContent(text=chunk.strip("\n")))
        for role, chunk in turns
        if chunk.strip()
    ]
    return types.GetPromptResult(description=prompt.description, messages=messages)


server = Server("bench-prompts", version="1.0.0", on_list_prompts=list_prompts, on_get_prompt=get_prompt)


async def main():
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
