"""The tools that only read: always registered."""

from __future__ import annotations

import functools
import itertools
import os
import stat
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio
from plainmcp import ToolError, ToolResult, content

from . import anchored
from .access import Access
from .anchored import Place
from .globs import MAX_PATTERN_CHARS, Excluder, compile_glob
from .mime import OCTET_STREAM, mime_type
from .paths import AccessError, AccessPolicy
from .reading import check_encoding, fit_text, read_bytes, read_text
from .search import GrepRequest, SearchTimeout, compile_query, search_contents, search_names
from .sizes import weight
from .toolkit import (
    EXCLUDES,
    PATH,
    READ,
    Budget,
    big_array,
    count,
    guarded,
    media_limit,
    obj,
    out,
    result,
    string_list,
)
from .walk import Pacer, walk

if TYPE_CHECKING:
    from plainmcp import Context, Server

    from .config import Config


def _iso(timestamp: float) -> str:
    """A UTC time in ISO 8601, to the second."""
    return _iso_seconds(int(timestamp))


@functools.lru_cache(maxsize=4096)
def _iso_seconds(seconds: int) -> str:
    # Cached: the files of a directory mostly share a handful of mtimes, and formatting dominated
    # the listing of large directories.
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _order(sort_by: str, status_of: dict[str, os.stat_result]) -> Any:
    """The sort key of a listing: None (by name), largest first, or newest first; ties by name."""
    if sort_by == "size":
        return lambda name: (-status_of[name].st_size, name)
    if sort_by == "modified":
        return lambda name: (-status_of[name].st_mtime, name)
    return None


def _join(shown: str, relative: str) -> str:
    return os.path.join(shown, *relative.split("/")) if relative else shown


#: Regular-expression searches running at once, each in its own process (more wait their turn).
SEARCH_WORKERS = 2


