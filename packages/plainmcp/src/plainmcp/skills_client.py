"""A host's side of the skills extension (SEP-2640) over a connected :class:`~plainmcp.Client`.

:class:`SkillsClient` lists a server's skills without reading any of their files (lazy retrieval:
a ``SKILL.md`` is read when the skill is loaded, a supporting file when it is read), loads one
(its ``SKILL.md`` checked against the entry: size, digest, then the front matter field by field),
and reads the loaded skill's other files, each checked the same way and only if the entry lists it.
Content that does not match is refused with :class:`~plainmcp.skills.VerificationError` and never
returned. A digest match proves consistency with the entry, not trust: the content is still the
server's, untrusted input for a model.
"""

from __future__ import annotations

import base64
import binascii
import logging
import posixpath
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .skills import (
    DIRECTORY_READ,
    EXTENSION,
    MAX_TOTAL_BYTES,
    SKILL_FILE,
    SKILLS_GET,
    SKILLS_LIST,
    SkillEntry,
    SkillError,
    SkillFile,
    VerificationError,
    check_entry,
    check_limits,
    parse_frontmatter,
    same_frontmatter,
    verify,
)

if TYPE_CHECKING:
    from .client import Client

logger = logging.getLogger(__name__)

#: Pages followed by one listing (``skills/list``, a directory) before it is cut short.
MAX_PAGES = 100


@dataclass(slots=True)
class LoadedSkill:
    """A skill whose ``SKILL.md`` was read and verified: ``text`` is that file, ``entry`` the entry it
    was verified against (held while the host acts on the skill: only the files it lists are read)."""

    entry: SkillEntry
    text: str
    #: Bytes read for the skill so far (a dynamic skill is cut off at the extension's total limit).
    read_bytes: int = 0
    files: dict[str, bytes] = field(default_factory=dict)


