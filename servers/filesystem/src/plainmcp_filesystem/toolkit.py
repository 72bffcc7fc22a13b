"""What every tool shares: schema pieces, annotations, and turning failures into tool errors."""

from __future__ import annotations

import functools
import logging
import os
import stat
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plainmcp import Context, ToolAnnotations, ToolError, ToolResult, content

from . import anchored
from .editing import EditFailed
from .gitignore import GitIgnore, parents_rules
from .paths import AccessError
from .result_pages import PageCursors
from .writing import WriteFailed

if TYPE_CHECKING:
    from plainmcp import Server

    from .access import Access
    from .anchored import Place
    from .config import Config
    from .paths import AccessPolicy

logger = logging.getLogger(__name__)

READ = ToolAnnotations(read_only=True, destructive=False, idempotent=True, open_world=False)

Handler = Callable[[Context, dict[str, Any]], Awaitable[ToolResult]]


def writes(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """The annotations of a tool that changes files (never open-world: it stays inside the allowed directories)."""
    return ToolAnnotations(read_only=False, destructive=destructive, idempotent=idempotent, open_world=False)


def guarded(handler: Handler) -> Handler:
    """Turn the failures a tool expects into ``isError`` results with safe messages.

    Access refusals, failed writes and edits keep their messages (written to be shown); an OSError
    becomes its ``strerror`` alone, since its text would carry the host path.
    """

    @functools.wraps(handler)
    async def run(ctx: Context, args: dict[str, Any]) -> ToolResult:
        try:
            return await handler(ctx, args)
        except (AccessError, WriteFailed, EditFailed) as problem:
            raise ToolError(str(problem)) from None
        except ValueError as problem:  # bad patterns, encodings, sizes: said in the message
            raise ToolError(str(problem)) from None
        except OSError as problem:
            logger.info("tool %s: %s", handler.__name__, problem)
            raise ToolError(
                f"The operation failed: {os.strerror(problem.errno) if problem.errno else 'I/O error'}"
            ) from None

    return run


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """How a tool is listed, besides its name and description (the handler's name and docstring)."""

    title: str
    input_schema: dict[str, Any] | None
    output_schema: dict[str, Any]
    annotations: ToolAnnotations
    #: "optional": the handler may go on as a task (``ctx.start_task()``) when the client asks.
    task_support: str = "forbidden"


def add_tool(server: Server, spec: ToolSpec, handler: Handler, *, meta: dict[str, Any] | None = None) -> None:
    """Register ``handler`` as the tool ``spec`` describes (with ``meta`` as its ``_meta``), its expected
    failures made tool errors (:func:`guarded`) and unknown arguments refused (:func:`known_arguments`)."""
    properties = (spec.input_schema or {}).get("properties", {})
    server.tool(
        title=spec.title,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=spec.annotations,
        meta=meta,
        task_support=spec.task_support,
    )(known_arguments(frozenset(properties), guarded(handler)))


#: The ``_meta`` key by which a tool tells Claude Code how large its results may be (in characters):
#: past its default limit a host would otherwise cut or refuse a result the tool meant to give whole.
MAX_RESULT_SIZE = "anthropic/maxResultSizeChars"


def large_by_design(config: Config) -> dict[str, Any]:
    """The ``_meta`` of a tool whose results are large by design (listings, trees, searches): they may
    weigh up to ``config.max_result_bytes``, and say so when cut there."""
    return {MAX_RESULT_SIZE: config.max_result_bytes}


def known_arguments(names: frozenset[str], handler: Handler) -> Handler:
    """Refuse an argument the tool does not take (a misspelt ``replaceAll`` must not be ignored).

    Checked here rather than by ``additionalProperties: false`` in every schema: those 28 bytes cost a
    model 7 tokens per tool on every turn, and this message also names the arguments that exist.
    """

    @functools.wraps(handler)
    async def run(ctx: Context, args: dict[str, Any]) -> ToolResult:
        unknown = sorted(set(args) - names)
        if unknown:
            raise ToolError(
                f"Unknown argument {', '.join(map(repr, unknown))}; this tool takes: {', '.join(sorted(names))}"
            )
        return await handler(ctx, args)

    return run


class ToolFamily:
    """What every family of tools holds: the settings, and the access policy of each request."""

    def __init__(self, config: Config, access: Access) -> None:
        self.config = config
        self.access = access
        self.cursors = PageCursors()

    def limit(self, args: dict[str, Any], key: str, default: int) -> int:
        """The cap a client asked for with ``key`` (or ``default``), never above ``max_entries_limit``."""
        return min(int(args.get(key, default)), self.config.max_entries_limit)

    def depth(self, args: dict[str, Any]) -> int:
        """The ``maxDepth`` a client asked for, never above ``max_depth``."""
        return min(int(args.get("maxDepth", self.config.max_depth)), self.config.max_depth)

    def git_rules(self, args: dict[str, Any], place: Place) -> tuple[tuple[str, str], ...] | None:
        """The ``.gitignore`` rules of the directories above ``place`` (up to its allowed directory),
        or None when the call asked for ``gitignore: false``."""
        if not args.get("gitignore", True):
            return None
        return parents_rules(functools.partial(anchored.open_directory, place.anchor), place.parts)

    def ignore(self, args: dict[str, Any], place: Place) -> GitIgnore | None:
        """What a walk from ``place`` skips for ``.gitignore`` (None with ``gitignore: false``)."""
        outer = self.git_rules(args, place)
        return None if outer is None else GitIgnore(outer)

    async def directory(self, ctx: Context, args: dict[str, Any], key: str = "path") -> tuple[AccessPolicy, Place]:
        """The policy of this request and the directory ``args[key]`` names.

        Raises:
            ToolError: it is not a directory. AccessError: it is not allowed.
        """
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args[key])
        if not stat.S_ISDIR(anchored.lstat(place).st_mode):
            raise ToolError("Not a directory")
        return policy, place


