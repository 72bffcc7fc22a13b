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


class Sources:
    """The reader of every source resource. ``lookup(name)`` gives the spec served now, so a read
    after a reload returns the new text (and a prompt gone since is "not found")."""

    def __init__(self, lookup: Callable[[str], PromptSpec | None]) -> None:
        self.lookup = lookup

    def resource(self, spec: PromptSpec) -> Resource:
        """The resource for ``spec``'s source."""
        return Resource(
            source_uri(spec.name),
            spec.name,
            self.read,
            title=f"{spec.title or spec.name} (source)",
            description=f"The source of prompt {spec.name!r}: {spec.format} file {spec.path}",
            mime_type="text/markdown",
        )

    async def read(self, ctx: Context, uri: str) -> str | None:
        """The source text of the prompt ``uri`` names, or None (not found) once it is gone."""
        current = self.lookup(uri.removeprefix(SOURCE_PREFIX))
        return current.source if current is not None else None
