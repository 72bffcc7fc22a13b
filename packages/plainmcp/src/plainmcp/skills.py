"""The skills extension (``io.modelcontextprotocol/skills``, SEP-2640): its names and the rules both
sides apply to a skill entry, its ``SKILL.md`` front matter and its files' digests.

A skill is a folder of files served as resources, ``skill://<skill-path>/<file>``; its entry
(``skills/list``, ``skills/get``) carries the ``SKILL.md`` front matter verbatim as JSON and a
complete manifest of its files, each with the SHA-256 digest and byte size of its raw content. A
server builds entries with :func:`digest` and :func:`parse_frontmatter`; a client checks them with
:func:`check_entry` and the content it reads with :func:`verify` and :func:`same_frontmatter`
(:mod:`plainmcp.skills_client` does all of that for a host).

Front matter is YAML, parsed by PyYAML (the ``plainmcp[skills]`` extra) within bounds: at most
:data:`MAX_FRONTMATTER_BYTES`, no aliases, nesting at most :data:`MAX_DEPTH`. Timestamps stay
strings, so a value means the same as JSON on both sides (the entry is JSON, the file YAML).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

EXTENSION = "io.modelcontextprotocol/skills"
SKILLS_LIST = "skills/list"
SKILLS_GET = "skills/get"
DIRECTORY_READ = "resources/directory/read"
#: The ``mimeType`` of a directory resource (``resources/directory/read`` lists its children).
DIRECTORY_MIME_TYPE = "inode/directory"
SKILL_FILE = "SKILL.md"
SCHEME = "skill://"
#: ``resources`` of a skill whose content is generated, so that no digest can be published.
DYNAMIC = "dynamic"
#: The extension's per-skill limits: every host accepts skills within them.
MAX_RESOURCES = 512
MAX_TOTAL_BYTES = 16 * 1024 * 1024
#: Bounds of a front matter block, before and while YAML reads it.
MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_DEPTH = 16
#: The Agent Skills specification's rule for a skill's name.
NAME_RULE = re.compile(r"(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*")
DIGEST_RULE = re.compile(r"sha256:[0-9a-f]{64}")
_FRONTMATTER = re.compile(r"---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.DOTALL)


class SkillError(ValueError):
    """A skill entry, front matter or file that breaks the extension's rules; ``str()`` says how."""


class VerificationError(SkillError):
    """Content that is not what the skill's entry describes (size, digest or front matter): a host
    must not use it (refresh the entry with ``skills/get`` and load again)."""


def digest(data: bytes) -> str:
    """``sha256:<64 lowercase hex>`` of ``data``: a skill file's digest."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def skill_name(uri: str) -> str | None:
    """The skill name a ``SKILL.md`` URI ends with (``skill://acme/refunds/SKILL.md`` -> ``refunds``),
    or None when ``uri`` does not name a ``SKILL.md`` below at least one path segment."""
    _, sep, rest = uri.partition("://")
    parts = [part for part in rest.split("/") if part]
    if not sep or len(parts) < 2 or parts[-1] != SKILL_FILE:
        return None
    return parts[-2]


def skill_root(uri: str) -> str:
    """The skill's directory URI: its ``SKILL.md`` URI without ``/SKILL.md``."""
    return uri.removesuffix("/" + SKILL_FILE)


# ------------------------------------------------------------------------------------- front matter


def frontmatter_block(text: str) -> str | None:
    """The YAML between a document's leading ``---`` lines (a byte order mark before is allowed),
    or None when it has none."""
    match = _FRONTMATTER.match(text.removeprefix("\ufeff"))
    return match.group(1) if match else None


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The front matter of the ``SKILL.md`` text ``text`` as JSON data (a dict).

    Raises SkillError when there is none, it is not a mapping, it breaks a bound, or it is not YAML.
    """
    block = frontmatter_block(text)
    if block is None:
        raise SkillError("SKILL.md does not begin with a YAML front matter block between '---' lines")
    if len(block.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise SkillError(f"the front matter is larger than {MAX_FRONTMATTER_BYTES // 1024} KiB")
    try:
        import yaml  # the plainmcp[skills] extra; only skills need it
    except ImportError:
        raise SkillError("reading a skill's front matter needs PyYAML: install plainmcp[skills]") from None

    try:
        data = _load_bounded(yaml, block)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or "is not valid YAML"
        raise SkillError(f"the front matter {problem}") from None
    except (ValueError, OverflowError, RecursionError):
        raise SkillError("the front matter holds a value that cannot be read") from None
    if not isinstance(data, dict):
        raise SkillError("the front matter is not a mapping of fields")
    value = _json(data)
    assert isinstance(value, dict)
    return value


def _load_bounded(yaml: Any, block: str) -> Any:
    class Loader(yaml.SafeLoader):
        """Safe, with no aliases (a few bytes of them describe a huge value) and bounded nesting."""

        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                raise yaml.MarkedYAMLError(problem="uses an alias (*name), which skills do not allow")
            if self.depth >= MAX_DEPTH:
                raise yaml.MarkedYAMLError(problem=f"is nested deeper than {MAX_DEPTH} levels")
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    # Timestamps stay strings: JSON has none, and the entry is JSON.
    Loader.yaml_implicit_resolvers = {
        first: [(tag, rule) for tag, rule in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader = Loader(block)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _json(value: Any) -> Any:
    """YAML data as JSON data: mapping keys become strings, bytes and other scalars their text."""
    if isinstance(value, dict):
        return {str(key): _json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(item) for item in value]
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def same_frontmatter(file: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    """The fields on which a file's front matter and an entry's differ (empty when identical).
    Strict: a field on one side only differs (even ``null``), ``1`` is not ``true`` nor ``"1"``."""
    return sorted(
        key
        for key in file.keys() | entry.keys()
        if key not in file or key not in entry or not _same(file[key], entry[key])
    )


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def check_frontmatter(frontmatter: dict[str, Any], uri: str) -> None:
    """What the extension requires of a skill's front matter at ``uri``: a ``name`` that follows
    the Agent Skills rule and ends the URI, and a ``description``. Raises SkillError."""
    name = frontmatter.get("name")
    if not isinstance(name, str) or not name:
        raise SkillError("the front matter has no name")
    if not NAME_RULE.fullmatch(name):
        raise SkillError(f"the name {name!r} breaks the Agent Skills rule (1-64 of a-z, 0-9 and single hyphens)")
    description = frontmatter.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("the front matter has no description")
    if skill_name(uri) != name:
        raise SkillError(f"the uri does not end in /{name}/{SKILL_FILE} (the skill's name)")


# ------------------------------------------------------------------------------------------ entries


@dataclass(frozen=True, slots=True)
class SkillFile:
    """One file of a skill's manifest: its URI, and the digest and size of its raw bytes."""

    uri: str
    digest: str
    size: int

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "digest": self.digest, "size": self.size}


