"""The tools that search: files by name, and lines by content. Always registered."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

import anyio
from plainmcp import Context, ToolError, ToolResult

from .globs import MAX_PATTERN_CHARS, Excluder, compile_glob
from .result_pages import fitting, more
from .search import ContentSearch, GrepRequest, SearchTimeout, compile_query, search_contents, search_names
from .sizes import weight
from .skipped import SCHEMA as SKIPPED
from .skipped import Skipped, report
from .toolkit import (
    CURSOR,
    EXCLUDES,
    GITIGNORE,
    NEXT_CURSOR,
    PATH,
    READ,
    ToolFamily,
    ToolSpec,
    big_array,
    count,
    obj,
    out,
    result,
)
from .walk import Pacer

if TYPE_CHECKING:
    from .access import Access
    from .config import Config

#: Regular-expression searches running at once, each in its own process (more wait their turn).
SEARCH_WORKERS = 2

SEARCH_FILES = ToolSpec(
    title="Find files by name",
    input_schema=obj(
        {
            "path": PATH,
            "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS},
            "excludePatterns": EXCLUDES,
            "gitignore": GITIGNORE,
            "maxResults": count(),
            "cursor": CURSOR,
        },
        ("path", "pattern"),
    ),
    output_schema=out(
        {
            "matches": big_array("absolute paths"),
            "truncated": {"type": "boolean"},
            "nextCursor": NEXT_CURSOR,
            "skipped": SKIPPED,
        },
        ("matches", "truncated"),
    ),
    annotations=READ,
)

SEARCH_CONTENT = ToolSpec(
    title="Search file contents",
    input_schema=obj(
        {
            "path": PATH,
            "query": {"type": "string", "minLength": 1, "maxLength": 1000},
            "regex": {"type": "boolean", "description": "query is a Python regex"},
            "caseSensitive": {"type": "boolean"},
            "contextLines": count(minimum=0, maximum=10),
            # Checked like excludePatterns, by the Excluder.
            "include": {"type": "array", "items": {"type": "string"}, "description": "Only these globs ('*.py')"},
            "excludePatterns": EXCLUDES,
            "gitignore": GITIGNORE,
            "maxResults": count("Matching lines"),
            "cursor": CURSOR,
        },
        ("path", "query"),
    ),
    output_schema=out(
        {
            "matches": big_array("{path, line, text, before?, after?}"),
            "filesSearched": {"type": "integer"},
            "filesMatched": {"type": "integer"},
            "skippedBinary": {"type": "integer"},
            "skippedLarge": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "nextCursor": NEXT_CURSOR,
            "skipped": SKIPPED,
        },
        ("matches", "truncated"),
    ),
    annotations=READ,
    task_support="optional",  # a search over a large tree can run as a task the client polls or cancels
)


def _join(shown: str, relative: str) -> str:
    return os.path.join(shown, *relative.split("/")) if relative else shown


def _grep_match(match: dict[str, Any]) -> list[str]:
    """One match as grep prints it (``path:line:text``, context as ``path-line-text``)."""
    lines: list[str] = []
    for offset, before in enumerate(match.get("before", ())):
        lines.append(f"{match['path']}-{match['line'] - len(match['before']) + offset}-{before}")
    lines.append(f"{match['path']}:{match['line']}:{match['text']}")
    for offset, after in enumerate(match.get("after", ())):
        lines.append(f"{match['path']}-{match['line'] + 1 + offset}-{after}")
    return lines


def _grep_lines(found: ContentSearch) -> list[str]:
    """The matches as grep prints them, then a summary."""
    lines = [line for match in found.matches for line in _grep_match(match)]
    summary = (
        f"{len(found.matches)} matching lines in {found.files_matched} of {found.files_searched} files searched"
        f"; skipped {found.skipped_binary} binary and {found.skipped_large} large files"
    )
    if found.truncated:
        summary += "; stopped at maxResults"
    lines.append(summary)
    return lines


class SearchTools(ToolFamily):
    """Searches; at most :data:`SEARCH_WORKERS` regular-expression workers of one server run at once."""

    def __init__(self, config: Config, access: Access) -> None:
        super().__init__(config, access)
        self.workers = anyio.CapacityLimiter(SEARCH_WORKERS)

    async def search_files(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Find files and directories by glob: '*.py' matches names at any depth, 'src/**/x.py' paths
        below path. Names only: to search inside files use search_content."""
        start = self.cursors.start("search_files", args)  # a bad cursor is refused before any work
        policy, place = await self.directory(ctx, args)
        shown = policy.display(place)
        skipped = Skipped()
        found, truncated = await search_names(
            place,
            len(shown),
            compile_glob(args["pattern"]),
            exclude=Excluder(args.get("excludePatterns", ())),
            max_depth=self.config.max_depth,
            max_results=self.limit(args, "maxResults", 1000),
            max_bytes=self.config.max_result_bytes,
            pacer=Pacer(ctx, "entries searched"),
            ignore=self.ignore(args, place),
            skipped=skipped,
        )
        matches = [_join(shown, relative) for relative, _ in found]
        # A page of the matches within the text budget; a cursor goes on from the first one left out.
        stop = start + fitting((weight(path) + 1 for path in matches[start:]), self.config.max_read_bytes - 400)
        page = matches[start:stop]
        text = "\n".join(page) if page else "No matches found"
        if truncated:
            text += "\n[more matches exist; raise maxResults or narrow the pattern]"
        data: dict[str, Any] = {"matches": page, "truncated": truncated or stop < len(matches)}
        if stop < len(matches):
            data["nextCursor"] = self.cursors.issue("search_files", args, stop)
            text += f"\n[matches {start + 1}-{stop} of {len(matches)}] " + more(data["nextCursor"])
        return result(report(skipped, text, data, functools.partial(_join, shown)), data)

    async def search_content(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Search inside text files for a string or regex, like grep: path:line:text, with optional
        context. Binary and oversized files are skipped."""
        config = self.config
        start = self.cursors.start("search_content", args)  # a bad cursor is refused before any work
        policy, place = await self.directory(ctx, args)
        shown = policy.display(place)
        regex = bool(args.get("regex"))
        pattern = compile_query(args["query"], regex=regex, case_sensitive=bool(args.get("caseSensitive")))
        include, exclude = tuple(args.get("include", ())), tuple(args.get("excludePatterns", ()))
        for patterns in (include, exclude):
            Excluder(patterns)  # a bad pattern is refused here (ValueError: a tool error), before any work
        request = GrepRequest(
            pattern.pattern,
            pattern.flags,
            include,
            exclude,
            context=int(args.get("contextLines", 0)),
            max_depth=config.max_depth,
            max_results=self.limit(args, "maxResults", 100),
            max_file_bytes=config.max_search_file_bytes,
            max_bytes=config.max_result_bytes,
            shown_length=len(shown),
            gitignore=self.git_rules(args, place),
        )
        # A client that asked for a task has its taskId here; the checks above run again in the task.
        await ctx.start_task()
        try:
            found = await search_contents(
                place,
                request,
                regex=regex,
                pacer=Pacer(ctx, "entries searched"),
                timeout=config.search_timeout,
                workers=self.workers,
            )
        except SearchTimeout as problem:
            raise ToolError(str(problem)) from None
        for match in found.matches:
            match["path"] = _join(shown, match["path"])
        # A page of the matches within the text budget; a cursor goes on from the first one left out.
        everything = found.matches
        weights = (sum(len(line.encode()) + 1 for line in _grep_match(match)) for match in everything[start:])
        stop = start + fitting(weights, config.max_read_bytes - 400)
        found.matches = everything[start:stop]
        lines = _grep_lines(found)
        following = self.cursors.issue("search_content", args, stop) if stop < len(everything) else None
        if following is not None:
            lines.append(f"[matching lines {start + 1}-{stop} of {len(everything)}] " + more(following))
        data: dict[str, Any] = {
            "matches": found.matches,
            "filesSearched": found.files_searched,
            "filesMatched": found.files_matched,
            "skippedBinary": found.skipped_binary,
            "skippedLarge": found.skipped_large,
            "truncated": found.truncated or following is not None,
        }
        if following is not None:
            data["nextCursor"] = following
        return result(report(found.skipped, "\n".join(lines), data, functools.partial(_join, shown)), data)
