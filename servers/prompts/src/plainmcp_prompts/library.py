"""The library: every prompt file of several directories, merged by name, kept current by rescans.

- Directories are read in order; a prompt of a later directory replaces one of the same name from an
  earlier one (so a user directory can override a bundled prompt; logged). A skill never does, nor is
  one replaced: a skill brings its files (scripts, references) as resources under its name, so a
  second folder taking a skill's name would swap them unseen. The first (in directory order) is
  served and the other is reported. Inside one directory, two files with the same name are a
  mistake: the first in path order is served and the other is reported.
- Files are ``*.md`` below each directory (sub-folders included, at most ``max_depth`` deep; hidden
  files and folders are skipped). Everything is listed and opened through directory descriptors
  from the directory (``beneath``): links inside it are followed, links leading out are skipped,
  folders are never entered through a link, whatever is swapped while a scan runs.
- A directory or folder that cannot be read is reported and skipped; the others are still served.
- A file that does not parse is reported on stderr (file, line, problem: one bounded line each) and
  skipped; if it parsed before in this process, its last valid version is served until it parses
  again. Nothing a file holds can make a scan fail: an unexpected error skips that file only.
- Bounds: ``max_files`` files per directory, ``max_file_bytes`` per file, ``MAX_WARNINGS`` warnings
  per file, and the front matter's own (``frontmatter``, ``safeyaml``).

Nothing here is async or knows about MCP: :meth:`Library.scan` is a plain function of the files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
import os
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass

from . import beneath, dotprompt, skills, template
from .formats import load_file_text
from .frontmatter import FormatError, quote
from .model import Embed, PromptSpec

logger = logging.getLogger(__name__)

EMBED_URI_PREFIX = "prompts://file/"
#: Warnings reported per file; the rest are counted in one more line.
MAX_WARNINGS = 10
#: Names (files and links) looked at per directory, prompt files or not.
MAX_NAMES = 50_000
#: Files served per skill, besides its SKILL.md, and for all the skills of one directory.
MAX_SKILL_FILES = 200
MAX_SKILL_FILES_TOTAL = 5000


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
        #: A digest of every file the served prompts embed, by (root, path below it): what tells a
        #: change, without holding the texts (up to 256 KiB each, and many files may be embedded).
        self.embedded: dict[tuple[str, str], str] = {}
        #: The problems of the last scan.
        self.problems: list[Problem] = []
        self._cache: dict[str, tuple[tuple[int, int, int], _Outcome]] = {}
        #: Digests of embedded files by the version of the file read (device, inode, size, times):
        #: a rescan reads only what changed, and a file reached through many links is read once.
        self._embed_digests: dict[tuple[int, ...], str] = {}
        self._last_valid: dict[str, PromptSpec] = {}
        #: Prompts of a later directory overriding an earlier one's (logged once each).
        self._overrides: set[str] = set()

    # ------------------------------------------------------------------------------------ scanning

    def scan(self) -> bool:
        """Read the directories again. Returns whether what is served changed (a prompt added,
        removed or different, or a file one of them embeds). New problems are logged as warnings."""
        problems: list[Problem] = []
        merged: dict[str, PromptSpec] = {}
        seen: set[str] = set()
        embedded: dict[tuple[str, str], str] = {}
        digests: dict[tuple[int, ...], str] = {}
        overrides: set[str] = set()
        for root in self.dirs:
            in_root: dict[str, PromptSpec] = {}
            prompt_files, skill_files, cut = self._files(root, problems)
            for relative in prompt_files:
                path = os.path.join(root, relative)
                seen.add(path)
                spec = self._load(root, relative, problems, embedded, digests)
                if spec is None:
                    continue
                if spec.format == "skill":  # its files as they are now, whichever version of SKILL.md is served
                    folder = skills.folder_of(relative)
                    spec = dataclasses.replace(spec, files=skill_files.get(folder, ()), files_cut=folder in cut)
                first = in_root.get(spec.name)
                if first is not None:
                    problems.append(
                        Problem(
                            path,
                            None,
                            f"prompt name {spec.name!r} is already used by "
                            f"{os.path.join(root, first.path)}; this file is ignored",
                        )
                    )
                    continue
                in_root[spec.name] = spec
            _merge(merged, in_root, problems, overrides)
        for path in list(self._cache):
            if path not in seen:  # deleted: forget it, and its last valid version
                del self._cache[path]
                self._last_valid.pop(path, None)
        prompts = dict(sorted(merged.items()))
        known = set(self.problems)
        for problem in problems:
            if problem not in known:
                logger.warning("%s", problem)
        for override in sorted(overrides - self._overrides):
            logger.info("%s (same prompt name; the later directory wins)", override)
        self._overrides = overrides
        changed = prompts != self.prompts or embedded != self.embedded
        self.prompts, self.embedded, self.problems = prompts, embedded, problems
        self._embed_digests = digests
        return changed

    def _files(self, root: str, problems: list[Problem]) -> tuple[list[str], dict[str, tuple[str, ...]], set[str]]:
        """The prompt files below ``root`` (paths below it, ``/``-separated), sorted, within the bounds;
        each skill folder's other files (paths below the folder); the skill folders cut at a bound."""

        def unreadable(relative: str, error: OSError) -> None:
            problems.append(
                Problem(os.path.join(root, relative), None, f"the folder cannot be read ({_reason(error)}); skipped")
            )

        try:
            # Every name is kept (up to a bound): which files belong to a skill is known only once
            # its SKILL.md is seen, and the walk may meet a folder's files before it.
            names = list(itertools.islice(beneath.walk(root, self.max_depth, unreadable), MAX_NAMES))
        except FileNotFoundError:
            problems.append(Problem(root, None, "the directory does not exist; no prompts are read from it"))
            return [], {}, set()
        except NotADirectoryError:
            problems.append(Problem(root, None, "not a directory; no prompts are read from it"))
            return [], {}, set()
        except OSError as error:
            problems.append(
                Problem(root, None, f"the directory cannot be read ({_reason(error)}); no prompts are read from it")
            )
            return [], {}, set()
        if len(names) == MAX_NAMES:
            problems.append(Problem(root, None, f"more than {MAX_NAMES} files; only the first are read"))
        found, skill_files, cut = _sort_out([entry.path for entry in names], problems, root)
        if len(names) == MAX_NAMES:  # the walk stopped: any skill may miss files
            cut |= skill_files.keys()
        if len(found) > self.max_files:
            problems.append(
                Problem(
                    root,
                    None,
                    f"more than {self.max_files} prompt files; only the first {self.max_files} in path order are read",
                )
            )
            found = found[: self.max_files]
        return found, skill_files, cut

    def _load(
        self,
        root: str,
        relative: str,
        problems: list[Problem],
        embedded: dict[tuple[str, str], str],
        digests: dict[tuple[int, ...], str],
    ) -> PromptSpec | None:
        path = os.path.join(root, relative)
        try:
            fd: int | None = beneath.open_below(root, relative)[0]
        except FileNotFoundError:
            return None  # removed between the walk and now (or a dangling link): the next scan forgets it
        except beneath.OutsideError:
            problems.append(Problem(path, None, "a symlink leading out of the directory; skipped"))
            return None
        except OSError:
            fd = None
        try:
            if fd is None:
                key, outcome = None, _Outcome(None, FormatError("the file cannot be read"), ())
            else:
                # The version is that of the file opened, not of a path looked up again.
                stat = os.fstat(fd)
                key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
                cached = self._cache.get(path)
                outcome = cached[1] if cached is not None and cached[0] == key else self._parse(root, relative, fd)
        finally:
            if fd is not None:
                os.close(fd)
        if key is not None:
            self._cache[path] = (key, outcome)
        for line, message in outcome.warnings[:MAX_WARNINGS]:
            problems.append(Problem(path, line, message))
        if len(outcome.warnings) > MAX_WARNINGS:
            problems.append(Problem(path, None, f"{len(outcome.warnings) - MAX_WARNINGS} more warnings"))
        error = outcome.error
        if outcome.spec is not None:
            # Embedded files are checked at every scan, not cached with the file: one may appear,
            # change or go away while the embedding file stays the same.
            error = self._read_embeds(outcome.spec, embedded, digests)
            if error is None:
                self._last_valid[path] = outcome.spec
                return outcome.spec
        assert error is not None
        last = self._last_valid.get(path)
        suffix = "; serving its last valid version" if last is not None else "; the file is skipped"
        problems.append(Problem(path, error.line, error.message + suffix))
        return last

    def _parse(self, root: str, relative: str, fd: int) -> _Outcome:
        try:
            data = beneath.read_regular(fd, self.max_file_bytes + 1)
        except OSError:
            data = None
        try:
            if data is None:
                raise FormatError("the file cannot be read")
            if len(data) > self.max_file_bytes:
                raise FormatError(f"the file is larger than the limit of {self.max_file_bytes} bytes")
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise FormatError("the file is not UTF-8 text", data[: error.start].count(b"\n") + 1) from None
            spec, warnings = load_file_text(text, root=root, path=relative)
        except FormatError as error:
            return _Outcome(None, error, ())
        except Exception as error:  # a bug must cost this file only, never the library
            logger.debug("loading %s failed", os.path.join(root, relative), exc_info=True)
            return _Outcome(
                None,
                FormatError(
                    f"the file could not be loaded: unexpected {type(error).__name__} (details with --log-level debug)"
                ),
                (),
            )
        return _Outcome(spec, None, tuple(warnings))

    def _read_embeds(
        self, spec: PromptSpec, embedded: dict[tuple[str, str], str], digests: dict[tuple[int, ...], str]
    ) -> FormatError | None:
        """Check every file ``spec`` embeds, its digest into ``embedded`` (read only if that version
        of the file was not read before); the first failure, with its line."""
        for embed in _embeds(spec):
            try:
                with template.open_embedded(spec.root, _folder(spec), embed.path) as (fd, relative):
                    stat = os.fstat(fd)
                    version = (stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
                    known = digests.get(version) or self._embed_digests.get(version)
                    if known is None:
                        known = digest(template.read_embedded_data(fd, embed.path, relative))
                    digests[version] = known
            except FormatError as error:
                return FormatError(error.message, embed.line)
            except OSError:  # fstat of an open descriptor: not expected, but never fatal to the scan
                return FormatError(f"embedded file {quote(embed.path)} cannot be read", embed.line)
            embedded[(spec.root, relative)] = known
        return None

    # ----------------------------------------------------------------------------------- rendering

    def read_embed(self, spec: PromptSpec, embed: Embed) -> template.EmbeddedFile:
        """The file ``embed`` of ``spec`` as it is now, checked again (it may have become a symlink
        since the scan). Raises FormatError with a message naming no host path."""
        relative, data = template.read_embedded(spec.root, _folder(spec), embed.path)
        uri = EMBED_URI_PREFIX + urllib.parse.quote(relative, safe="/")
        if isinstance(data, bytes):
            return template.EmbeddedFile(uri, "", template.binary_mime_type(relative) or "", blob=data)
        return template.EmbeddedFile(uri, data, template.mime_type(relative))


def _merge(
    merged: dict[str, PromptSpec], later: dict[str, PromptSpec], problems: list[Problem], overrides: set[str]
) -> None:
    """Add a later directory's prompts to ``merged``: a prompt replaces an earlier prompt of its name
    (noted in ``overrides``); where either is a skill, the earlier one stays and a problem says so."""
    for spec in later.values():
        earlier = merged.get(spec.name)
        if earlier is not None and "skill" in (earlier.format, spec.format):
            problems.append(
                Problem(
                    os.path.join(spec.root, spec.path),
                    None,
                    f"name {spec.name!r} is already served by {os.path.join(earlier.root, earlier.path)} "
                    "(a skill's name is never taken over from another directory); this one is ignored",
                )
            )
            continue
        if earlier is not None:
            overrides.add(f"{os.path.join(spec.root, spec.path)} overrides {os.path.join(earlier.root, earlier.path)}")
        merged[spec.name] = spec


def _sort_out(
    paths: list[str], problems: list[Problem], root: str
) -> tuple[list[str], dict[str, tuple[str, ...]], set[str]]:
    """(prompt files, sorted; each skill folder's other files; the skill folders whose files were
    cut at a bound) of the ``paths`` below ``root``. A
    skill folder is one holding ``SKILL.md``; a skill inside another skill's folder is a file of the
    outer one; files of a skill are never prompts."""
    folders = {skills.folder_of(path) for path in paths if skills.is_skill_file(path)}
    # Looked up by each path's enclosing folders (at most max_depth of them): linear in the paths.
    outermost = {folder for folder in folders if _owner(folder, folders, proper=True) is None}
    found: list[str] = []
    files: dict[str, list[str]] = {folder: [] for folder in outermost}
    total = 0
    cut: set[str] = set()
    for path in paths:
        owner = _owner(path, outermost)
        if owner is None:
            if is_prompt_file(path):
                found.append(path)
        elif path == (f"{owner}/{skills.FILENAME}" if owner else skills.FILENAME):
            found.append(path)
        elif total >= MAX_SKILL_FILES_TOTAL:
            cut.add(owner)
            if total == MAX_SKILL_FILES_TOTAL:
                problems.append(
                    Problem(root, None, f"more than {MAX_SKILL_FILES_TOTAL} files in skills; only the first are served")
                )
                total += 1
        elif len(files[owner]) < MAX_SKILL_FILES:
            total += 1
            files[owner].append(path[len(owner) + 1 :] if owner else path)
        elif len(files[owner]) == MAX_SKILL_FILES:
            cut.add(owner)
            problems.append(
                Problem(
                    os.path.join(root, owner),
                    None,
                    f"more than {MAX_SKILL_FILES} files in a skill; only the first are served",
                )
            )
            files[owner].append("")  # reported once; dropped below
    found.sort()
    return found, {folder: tuple(sorted(p for p in listed if p)) for folder, listed in files.items()}, cut


def _owner(path: str, folders: set[str], *, proper: bool = False) -> str | None:
    """The outermost of ``folders`` that ``path`` is strictly below ("" is the library directory:
    every path is below it but, with ``proper``, the directory itself)."""
    if "" in folders and (path or not proper):
        return ""
    parts = path.split("/")
    for end in range(1, len(parts)):
        prefix = "/".join(parts[:end])
        if prefix in folders:
            return prefix
    return None


def is_prompt_file(path: str) -> bool:
    """Whether the file at ``path`` (below a library directory) is read as a prompt: ``*.md``, and
    ``*.prompt`` except Dotprompt partials (``_name.prompt``)."""
    name = path.rpartition("/")[2]
    return name.endswith(".md") or (name.endswith(dotprompt.SUFFIX) and not name.startswith("_"))


def digest(data: str | bytes) -> str:
    """What :attr:`Library.embedded` keeps of an embedded file's text (or bytes)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def _reason(error: OSError) -> str:
    return os.strerror(error.errno).lower() if error.errno else "an error"


def _folder(spec: PromptSpec) -> str:
    return spec.path.rpartition("/")[0]


def _embeds(spec: PromptSpec) -> list[Embed]:
    return [segment for message in spec.messages for segment in message.segments if isinstance(segment, Embed)]