@dataclass(frozen=True, slots=True)
class SkillEntry:
    """A skill as ``skills/list`` and ``skills/get`` describe it. ``files`` is None for a skill whose
    ``resources`` is ``"dynamic"`` (no manifest, no integrity)."""

    uri: str
    frontmatter: dict[str, Any]
    files: tuple[SkillFile, ...] | None

    @property
    def name(self) -> str:
        return str(self.frontmatter["name"])

    @property
    def description(self) -> str:
        return str(self.frontmatter["description"])

    @property
    def root(self) -> str:
        return skill_root(self.uri)

    @property
    def total_size(self) -> int:
        return sum(file.size for file in self.files or ())

    def file(self, uri: str) -> SkillFile | None:
        """The manifest's entry for ``uri`` (None when unlisted, or for a dynamic skill)."""
        return next((file for file in self.files or () if file.uri == uri), None)

    def to_json(self) -> dict[str, Any]:
        resources: Any = DYNAMIC if self.files is None else [file.to_json() for file in self.files]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": resources}


def check_entry(entry: Any) -> SkillEntry:
    """A skill entry from the wire, checked against every rule the extension sets for one (the
    front matter's, and a complete manifest within the skill's directory with well-formed digests
    and sizes, each file once, ``SKILL.md`` included). Raises SkillError saying what is wrong."""
    if not isinstance(entry, dict):
        raise SkillError("a skill entry is not an object")
    uri = entry.get("uri")
    if not isinstance(uri, str) or skill_name(uri) is None:
        raise SkillError(f"a skill entry's uri must name a {SKILL_FILE}, not {uri!r}")
    frontmatter = entry.get("frontmatter")
    if not isinstance(frontmatter, dict):
        raise SkillError(f"{uri}: the entry has no frontmatter object")
    try:
        check_frontmatter(frontmatter, uri)
    except SkillError as error:
        raise SkillError(f"{uri}: {error}") from None
    resources = entry.get("resources")
    if resources == DYNAMIC:
        return SkillEntry(uri, frontmatter, None)
    if not isinstance(resources, list):
        raise SkillError(f"{uri}: resources must be a list of files or {DYNAMIC!r}")
    files = tuple(_check_file(uri, item) for item in resources)
    seen = [file.uri for file in files]
    if len(set(seen)) != len(seen):
        raise SkillError(f"{uri}: resources lists a file more than once")
    if uri not in seen:
        raise SkillError(f"{uri}: resources does not list the skill's {SKILL_FILE}")
    return SkillEntry(uri, frontmatter, files)


def _check_file(uri: str, item: Any) -> SkillFile:
    if not isinstance(item, dict) or not isinstance(item.get("uri"), str):
        raise SkillError(f"{uri}: a resources item has no uri")
    file_uri = item["uri"]
    if file_uri != uri and not file_uri.startswith(skill_root(uri) + "/"):
        raise SkillError(f"{uri}: {file_uri} is outside the skill's directory")
    if not isinstance(item.get("digest"), str) or not DIGEST_RULE.fullmatch(item["digest"]):
        raise SkillError(f"{uri}: {file_uri} has no sha256:<64 lowercase hex> digest")
    size = item.get("size")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise SkillError(f"{uri}: {file_uri} has no size (a byte count)")
    return SkillFile(file_uri, item["digest"], size)


def check_limits(entry: SkillEntry) -> None:
    """Refuse a skill beyond the extension's limits, known from its manifest before any read."""
    if entry.files is None:
        return
    if len(entry.files) > MAX_RESOURCES:
        raise SkillError(f"{entry.uri}: {len(entry.files)} files, more than the {MAX_RESOURCES} a skill may have")
    if entry.total_size > MAX_TOTAL_BYTES:
        raise SkillError(f"{entry.uri}: {entry.total_size} bytes, more than the {MAX_TOTAL_BYTES} a skill may hold")


def verify(file: SkillFile, data: bytes) -> None:
    """Raise VerificationError unless ``data`` is exactly the bytes ``file`` describes."""
    if len(data) != file.size:
        raise VerificationError(f"{file.uri}: {len(data)} bytes read, the entry says {file.size}")
    if digest(data) != file.digest:
        raise VerificationError(f"{file.uri}: the content does not match the entry's digest")
