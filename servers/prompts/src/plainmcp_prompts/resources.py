"""Each prompt's source file as a resource: ``prompts://source/<name>``, the file's text as read.

The description names the file by its path below its library directory, never by a host path.
"""

from __future__ import annotations

from collections.abc import Callable

from plainmcp import Context, Resource

from .model import PromptSpec

SOURCE_PREFIX = "prompts://source/"


def source_uri(name: str) -> str:
    return SOURCE_PREFIX + name


def source_resource(spec: PromptSpec, lookup: Callable[[str], PromptSpec | None]) -> Resource:
    """The resource for ``spec``'s source. ``lookup(name)`` gives the spec served now, so a read
    after a reload returns the new text (and a prompt gone since is "not found")."""

    async def read(ctx: Context, uri: str) -> str | None:
        current = lookup(spec.name)
        return current.source if current is not None else None

    return Resource(
        source_uri(spec.name),
        spec.name,
        read,
        title=f"{spec.title or spec.name} (source)",
        description=f"The source of prompt {spec.name!r}: {spec.format} file {spec.path}",
        mime_type="text/markdown",
    )