def register(server: Server, config: Config, access: Access) -> None:
    workers = anyio.CapacityLimiter(SEARCH_WORKERS)

    def limit(args: dict[str, Any], key: str, default: int) -> int:
        return min(int(args.get(key, default)), config.max_entries_limit)

    def depth(args: dict[str, Any]) -> int:
        return min(int(args.get("maxDepth", config.max_depth)), config.max_depth)

    async def directory(ctx: Context, args: dict[str, Any], key: str = "path") -> tuple[AccessPolicy, Place]:
        policy = await access.policy_for(ctx)
        place = policy.resolve(args[key])
        if not stat.S_ISDIR(anchored.lstat(place).st_mode):
            raise ToolError("Not a directory")
        return policy, place

    # ------------------------------------------------------------------------------ text files

    @server.tool(
        title="Read a text file",
        input_schema=obj({
            "path": PATH,
            "head": count("Only the first N lines"),
            "tail": count("Only the last N lines"),
            "startLine": count("First line to return (1-based, inclusive)"),
            "endLine": count("Last line to return (1-based, inclusive)"),
            "encoding": {"type": "string", "default": "utf-8", "maxLength": 64,
                         "description": "Text encoding (a Python codec name of a text encoding: utf-8, latin-1, cp1252, ...)"},
        }, ("path",)),
        output_schema=out({
            "path": {"type": "string"}, "content": {"type": "string"}, "size": {"type": "integer"},
            "truncated": {"type": "boolean"}, "encodingErrors": {"type": "boolean"},
            "startLine": {"type": "integer"}, "endLine": {"type": "integer"},
        }, ("path", "content", "size", "truncated")),
        annotations=READ,
    )
    @guarded
    async def read_text_file(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read a text file, whole or in part (head, tail or a line range). Output is capped; a cut
        is announced at the end, with how to read the rest. Invalid bytes show as U+FFFD."""
        ranges = [k for k in ("head", "tail") if k in args] + (["a line range"] if {"startLine", "endLine"} & set(args) else [])
        if len(ranges) > 1:
            raise ToolError(f"Give only one of head, tail or startLine/endLine (got {', '.join(ranges)})")
        if args.get("startLine", 1) > args.get("endLine", float("inf")):
            raise ToolError("startLine is after endLine")
        try:
            encoding = check_encoding(args.get("encoding", "utf-8"))
        except LookupError:
            raise ToolError(f"Unknown encoding: {args.get('encoding')!r}") from None
        policy = await access.policy_for(ctx)
        place = policy.resolve(args["path"])
        read_part = functools.partial(
            read_text, place, max_bytes=config.max_read_bytes, head=args.get("head"), tail=args.get("tail"),
            start_line=args.get("startLine"), end_line=args.get("endLine"), encoding=encoding,
        )
        if args.get("startLine", 1) > 1:
            # Skipping lines reads the file up to them: gigabytes, for a far line of a huge file.
            # A worker thread keeps the event loop serving; check_cancelled stops it when cancelled.
            read = await anyio.to_thread.run_sync(
                functools.partial(read_part, check=anyio.from_thread.check_cancelled))
        else:
            read = read_part()
        # The text goes out twice (content and structured): each copy gets half the budget.
        shown_text, cut = fit_text(read.text, config.max_result_bytes // 2 - 4096)
        truncated = read.truncated or cut
        data: dict[str, Any] = {
            "path": policy.display(place), "content": shown_text, "size": read.size,
            "truncated": truncated, "encodingErrors": read.replaced,
        }
        if read.start_line is not None:
            data["startLine"] = read.start_line
        if read.end_line is not None:
            data["endLine"] = read.end_line
        text = shown_text
        if read.replaced:
            text += f"\n[note: bytes that are not valid {encoding} are shown as U+FFFD]"
        if cut and not read.truncated:
            text += ("\n[truncated: this text is mostly characters that need escaping (a binary file?); "
                     "read it with read_media_file, or in smaller parts with startLine/endLine]")
        elif truncated:
            text += (f"\n[truncated: output is capped at {config.max_read_bytes} bytes of a {read.size}-byte file; "
                     "read further with startLine/endLine, head or tail]")
        return result(text, data)

    @server.tool(
        title="Read several files",
        input_schema=obj({"paths": {**string_list("Files to read", max_items=50), "minItems": 1}}, ("paths",)),
        output_schema=out({"files": {"type": "array", "items": out({
            "path": {"type": "string"}, "content": {"type": "string"}, "truncated": {"type": "boolean"},
            "error": {"type": "string"},
        }, ("path",))}}, ("files",)),
        annotations=READ,
    )
    @guarded
    async def read_multiple_files(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read several text files at once. A file that fails says why, and the others are still read."""
        policy = await access.policy_for(ctx)
        files: list[dict[str, Any]] = []
        parts: list[str] = []
        # One budget for all the files (each goes out twice): fifty 1 MiB files would otherwise
        # outgrow the message limit and fail as a whole.
        left = config.max_result_bytes // 2 - 4096
        for path in args["paths"]:
            try:
                place = policy.resolve(path)
                read = read_text(place, max_bytes=min(config.max_read_bytes, max(left, 0)))
            except (AccessError, OSError) as problem:
                message = str(problem) if isinstance(problem, AccessError) else os.strerror(problem.errno or 5)
                files.append({"path": policy.echo(path), "error": message})
                parts.append(f"{policy.echo(path)}: Error - {message}")
                left -= 200
                continue
            text, cut = fit_text(read.text, max(left, 0))
            left -= len(text.encode("utf-8", "surrogatepass")) + 2 * len(policy.display(place)) + 100
            truncated = read.truncated or cut
            files.append({"path": policy.display(place), "content": text, "truncated": truncated})
            notice = (f"\n[truncated: {len(text)} characters of a {read.size}-byte file; read it with read_text_file]"
                      if truncated else "")
            parts.append(f"{policy.display(place)}:\n{text}{notice}")
        return result("\n---\n".join(parts), {"files": files})

    @server.tool(
        title="Read an image or audio file",
        input_schema=obj({"path": PATH}, ("path",)),
        output_schema=out({"path": {"type": "string"}, "mimeType": {"type": "string"}, "size": {"type": "integer"}},
                          ("path", "mimeType", "size")),
        annotations=READ,
    )
    @guarded
    async def read_media_file(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read an image or audio file as an image or audio content block (base64, with its MIME
        type); other files come back as an embedded binary resource."""
        policy = await access.policy_for(ctx)
        place = policy.resolve(args["path"])
        cap = media_limit(config)
        try:
            data = read_bytes(place, max_bytes=cap)
        except ValueError as problem:
            raise ToolError(f"{problem}: read_media_file returns files up to {cap} bytes (their base64 must fit "
                            "in one message); read text files with read_text_file") from None
        mime = mime_type(place.name) or OCTET_STREAM
        real = place.real
        if mime.startswith("image/"):
            block = content.image(data, mime)
        elif mime.startswith("audio/"):
            block = content.audio(data, mime)
        else:
            from .resources import path_uri

            block = content.embedded_resource(content.blob_contents(path_uri(policy.display(real)), data, mime))
        return ToolResult(content=[block], structured={"path": policy.display(real), "mimeType": mime, "size": len(data)})

    # ----------------------------------------------------------------------------- directories

    @server.tool(
        title="List a directory",
        input_schema=obj({
            "path": PATH,
            "sizes": {"type": "boolean", "default": False,
                      "description": "Also give each file's size and each entry's modification time (one stat per entry)"},
            "sortBy": {"type": "string", "enum": ["name", "size", "modified"], "default": "name",
                       "description": "name (A-Z), size (largest first) or modified (newest first); the last two imply sizes"},
            "includeHidden": {"type": "boolean", "default": True, "description": "Include names starting with '.'"},
            "maxEntries": count("Return at most this many entries"),
        }, ("path",)),
        output_schema=out({
            "path": {"type": "string"},
            "directories": big_array("names of subdirectories"),
            "files": big_array("names of regular files"),
            "others": {"type": "array", "description": "items: {name, type}: links, FIFOs, sockets, devices"},
            "sizes": {"type": "object", "description": "with sizes: file name -> size in bytes"},
            "modified": {"type": "object", "description": "with sizes: name -> modification time (UTC, ISO 8601)"},
            "totalSize": {"type": "integer", "description": "with sizes: bytes in the files listed"},
            "truncated": {"type": "boolean"},
        }, ("path", "directories", "files", "others", "truncated")),
        annotations=READ,
    )
    @guarded
    async def list_directory(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """List a directory: its subdirectories, files and other entries (links, special files) by
        name; with sizes (or a size/time sort), also each file's size, each entry's modification
        time and the total size. Names are in the requested order within each group."""
        policy, place = await directory(ctx, args)
        real = place.real
        cap = limit(args, "maxEntries", config.max_entries)
        sort_by = args.get("sortBy", "name")
        detailed = bool(args.get("sizes")) or sort_by != "name"
        hidden = args.get("includeHidden", True)
        # Without details no entry is stat'ed: names and types come from the directory listing
        # itself (d_type), which is what keeps a listing of thousands of entries cheap.
        directories: list[str] = []
        files: list[str] = []
        others: list[tuple[str, str]] = []
        status_of: dict[str, os.stat_result] = {}
        read = 0
        incomplete = False
        with anchored.directory(place) as fd, os.scandir(fd) as found:
            while chunk := list(itertools.islice(found, 4096)):
                await anyio.sleep(0)  # a checkpoint per chunk: a huge directory stays cancellable
                if len(chunk) > config.max_entries_limit - read:
                    # Memory is bounded before sorting: names past the limit are not even kept.
                    chunk = chunk[: config.max_entries_limit - read]
                    incomplete = True
                read += len(chunk)
                for entry in chunk:
                    name = entry.name
                    if not hidden and name.startswith("."):
                        continue
                    if detailed:
                        try:
                            status_of[name] = entry.stat(follow_symlinks=False)
                        except OSError:
                            continue
                    # Files first: most entries are files, and each test is a call.
                    if entry.is_file(follow_symlinks=False):
                        files.append(name)
                    elif entry.is_dir(follow_symlinks=False):
                        directories.append(name)
                    else:
                        others.append((name, "symlink" if entry.is_symlink() else "other"))
                if incomplete:
                    break
        order = _order(sort_by, status_of)
        directories.sort(key=order)
        files.sort(key=order)
        others.sort(key=None if order is None else lambda item: order(item[0]))
        total = len(directories) + len(files) + len(others)
        # A name appears in the structured lists and the text, and with details also as a key of
        # sizes and of modified.
        copies, extra = (4, 100) if detailed else (2, 24)
        names = itertools.chain(directories, files, (name for name, _ in others))
        # Names are at most 255 bytes (6 * 255 as JSON escapes): below that bound nothing can be
        # over budget, so don't count.
        if total * (copies * 6 * 255 + extra) > config.max_result_bytes and (
            sum(map(weight, names)) * copies + extra * total > config.max_result_bytes
        ):
            budget = Budget(config.max_result_bytes)
            names = itertools.chain(directories, files, (name for name, _ in others))
            cap = min(cap, next(i for i, name in enumerate(names) if not budget.take(copies * weight(name) + extra)))
        truncated = total > cap or incomplete
        if total > cap:  # keep the first cap entries: directories, then files, then the others
            directories = directories[:cap]
            files = files[: cap - len(directories)]
            others = others[: cap - len(directories) - len(files)]
        data: dict[str, Any] = {
            "path": policy.display(real), "directories": directories, "files": files,
            "others": [{"name": name, "type": kind} for name, kind in others], "truncated": truncated,
        }
        # The text is `ls -F` style: "name/" for a directory, "name@" for a link, plain for a file.
        lines = [name + "/" for name in directories]
        summary = f"\n{len(files)} files, {len(directories)} directories, {len(others)} others"
        if detailed:
            sizes = {name: status_of[name].st_size for name in files}
            data["sizes"] = sizes
            kept = itertools.chain(directories, files, (name for name, _ in others))
            data["modified"] = {name: _iso(status_of[name].st_mtime) for name in kept}
            data["totalSize"] = sum(sizes.values())
            lines += [f"{name}  ({sizes[name]} bytes)" for name in files]
            summary += f", {data['totalSize']} bytes in files"
        else:
            lines += files
        lines += [name + ("@" if kind == "symlink" else "?") for name, kind in others]
        if incomplete:
            summary += (f" (the first {min(cap, total)} of the first {total} entries read; the directory holds more "
                        f"than {config.max_entries_limit}: list it with search_files and a pattern)")
        elif truncated:
            summary += f" (the first {cap} of {total} entries)"
        lines.append(summary)
        return result("\n".join(lines), data)

    @server.tool(
        title="Directory tree",
        input_schema=obj({
            "path": PATH,
            "maxDepth": count("Levels to descend (1 = only the directory's own entries)"),
            "excludePatterns": EXCLUDES,
            "maxEntries": count("Stop after this many entries"),
        }, ("path",)),
        output_schema=out({
            "path": {"type": "string"}, "tree": big_array("{name, type, children?}, nested"), "entries": {"type": "integer"},
            "truncated": {"type": "boolean"},
        }, ("path", "tree", "entries", "truncated")),
        annotations=READ,
    )
    @guarded
    async def directory_tree(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """The tree below a directory as nested {name, type, children} entries (links are shown,
        never followed), with a depth limit, exclude patterns and an entry cap."""
        policy, place = await directory(ctx, args)
        cap = limit(args, "maxEntries", config.max_entries)
        exclude = Excluder(args.get("excludePatterns", ()))
        pacer = Pacer(ctx, "entries walked")
        tree: list[dict[str, Any]] = []
        stack: list[list[dict[str, Any]]] = [tree]
        lines: list[str] = []
        truncated = False
        budget = Budget(config.max_result_bytes)
        with anchored.directory(place) as fd:
            for entry in walk(fd, max_depth=depth(args), exclude=exclude):
                await pacer.step()
                # A node weighs its name twice (structured and text) plus the JSON around it.
                if pacer.count > cap or not budget.take(2 * weight(entry.name) + 2 * entry.depth + 36):
                    truncated = True
                    break
                del stack[entry.depth:]
                node: dict[str, Any] = {"name": entry.name, "type": entry.kind}
                stack[-1].append(node)
                if entry.kind == "directory":
                    node["children"] = []
                    stack.append(node["children"])
                    lines.append("  " * (entry.depth - 1) + entry.name + "/")
                else:
                    lines.append("  " * (entry.depth - 1) + entry.name + ("@" if entry.kind == "symlink" else ""))
        entries = pacer.count - 1 if truncated else pacer.count
        if truncated:
            lines.append(f"[truncated after {entries} entries (entry or size cap); lower maxDepth, add "
                         "excludePatterns or list a subdirectory]")
        return result("\n".join(lines) or "(empty)",
                      {"path": policy.display(place), "tree": tree, "entries": entries, "truncated": truncated})

    # ---------------------------------------------------------------------------------- search

    @server.tool(
        title="Find files by name",
        input_schema=obj({
            "path": PATH,
            "pattern": {"type": "string", "minLength": 1, "maxLength": MAX_PATTERN_CHARS, "description":
                        "Glob: '*.py' matches names at any depth; 'src/**/test_*.py' matches paths relative to path"},
            "excludePatterns": EXCLUDES,
            "maxResults": count("Stop after this many matches"),
        }, ("path", "pattern")),
        output_schema=out({"matches": big_array("absolute paths"), "truncated": {"type": "boolean"}},
                          ("matches", "truncated")),
        annotations=READ,
    )
    @guarded
    async def search_files(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Find files and directories whose names match a glob pattern (names only; to search inside
        files use search_content)."""
        policy, place = await directory(ctx, args)
        shown = policy.display(place)
        found, truncated = await search_names(
            place, len(shown), compile_glob(args["pattern"]), exclude=Excluder(args.get("excludePatterns", ())),
            max_depth=config.max_depth, max_results=limit(args, "maxResults", 1000),
            max_bytes=config.max_result_bytes, pacer=Pacer(ctx, "entries searched"),
        )
        matches = [_join(shown, relative) for relative, _ in found]
        text = "\n".join(matches) if matches else "No matches found"
        if truncated:
            text += "\n[more matches exist; raise maxResults or narrow the pattern]"
        return result(text, {"matches": matches, "truncated": truncated})

    @server.tool(
        title="Search file contents",
        input_schema=obj({
            "path": PATH,
            "query": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Text or regular expression"},
            "regex": {"type": "boolean", "default": False, "description": "Treat query as a Python regular expression"},
            "caseSensitive": {"type": "boolean", "default": False},
            "contextLines": count("Lines of context before and after each match", minimum=0, maximum=10),
            "include": string_list("Only files matching one of these globs ('*.py')", max_length=1000),
            "excludePatterns": EXCLUDES,
            "maxResults": count("Stop after this many matching lines"),
        }, ("path", "query")),
        output_schema=out({
            "matches": big_array("{path, line, text, before?, after?}"),
            "filesSearched": {"type": "integer"}, "filesMatched": {"type": "integer"},
            "skippedBinary": {"type": "integer"}, "skippedLarge": {"type": "integer"},
            "truncated": {"type": "boolean"},
        }, ("matches", "truncated")),
        annotations=READ,
    )
    @guarded
    async def search_content(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Search inside text files for a string or regular expression; returns matching lines with
        optional context. Binary files and files over the size cap are skipped (and counted)."""
        policy, place = await directory(ctx, args)
        shown = policy.display(place)
        regex = bool(args.get("regex"))
        pattern = compile_query(args["query"], regex=regex, case_sensitive=bool(args.get("caseSensitive")))
        include, exclude = tuple(args.get("include", ())), tuple(args.get("excludePatterns", ()))
        for patterns in (include, exclude):
            Excluder(patterns)  # a bad pattern is refused here (ValueError: a tool error), before any work
        request = GrepRequest(
            pattern.pattern, pattern.flags, include, exclude, context=int(args.get("contextLines", 0)),
            max_depth=config.max_depth, max_results=limit(args, "maxResults", 100),
            max_file_bytes=config.max_search_file_bytes, max_bytes=config.max_result_bytes, shown_length=len(shown),
        )
        try:
            found = await search_contents(place, request, regex=regex, pacer=Pacer(ctx, "entries searched"),
                                          timeout=config.search_timeout, workers=workers)
        except SearchTimeout as problem:
            raise ToolError(str(problem)) from None
        for match in found.matches:
            match["path"] = _join(shown, match["path"])
        lines: list[str] = []
        for match in found.matches:
            for offset, before in enumerate(match.get("before", ())):
                lines.append(f"{match['path']}-{match['line'] - len(match['before']) + offset}-{before}")
            lines.append(f"{match['path']}:{match['line']}:{match['text']}")
            for offset, after in enumerate(match.get("after", ())):
                lines.append(f"{match['path']}-{match['line'] + 1 + offset}-{after}")
        summary = (f"{len(found.matches)} matching lines in {found.files_matched} of {found.files_searched} files searched"
                   f"; skipped {found.skipped_binary} binary and {found.skipped_large} large files")
        if found.truncated:
            summary += "; stopped at maxResults"
        lines.append(summary)
        return result("\n".join(lines), {
            "matches": found.matches, "filesSearched": found.files_searched, "filesMatched": found.files_matched,
            "skippedBinary": found.skipped_binary, "skippedLarge": found.skipped_large, "truncated": found.truncated,
        })

    # ------------------------------------------------------------------------------------ info

    @server.tool(
        title="File information",
        input_schema=obj({"path": PATH}, ("path",)),
        output_schema=out({
            "path": {"type": "string"}, "type": {"type": "string"}, "size": {"type": "integer"},
            "created": {"type": "string"}, "modified": {"type": "string"}, "accessed": {"type": "string"},
            "permissions": {"type": "string"}, "mimeType": {"type": "string"},
        }, ("path", "type", "size", "modified", "permissions")),
        annotations=READ,
    )
    @guarded
    async def get_file_info(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Metadata of a file or directory: type, size, times (UTC), permissions, MIME type."""
        policy = await access.policy_for(ctx)
        place = policy.resolve(args["path"])
        status = anchored.lstat(place)
        mode = status.st_mode
        kind = ("directory" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode)
                else "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device")
        data: dict[str, Any] = {
            "path": policy.display(place), "type": kind, "size": status.st_size,
            "modified": _iso(status.st_mtime), "accessed": _iso(status.st_atime),
            "permissions": oct(stat.S_IMODE(mode))[2:].zfill(3),
        }
        birth = getattr(status, "st_birthtime", None)
        if birth is not None:
            data["created"] = _iso(birth)
        if kind == "file":
            data["mimeType"] = mime_type(place.name) or OCTET_STREAM
        return result("\n".join(f"{key}: {value}" for key, value in data.items()), data)

    @server.tool(
        title="Allowed directories",
        output_schema=out({"directories": {"type": "array", "items": {"type": "string"}}}, ("directories",)),
        annotations=READ,
    )
    @guarded
    async def list_allowed_directories(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """The directories this server may access (narrowed by the client's roots, when it offers them)."""
        policy = await access.policy_for(ctx)
        shown = [root.shown for root in policy.roots]
        return result("Allowed directories:\n" + "\n".join(shown), {"directories": shown})