#: The stdio transport's message limit. A file returned whole goes out as base64: 4/3 of its bytes.
MESSAGE_LIMIT = 4 * 1024 * 1024


def media_limit(config: Any) -> int:
    """The largest file returned whole (``read_media_file``, ``resources/read``): at most
    ``config.max_media_bytes``, and small enough that its base64 and the message around it fit
    in one message (about 3 MB). Larger files are a clear error, not a message the transport refuses."""
    return min(config.max_media_bytes, (MESSAGE_LIMIT - 64 * 1024) * 3 // 4)


class Budget:
    """An estimate of a result's size, so a huge listing is cut before the transport refuses it.

    ``take(n)`` charges ``n`` bytes (callers estimate an item's weight in both the text and the
    structured form) and says whether the result still fits.
    """

    __slots__ = ("left",)

    def __init__(self, limit: int) -> None:
        self.left = limit

    def take(self, size: int) -> bool:
        self.left -= size
        return self.left >= 0


def result(text: str, data: dict[str, Any]) -> ToolResult:
    """A result with its readable text and its structured content."""
    return ToolResult(content=[content.text(text)], structured=data)


# ------------------------------------------------------------------------------------ schema pieces

#: A path argument. Its description (absolute, or relative to the first allowed directory) is said once, in
#: the server's instructions: repeated in every tool it cost a model ~17 tokens per tool on every turn. An
#: empty path is refused by the policy itself (a tool error), so the schema need not say it.
PATH = {"type": "string"}


def string_list(description: str = "", *, max_items: int = 100, max_length: int = 4096) -> dict[str, Any]:
    # Empty items are refused where they are used (an empty path or pattern is a tool error).
    schema: dict[str, Any] = {
        "type": "array",
        "items": {"type": "string", "maxLength": max_length},
        "maxItems": max_items,
    }
    if description:
        schema["description"] = description
    return schema


def count(description: str = "", *, minimum: int = 1, maximum: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if description:
        schema["description"] = description
    if maximum is not None:
        schema["maximum"] = maximum
    return schema


def obj(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    # Unknown keys are refused in code (toolkit.known_arguments, write_tools for edits), not by the schema.
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def out(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """An output schema: an object that may grow fields later."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = list(required)
    return schema


def big_array(items: str) -> dict[str, Any]:
    """An output array that may hold many thousands of items. Its items are described, not given a
    schema: the core checks structured output against the schema on every call, and per-item checks
    of a 50,000-entry tree cost more than building it."""
    return {"type": "array", "description": f"items: {items}"}


#: Name patterns ('node_modules', '*.pyc') match at any depth; patterns with '/' ('build/**') match the path
#: relative to the start; excluded directories are not entered (the README says so at length).
#: Their count and length are checked by the Excluder (globs.MAX_PATTERNS, MAX_PATTERN_CHARS).
#: On by default: a model searching a repository wants its sources, not node_modules or build output.
GITIGNORE = {"type": "boolean", "default": True}

#: The cursor of a cut listing or search (its nextCursor); good only with the same other arguments.
CURSOR = {"type": "string"}
NEXT_CURSOR = {"type": "string", "description": "more left: pass as cursor"}

EXCLUDES = {"type": "array", "items": {"type": "string"}, "description": "Globs to skip ('node_modules', 'build/**')"}
