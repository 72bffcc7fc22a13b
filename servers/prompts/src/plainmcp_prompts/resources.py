"""Resources: each prompt's source file (``prompts://source/<name>``, the file's text as read), and
each skill's files (``skill://<name>/<path>``).

Descriptions name a file by its path below its library directory, never by a host path.
"""

from __future__ import annotations

import mimetypes
import urllib.parse
from collections.abc import Callable

import anyio
from plainmcp import Context, ErrorCode, MCPError, Resource

from . import beneath, template
from .frontmatter import FormatError, quote
from .model import PromptSpec
from .skills import FILENAME

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


# ------------------------------------------------------------------------------------------ skills

SKILL_PREFIX = "skill://"
#: Largest skill file served (bytes); a binary one travels base64-encoded, a third larger.
MAX_SKILL_FILE_BYTES = 1024 * 1024


def skill_uri(name: str, path: str) -> str:
    """``skill://<skill>/<path below its folder>``, the path percent-encoded but for its slashes."""
    return f"{SKILL_PREFIX}{name}/{urllib.parse.quote(path, safe='/')}"


class SkillFiles:
    """The reader of every skill resource: ``skill://<name>/SKILL.md`` (the text served as the
    prompt) and ``skill://<name>/<path>`` for each other file of the skill's folder. A file is read
    when a client reads it, through directory descriptors from the library directory (``beneath``,
    via :func:`template.open_embedded`: a link leading out, or to a hidden file, is refused however
    it appeared); only the files listed at the last scan are served."""

    def __init__(self, lookup: Callable[[str], PromptSpec | None]) -> None:
        self.lookup = lookup

    def resources(self, spec: PromptSpec) -> list[Resource]:
        """The resources of ``spec`` if it is a skill (none otherwise)."""
        if spec.format != "skill":
            return []
        listed = [
            Resource(
                skill_uri(spec.name, FILENAME),
                # The skills extension: a SKILL.md resource is named and described by its front matter.
                spec.name,
                self.read,
                title=f"{spec.name} skill",
                description=spec.description,
                mime_type="text/markdown",
            )
        ]
        for path in spec.files:
            listed.append(
                Resource(
                    skill_uri(spec.name, path),
                    f"{spec.name}/{path}",
                    self.read,
                    description=f"A file of skill {spec.name!r}",
                    mime_type=guess_mime_type(path),
                )
            )
        return listed

    async def read(self, ctx: Context, uri: str) -> str | bytes | None:
        """The file ``uri`` names as it is now: text when it is UTF-8, else bytes; None (not found)
        for a skill or file not served. Raises MCPError(-32603) naming the file as written (never a
        host path) when a listed file cannot be read any more."""
        name, _, quoted = uri.removeprefix(SKILL_PREFIX).partition("/")
        spec = self.lookup(name)
        path = urllib.parse.unquote(quoted)
        if spec is None or spec.format != "skill":
            return None
        if path == FILENAME:
            return spec.source
        if path not in spec.files:
            return None
        try:
            data = await anyio.to_thread.run_sync(_read_file, spec, path)
        except FormatError as error:
            # The checks are the embeds' (template.open_embedded), whose messages say "embedded file".
            message = error.message.replace("embedded file", "file", 1)
            raise MCPError(ErrorCode.INTERNAL_ERROR, f"Skill {name!r}: {message}") from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data


def _read_file(spec: PromptSpec, path: str) -> bytes:
    with template.open_embedded(spec.root, spec.path.rpartition("/")[0], path) as (fd, _):
        try:
            data = beneath.read_regular(fd, MAX_SKILL_FILE_BYTES + 1)
        except OSError:
            data = None
    if data is None:
        raise FormatError(f"file {quote(path)} does not exist or is not a readable regular file")
    if len(data) > MAX_SKILL_FILE_BYTES:
        raise FormatError(f"file {quote(path)} is larger than {MAX_SKILL_FILE_BYTES // 1024} KiB")
    return data


def guess_mime_type(path: str) -> str | None:
    if path.endswith((".md", ".markdown")):
        return "text/markdown"
    guessed, _ = mimetypes.guess_type(path)
    return guessed
