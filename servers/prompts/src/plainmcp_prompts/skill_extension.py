"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640): the library's skills as
entries a host can list, approve and verify, and their folders as directory resources.

Declared with ``directoryRead: true``, it adds three methods beside the prompts and the
``skill://`` resources (which stay as they are, for clients that do not use the extension):

- ``skills/list`` (paginated) and ``skills/get``: each skill's entry, ``{uri, frontmatter,
  resources}``: ``uri`` is ``skill://<name>/SKILL.md``, ``frontmatter`` the ``SKILL.md`` front matter
  as JSON, ``resources`` every file of the skill (``SKILL.md`` first) with the SHA-256 digest and
  size of the bytes ``resources/read`` serves. Both results are cacheable (``ttlMs``, ``cacheScope``
  in 2026-07-28).
- ``resources/directory/read``: the direct children of ``skill://<name>`` or of a folder below it
  (folders as ``inode/directory``), paginated; anything else is -32602.

Only a skill the extension's rules allow is an entry: front matter with a ``name`` that follows the
Agent Skills rule and a ``description``, aliases-free and within :mod:`plainmcp.skills`' bounds;
every file servable (a regular file of at most ``MAX_SKILL_FILE_BYTES``, inside the library), and
the skill within the extension's limits (512 files, 16 MiB). Any other skill is still a prompt and
its resources; here it is left out of the listing with one warning in the log, and ``skills/get``
answers -32602 saying why. Digests are computed when a page is asked for, in a worker thread, and
remembered per file version (device, inode, size, modification time).
"""

from __future__ import annotations

import logging
import os
import posixpath
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import anyio
from plainmcp import Context, ErrorCode, MCPError, Server, pagination
from plainmcp import skills as rules

from . import beneath, template
from .frontmatter import FormatError, quote
from .model import PromptSpec
from .resources import MAX_SKILL_FILE_BYTES, SKILL_PREFIX, guess_mime_type, skill_uri
from .skills import FILENAME

logger = logging.getLogger(__name__)

#: Entries per ``skills/list`` page (each may mean hashing a skill's files the first time).
PAGE_SIZE = 50
#: File digests remembered; past it the memory starts afresh.
MAX_REMEMBERED = 20_000


@dataclass(frozen=True, slots=True)
class _Digested:
    version: tuple[int, int, int, int]
    digest: str
    size: int


class SkillsExtension:
    """The extension over the skills ``specs()`` gives (the catalog's, as served now)."""

    def __init__(self, specs: Callable[[], dict[str, PromptSpec]], page_size: int = PAGE_SIZE) -> None:
        self.specs = specs
        self.page_size = page_size
        self._digests: dict[tuple[str, str], _Digested] = {}
        self._frontmatter: dict[str, tuple[str, dict[str, Any] | rules.SkillError]] = {}
        self._reported: set[tuple[str, str]] = set()

    def register(self, server: Server) -> None:
        server.declare_extension(rules.EXTENSION, {"directoryRead": True})
        server.add_method(rules.SKILLS_LIST, self.skills_list, cacheable=True)
        server.add_method(rules.SKILLS_GET, self.skills_get, cacheable=True)
        server.add_method(rules.DIRECTORY_READ, self.directory_read)

    # ------------------------------------------------------------------------------------ methods

    async def skills_list(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        # In a worker thread: the first listing parses every skill's front matter and hashes files.
        return await anyio.to_thread.run_sync(self._page, params.get("cursor"))

    def _page(self, cursor: Any) -> dict[str, Any]:
        """One ``skills/list`` page; an entry is whole on its page. Raises MCPError(-32602) for a bad cursor."""
        candidates = [spec for spec in self._skills() if not isinstance(self._frontmatter_of(spec), rules.SkillError)]
        page, next_cursor = pagination.paginate("skills", candidates, cursor, self.page_size)
        entries = self._entries(list(page))
        result: dict[str, Any] = {"skills": [entry.to_json() for entry in entries if entry is not None]}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    async def skills_get(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise MCPError(ErrorCode.INVALID_PARAMS, "Invalid params: uri must be a string")
        spec = self._skill_at(uri)
        if spec is None:
            raise MCPError(ErrorCode.INVALID_PARAMS, f"No skill is served at {uri}")
        try:
            entry = await anyio.to_thread.run_sync(self.entry, spec)
        except rules.SkillError as error:
            raise MCPError(
                ErrorCode.INVALID_PARAMS, f"{uri} is not served through the skills extension: {error}"
            ) from None
        return {"skill": entry.to_json()}

    async def directory_read(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise MCPError(ErrorCode.INVALID_PARAMS, "Invalid params: uri must be a string")
        children = self._children(uri)
        page, next_cursor = pagination.paginate("skill-directory", children, params.get("cursor"), self.page_size)
        result: dict[str, Any] = {"resources": list(page)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    # ------------------------------------------------------------------------------------ entries

    def entry(self, spec: PromptSpec) -> rules.SkillEntry:
        """The entry of the skill ``spec`` (reads its files: call it in a worker thread). Raises
        SkillError saying why the skill cannot be an entry."""
        frontmatter = self._frontmatter_of(spec)
        if isinstance(frontmatter, rules.SkillError):
            raise frontmatter
        if spec.files_cut:
            raise rules.SkillError("it has more files than the server serves for one skill")
        if len(spec.files) + 1 > rules.MAX_RESOURCES:
            raise rules.SkillError(f"it has more than {rules.MAX_RESOURCES} files")
        source = spec.source.encode("utf-8")
        files = [rules.SkillFile(skill_uri(spec.name, FILENAME), rules.digest(source), len(source))]
        total = len(source)
        for path in spec.files:
            digested = self._digest(spec, path)
            total += digested.size
            if total > rules.MAX_TOTAL_BYTES:
                raise rules.SkillError(f"its files hold more than {rules.MAX_TOTAL_BYTES // (1024 * 1024)} MiB")
            files.append(rules.SkillFile(skill_uri(spec.name, path), digested.digest, digested.size))
        return rules.SkillEntry(files[0].uri, frontmatter, tuple(files))

    def _entries(self, specs: list[PromptSpec]) -> list[rules.SkillEntry | None]:
        """The entries of ``specs``; None for each that cannot be one (reported once per reason)."""
        entries: list[rules.SkillEntry | None] = []
        for spec in specs:
            try:
                entries.append(self.entry(spec))
            except rules.SkillError as error:
                self._report(spec, error)
                entries.append(None)
        return entries

    def _skills(self) -> Iterable[PromptSpec]:
        return (spec for spec in self.specs().values() if spec.format == "skill")

    def _skill_at(self, uri: str) -> PromptSpec | None:
        """The skill whose ``SKILL.md`` is exactly ``uri``, if one is served."""
        name = rules.skill_name(uri)
        spec = self.specs().get(name) if name is not None else None
        if spec is None or spec.format != "skill" or uri != skill_uri(spec.name, FILENAME):
            return None
        return spec

    def _frontmatter_of(self, spec: PromptSpec) -> dict[str, Any] | rules.SkillError:
        """The front matter of ``spec`` as JSON, or the error that keeps it out (logged once);
        remembered per source text."""
        known = self._frontmatter.get(spec.name)
        if known is not None and known[0] == spec.source:
            return known[1]
        value: dict[str, Any] | rules.SkillError
        try:
            parsed = rules.parse_frontmatter(spec.source)
            rules.check_frontmatter(parsed, skill_uri(spec.name, FILENAME))
            value = parsed
        except rules.SkillError as error:
            value = error
            self._report(spec, error)
        self._frontmatter[spec.name] = (spec.source, value)
        return value

    def _report(self, spec: PromptSpec, error: rules.SkillError) -> None:
        key = (spec.name, str(error))
        if key not in self._reported:
            self._reported.add(key)
            logger.warning("skill %r (%s) is left out of the skills extension: %s", spec.name, spec.path, error)

    def _digest(self, spec: PromptSpec, path: str) -> _Digested:
        """Digest and size of the skill file ``path``, read through directory descriptors as
        ``resources/read`` reads it; remembered per file version. Raises SkillError."""
        folder = spec.path.rpartition("/")[0]
        try:
            with template.open_embedded(spec.root, folder, path) as (fd, _):
                status = os.fstat(fd)
                version = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
                key = (spec.root, f"{folder}/{path}")
                known = self._digests.get(key)
                if known is not None and known.version == version:
                    return known
                if status.st_size > MAX_SKILL_FILE_BYTES:
                    raise rules.SkillError(f"file {quote(path)} is larger than {MAX_SKILL_FILE_BYTES // 1024} KiB")
                data = beneath.read_regular(fd, MAX_SKILL_FILE_BYTES + 1)
        except FormatError as error:
            raise rules.SkillError(error.message.replace("embedded file", "file", 1)) from None
        except OSError:
            data = None
        if data is None:
            raise rules.SkillError(f"file {quote(path)} is not a readable regular file")
        if len(data) > MAX_SKILL_FILE_BYTES:
            raise rules.SkillError(f"file {quote(path)} is larger than {MAX_SKILL_FILE_BYTES // 1024} KiB")
        if len(self._digests) >= MAX_REMEMBERED:
            self._digests.clear()
        digested = _Digested(version, rules.digest(data), len(data))
        self._digests[key] = digested
        return digested

    # -------------------------------------------------------------------------------- directories

    def _children(self, uri: str) -> list[dict[str, Any]]:
        """The direct children of the directory resource ``uri``. Raises MCPError(-32602) for a URI
        that is not a skill's folder or a folder below it."""
        name, _, quoted = uri.removeprefix(SKILL_PREFIX).partition("/")
        spec = self.specs().get(name) if uri.startswith(SKILL_PREFIX) else None
        if spec is None or spec.format != "skill":
            raise MCPError(ErrorCode.INVALID_PARAMS, f"No directory resource is served at {uri}")
        folder = urllib.parse.unquote(quoted)
        paths = (FILENAME, *spec.files)
        folders = {parent for path in paths for parent in _parents(path)}
        if folder and folder not in folders:
            what = "is not a directory resource" if folder in paths else "does not exist"
            raise MCPError(ErrorCode.INVALID_PARAMS, f"{uri} {what}")
        prefix = f"{folder}/" if folder else ""
        children: list[dict[str, Any]] = []
        for sub in sorted(f for f in folders if f and posixpath.dirname(f) == folder):
            children.append(
                {
                    "uri": skill_uri(spec.name, sub),
                    "name": posixpath.basename(sub),
                    "mimeType": rules.DIRECTORY_MIME_TYPE,
                }
            )
        for path in paths:
            if path.startswith(prefix) and "/" not in path[len(prefix) :]:
                child: dict[str, Any] = {"uri": skill_uri(spec.name, path), "name": posixpath.basename(path)}
                mime_type = guess_mime_type(path)
                if mime_type is not None:
                    child["mimeType"] = mime_type
                children.append(child)
        return children


def _parents(path: str) -> list[str]:
    """Every folder above ``path`` ("" for the skill's own)."""
    parts = path.split("/")[:-1]
    return ["", *("/".join(parts[: index + 1]) for index in range(len(parts)))]
