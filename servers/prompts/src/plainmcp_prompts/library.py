"""The library: every prompt file of several directories, merged by name, kept current by rescans.

- Directories are read in order; a prompt of a later directory replaces one of the same name from an
  earlier one (so a user directory can override a bundled prompt). Inside one directory, two files
  with the same name are a mistake: the first in path order is served and the other is reported.
- Files are ``*.md`` below each directory (sub-folders included, at most ``max_depth`` deep; hidden
  files and folders, and symlinks leading out of the directory, are skipped).
- A file that does not parse is reported on stderr (file, line, problem) and skipped; if it parsed
  before in this process, its last valid version is served until it parses again.
- Bounds: ``max_files`` files per directory, ``max_file_bytes`` per file.

Nothing here is async or knows about MCP: :meth:`Library.scan` is a plain function of the files.
"""

from __future__ import annotations

import logging
import os
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

from . import template
from .formats import load_file_text
from .frontmatter import FormatError
from .model import Embed, PromptSpec

logger = logging.getLogger(__name__)

EMBED_URI_PREFIX = "prompts://file/"


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with a file, for the operator: ``file`` is its path on this host."""

    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class _Outcome:
    """What one version of one file gave: a spec, or the error; and the warnings."""

    spec: PromptSpec | None
    error: FormatError | None
    warnings: tuple[tuple[int | None, str], ...]


class Library:
    """Prompt files of ``dirs``, merged by name (later directories win)."""

    def __init__(
        self,
        dirs: Sequence[str | os.PathLike[str]],
        *,
        max_files: int = 2000,
        max_file_bytes: int = 256 * 1024,
        max_depth: int = 8,
    ) -> None:
        self.dirs = [os.path.abspath(os.fspath(directory)) for directory in dirs]
        self.max_files = max_files
        self.max_file_bytes = max_file_bytes
        self.max_depth = max_depth
        #: The prompts served, by name, in name order.
        self.prompts: dict[str, PromptSpec] = {}
        #: The text of every file the served prompts embed, by (root, path below it).
        self.embedded: dict[tuple[str, str], str] = {}
        #: The problems of the last scan.
        self.problems: list[Problem] = []
        self._cache: dict[str, tuple[tuple[int, int, int], _Outcome]] = {}
        self._last_valid: dict[str, PromptSpec] = {}

    # ------------------------------------------------------------------------------------ scanning

    def scan(self) -> bool:
        """Read the directories again. Returns whether what is served changed (a prompt added,
        removed or different, or a file one of them embeds). New problems are logged as warnings."""
        problems: list[Problem] = []
        merged: dict[str, PromptSpec] = {}
        seen: set[str] = set()
        embedded: dict[tuple[str, str], str] = {}
        for root in self.dirs:
            in_root: dict[str, PromptSpec] = {}
            for path in self._files(root, problems):
                seen.add(path)
                spec = self._load(root, path, problems, embedded)
                if spec is None:
                    continue
                first = in_root.get(spec.name)
                if first is not None:
                    problems.append(Problem(path, None, f"prompt name {spec.name!r} is already used by "
                                            f"{os.path.join(root, first.path)}; this file is ignored"))
                    continue
                in_root[spec.name] = spec
            merged.update(in_root)
        for path in list(self._cache):
            if path not in seen:  # deleted: forget it, and its last valid version
                del self._cache[path]
                self._last_valid.pop(path, None)
        prompts = dict(sorted(merged.items()))
        known = set(self.problems)
        for problem in problems:
            if problem not in known:
                logger.warning("%s", problem)
        changed = prompts != self.prompts or embedded != self.embedded
        self.prompts, self.embedded, self.problems = prompts, embedded, problems
        return changed

    def _files(self, root: str, problems: list[Problem]) -> list[str]:
        """The ``*.md`` files below ``root``, sorted, within the bounds."""
        if not os.path.isdir(root):
            problems.append(Problem(root, None, "the directory does not exist; no prompts are read from it"))
            return []
        real_root = os.path.realpath(root)
        found: list[str] = []
        for folder, subfolders, names in os.walk(root, onerror=None, followlinks=False):
            depth = 0 if folder == root else os.path.relpath(folder, root).count(os.sep) + 1
            subfolders[:] = sorted(d for d in subfolders if not d.startswith(".")) if depth < self.max_depth else []
            for name in sorted(names):
                if name.startswith(".") or not name.endswith(".md"):
                    continue
                path = os.path.join(folder, name)
                if os.path.islink(path):
                    target = os.path.realpath(path)
                    if os.path.commonpath([real_root, target]) != real_root:
                        problems.append(Problem(path, None, "a symlink leading out of the directory; skipped"))
                        continue
                found.append(path)
        found.sort()
        if len(found) > self.max_files:
            problems.append(Problem(root, None, f"more than {self.max_files} prompt files; only the first "
                                    f"{self.max_files} in path order are read"))
            found = found[: self.max_files]
        return found

    def _load(self, root: str, path: str, problems: list[Problem], embedded: dict[tuple[str, str], str]) -> PromptSpec | None:
        try:
            stat = os.stat(path)
            key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        except OSError:
            return None  # removed between the walk and now: the next scan forgets it
        cached = self._cache.get(path)
        outcome = cached[1] if cached is not None and cached[0] == key else self._parse(root, path)
        self._cache[path] = (key, outcome)
        for line, message in outcome.warnings:
            problems.append(Problem(path, line, message))
        error = outcome.error
        if outcome.spec is not None:
            # Embedded files are checked at every scan, not cached with the file: one may appear,
            # change or go away while the embedding file stays the same.
            error = self._read_embeds(outcome.spec, embedded)
            if error is None:
                self._last_valid[path] = outcome.spec
                return outcome.spec
        assert error is not None
        last = self._last_valid.get(path)
        suffix = "; serving its last valid version" if last is not None else "; the file is skipped"
        problems.append(Problem(path, error.line, error.message + suffix))
        return last

    def _parse(self, root: str, path: str) -> _Outcome:
        data = template.read_regular_file(path, self.max_file_bytes + 1)
        try:
            if data is None:
                raise FormatError("the file cannot be read")
            if len(data) > self.max_file_bytes:
                raise FormatError(f"the file is larger than the limit of {self.max_file_bytes} bytes")
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise FormatError("the file is not UTF-8 text", data[: error.start].count(b"\n") + 1) from None
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            spec, warnings = load_file_text(text, root=root, path=relative)
        except FormatError as error:
            return _Outcome(None, error, ())
        return _Outcome(spec, None, tuple(warnings))

    @staticmethod
    def _read_embeds(spec: PromptSpec, embedded: dict[tuple[str, str], str]) -> FormatError | None:
        """Read every file ``spec`` embeds into ``embedded``; the first failure, with its line."""
        for embed in _embeds(spec):
            try:
                relative, text = template.read_embedded(spec.root, _folder(spec), embed.path)
            except FormatError as error:
                return FormatError(error.message, embed.line)
            embedded[(spec.root, relative)] = text
        return None

    # ----------------------------------------------------------------------------------- rendering

    def read_embed(self, spec: PromptSpec, embed: Embed) -> template.EmbeddedFile:
        """The file ``embed`` of ``spec`` as it is now, checked again (it may have become a symlink
        since the scan). Raises FormatError with a message naming no host path."""
        relative, text = template.read_embedded(spec.root, _folder(spec), embed.path)
        uri = EMBED_URI_PREFIX + urllib.parse.quote(relative, safe="/")
        return template.EmbeddedFile(uri, text, template.mime_type(relative))


def _folder(spec: PromptSpec) -> str:
    return spec.path.rpartition("/")[0]


def _embeds(spec: PromptSpec) -> list[Embed]:
    return [segment for message in spec.messages for segment in message.segments if isinstance(segment, Embed)]