class SkillsClient:
    """The skills extension through ``client`` (connected: its server capabilities are known)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        #: Why entries of the last :meth:`list_skills` were left out (each "uri: reason").
        self.rejected: list[str] = []

    @property
    def settings(self) -> dict[str, Any] | None:
        """The server's settings for the extension, or None when it does not declare it."""
        declared = (self.client.server_capabilities.get("extensions") or {}).get(EXTENSION)
        return declared if isinstance(declared, dict) else None

    @property
    def supported(self) -> bool:
        return self.settings is not None

    def _require(self) -> None:
        if not self.supported:
            raise SkillError(f"the server does not declare the {EXTENSION} extension")

    async def list_skills(self) -> list[SkillEntry]:
        """Every skill the server lists (all pages, at most MAX_PAGES), reading none of their files.
        An entry that breaks the rules is left out (it must not be loaded), its reason logged and
        kept in :attr:`rejected`. Raises SkillError when the server lacks the extension, MCPError
        for an error answer."""
        self._require()
        entries: list[SkillEntry] = []
        self.rejected = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = await self.client.request(SKILLS_LIST, {"cursor": cursor} if cursor else {})
            for item in result.get("skills") or []:
                try:
                    entries.append(check_entry(item))
                except SkillError as error:
                    self.rejected.append(str(error))
                    logger.warning("skill entry left out: %s", error)
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                return entries
            seen.add(cursor)
        logger.warning("skills/list still had pages after %d; the rest is not listed", MAX_PAGES)
        return entries

    async def get_skill(self, uri: str) -> SkillEntry:
        """The entry of the skill whose ``SKILL.md`` is ``uri`` (listed or not). Raises SkillError
        for an entry that breaks the rules or names another skill, MCPError for an error answer
        (-32602: the server serves no such skill)."""
        self._require()
        result = await self.client.request(SKILLS_GET, {"uri": uri})
        entry = check_entry(result.get("skill"))
        if entry.uri != uri:
            raise SkillError(f"skills/get for {uri} answered the entry of {entry.uri}")
        return entry

    async def load(self, entry: SkillEntry) -> LoadedSkill:
        """Read the skill's ``SKILL.md`` and verify it: within the extension's limits, exactly the
        size and digest the entry lists (unless the skill is dynamic), and front matter identical to
        the entry's. Raises VerificationError (the content is not returned), SkillError, MCPError."""
        check_limits(entry)
        data = await self._read(entry.uri)
        listed = entry.file(entry.uri)
        if listed is not None:
            verify(listed, data)
        elif len(data) > MAX_TOTAL_BYTES:
            raise VerificationError(f"{entry.uri}: larger than the {MAX_TOTAL_BYTES} bytes a skill may hold")
        try:
            text = data.decode("utf-8")
            frontmatter = parse_frontmatter(text)
        except UnicodeDecodeError:
            raise VerificationError(f"{entry.uri}: {SKILL_FILE} is not UTF-8 text") from None
        except SkillError as error:
            raise VerificationError(f"{entry.uri}: {error}") from None
        differing = same_frontmatter(frontmatter, entry.frontmatter)
        if differing:
            raise VerificationError(f"{entry.uri}: the front matter differs from the entry's in {', '.join(differing)}")
        return LoadedSkill(entry, text, read_bytes=len(data))

    def resolve(self, skill: LoadedSkill, reference: str) -> str:
        """The URI of ``reference`` (a path relative to the skill's root, as ``SKILL.md`` writes
        them, or a full URI). Raises SkillError for one that leaves the skill."""
        if "://" in reference:
            uri = reference
            if any(part in (".", "..") for part in reference.partition("://")[2].split("/")):
                raise SkillError(f"{reference!r} is not a plain path within the skill")
        else:
            path = posixpath.normpath(urllib.parse.quote(reference, safe="/"))
            if path.startswith(("..", "/")) or path == ".":
                raise SkillError(f"{reference!r} is outside the skill")
            uri = f"{skill.entry.root}/{path}"
        if not uri.startswith(skill.entry.root + "/"):
            raise SkillError(f"{reference!r} is outside the skill {skill.entry.uri}")
        return uri

    async def read_file(self, skill: LoadedSkill, reference: str) -> bytes:
        """A file of the loaded skill (see :meth:`resolve`), verified against the held entry; a file
        the entry does not list is refused (VerificationError) without being read. For a dynamic
        skill, reading stops at the extension's total size. Raises SkillError, MCPError."""
        uri = self.resolve(skill, reference)
        cached = skill.files.get(uri)
        if cached is not None:
            return cached
        listed: SkillFile | None = skill.entry.file(uri)
        if skill.entry.files is not None and listed is None:
            raise VerificationError(f"{uri} is not a file of the skill's entry (refresh it with skills/get)")
        data = await self._read(uri)
        if listed is not None:
            verify(listed, data)
        elif skill.read_bytes + len(data) > MAX_TOTAL_BYTES:
            raise VerificationError(f"{uri}: the dynamic skill would exceed {MAX_TOTAL_BYTES} bytes")
        skill.read_bytes += len(data)
        skill.files[uri] = data
        return data

    async def read_directory(self, uri: str) -> list[dict[str, Any]]:
        """The direct children of the directory resource ``uri`` (every page, at most MAX_PAGES), for
        a server that declares ``directoryRead``. A live view: it never widens a held entry."""
        settings = self.settings
        if not settings or settings.get("directoryRead") is not True:
            raise SkillError(f"the server does not offer {DIRECTORY_READ}")
        children: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            params: dict[str, Any] = {"uri": uri}
            if cursor:
                params["cursor"] = cursor
            result = await self.client.request(DIRECTORY_READ, params)
            children.extend(item for item in result.get("resources") or [] if isinstance(item, dict))
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        return children

    async def _read(self, uri: str) -> bytes:
        """The raw bytes of resource ``uri``: its text as UTF-8, or its blob decoded."""
        result = await self.client.read_resource(uri)
        for content in result.get("contents") or []:
            if not isinstance(content, dict) or content.get("uri", uri) != uri:
                continue
            if isinstance(content.get("text"), str):
                return str(content["text"]).encode("utf-8")
            if isinstance(content.get("blob"), str):
                try:
                    return base64.b64decode(content["blob"], validate=True)
                except (binascii.Error, ValueError):
                    raise VerificationError(f"{uri}: the blob is not base64") from None
        raise SkillError(f"resources/read of {uri} returned no content for it")
