"""The tools that only read: always registered."""

from __future__ import annotations

import functools
import os
import stat
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from plainmcp import ToolError, ToolResult, content

from .access import Access
from .globs import Excluder, compile_glob
from .mime import OCTET_STREAM, mime_type
from .paths import AccessError, AccessPolicy
from .reading import check_encoding, read_bytes, read_text
from .search import compile_query, search_contents, search_names
from .toolkit import EXCLUDES, PATH, READ, Budget, big_array, count, guarded, obj, out, result, string_list
from .walk import Pacer, entry_kind, walk

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


def _join(shown: str, relative: str) -> str:
    return os.path.join(shown, *relative.split("/")) if relative else shown


def register(server: Server, config: Config, access: Access) -> None:
    def limit(args: dict[str, Any], key: str, default: int) -> int:
        return min(int(args.get(key, default)), config.max_entries_limit)

    def depth(args: dict[str, Any]) -> int:
        return min(int(args.get("maxDepth", config.max_depth)), config.max_depth)

    async def directory(ctx: Context, args: dict[str, Any], key: str = "path") -> tuple[AccessPolicy, str]:
        policy = await access.policy_for(ctx)
        real = policy.resolve(args[key])
        if not os.path.isdir(real):
            raise ToolError("Not a directory")
        return policy, real

    # ------------------------------------------------------------------------------ text files

    @server.tool(
        title="Read a text file",
        input_schema=obj({
            "path": PATH,
            "head": count("Only the first N lines"),
            "tail": count("Only the last N lines"),
            "startLine": count("First line to return (1-based, inclusive)"),
            "endLine": count("Last line to return (1-based, inclusive)"),
            "encoding": {"type": "string", "default": "utf-8", "description": "Text encoding (a Python codec name)"},
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
        real = policy.resolve(args["path"])
        read = read_text(
            policy, real, max_bytes=config.max_read_bytes, head=args.get("head"), tail=args.get("tail"),
            start_line=args.get("startLine"), end_line=args.get("endLine"), encoding=encoding,
        )
        data: dict[str, Any] = {
            "path": policy.display(real), "content": read.text, "size": read.size,
            "truncated": read.truncated, "encodingErrors": read.replaced,
        }
        if read.start_line is not None:
            data["startLine"] = read.start_line
        if read.end_line is not None:
            data["endLine"] = read.end_line
        text = read.text
        if read.replaced:
            text += f"\n[note: bytes that are not valid {encoding} are shown as U+FFFD]"
        if read.truncated:
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
        for path in args["paths"]:
            try:
                real = policy.resolve(path)
                read = read_text(policy, real, max_bytes=config.max_read_bytes)
            except (AccessError, OSError) as problem:
                message = str(problem) if isinstance(problem, AccessError) else os.strerror(problem.errno or 5)
                files.append({"path": policy.echo(path), "error": message})
                parts.append(f"{policy.echo(path)}: Error - {message}")
                continue
            files.append({"path": policy.display(real), "content": read.text, "truncated": read.truncated})
            notice = f"\n[truncated at {config.max_read_bytes} bytes of {read.size}]" if read.truncated else ""
            parts.append(f"{policy.display(real)}:\n{read.text}{notice}")
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
        real = policy.resolve(args["path"])
        data = read_bytes(policy, real, max_bytes=config.max_media_bytes)
        mime = mime_type(real) or OCTET_STREAM
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
            "sortBy": {"type": "string", "enum": ["name", "size", "modified"], "default": "name",
                       "description": "name (A-Z), size (largest first) or modified (newest first)"},
            "includeHidden": {"type": "boolean", "default": True, "description": "Include names starting with '.'"},
            "maxEntries": count("Return at most this many entries"),
        }, ("path",)),
        output_schema=out({
            "path": {"type": "string"},
            "entries": big_array("{name, type, modified, size (files only)}"),
            "files": {"type": "integer"}, "directories": {"type": "integer"}, "totalSize": {"type": "integer"},
            "truncated": {"type": "boolean"},
        }, ("path", "entries", "truncated")),
        annotations=READ,
    )
    @guarded
    async def list_directory(ctx: Context, args: dict[str, Any]) -> ToolResult:
        """List a directory's entries with their type, size and modification time."""
        policy, real = await directory(ctx, args)
        cap = limit(args, "maxEntries", config.max_entries)
        pacer = Pacer(ctx, "entries listed")
        rows: list[tuple[str, str, int, float]] = []
        with os.scandir(real) as found:
            for entry in found:
                await pacer.step()
                if not args.get("includeHidden", True) and entry.name.startswith("."):
                    continue
                try:
                    status = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                kind = entry_kind(entry)
                # A directory's st_size is a file-system detail, not a size anyone means.
                rows.append((entry.name, kind, status.st_size if kind == "file" else 0, status.st_mtime))
        sort_by = args.get("sortBy", "name")
        if sort_by == "size":
            rows.sort(key=lambda r: (-r[2], r[0]))
        elif sort_by == "modified":
            rows.sort(key=lambda r: (-r[3], r[0]))
        else:
            rows.sort()
        budget = Budget(config.max_result_bytes)
        fits = next((i for i, row in enumerate(rows) if not budget.take(2 * len(row[0]) + 100)), len(rows))
        cap = min(cap, fits)
        truncated = len(rows) > cap
        files = sum(1 for r in rows if r[1] != "directory")
        total = sum(r[2] for r in rows if r[1] == "file")
        shown = rows[:cap]
        entries = [{"name": n, "type": k, "modified": _iso(m), **({"size": s} if k == "file" else {})}
                   for n, k, s, m in shown]
        lines = [f"[{'DIR' if k == 'directory' else 'FILE' if k == 'file' else k.upper()}] {n}"
                 + (f"  ({s} bytes)" if k == "file" else "") for n, k, s, _ in shown]
        lines.append(f"\n{files} files, {len(rows) - files} directories, {total} bytes in files"
                     + (f"; showing the first {cap} entries" if truncated else ""))
        data = {"path": policy.display(real), "entries": entries, "files": files,
                "directories": len(rows) - files, "totalSize": total, "truncated": truncated}
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
        policy, real = await directory(ctx, args)
        cap = limit(args, "maxEntries", config.max_entries)
        exclude = Excluder(args.get("excludePatterns", ()))
        pacer = Pacer(ctx, "entries walked")
        tree: list[dict[str, Any]] = []
        stack: list[list[dict[str, Any]]] = [tree]
        lines: list[str] = []
        truncated = False
        budget = Budget(config.max_result_bytes)
        for entry in walk(real, max_depth=depth(args), exclude=exclude):
            await pacer.step()
            # A node weighs its name twice (structured and text) plus the JSON around it.
            if pacer.count > cap or not budget.take(2 * len(entry.name) + 2 * entry.depth + 36):
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
                      {"path": policy.display(real), "tree": tree, "entries": entries, "truncated": truncated})

    # ---------------------------------------------------------------------------------- search

    @server.tool(
        title="Find files by name",
        input_schema=obj({
            "path": PATH,
            "pattern": {"type": "string", "minLength": 1, "description":
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
        policy, real = await directory(ctx, args)
        shown = policy.display(real)
        found, truncated = await search_names(
            real, compile_glob(args["pattern"]), exclude=Excluder(args.get("excludePatterns", ())),
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
            "include": string_list("Only files matching one of these globs ('*.py')"),
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
        policy, real = await directory(ctx, args)
        shown = policy.display(real)
        pattern = compile_query(args["query"], regex=bool(args.get("regex")), case_sensitive=bool(args.get("caseSensitive")))
        found = await search_contents(
            real, pattern, include=Excluder(args.get("include", ())), exclude=Excluder(args.get("excludePatterns", ())),
            context=int(args.get("contextLines", 0)), max_depth=config.max_depth,
            max_results=limit(args, "maxResults", 100), max_file_bytes=config.max_search_file_bytes,
            max_bytes=config.max_result_bytes, pacer=Pacer(ctx, "entries searched"),
        )
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
        real = policy.resolve(args["path"])
        status = os.lstat(real)
        mode = status.st_mode
        kind = ("directory" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode)
                else "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device")
        data: dict[str, Any] = {
            "path": policy.display(real), "type": kind, "size": status.st_size,
            "modified": _iso(status.st_mtime), "accessed": _iso(status.st_atime),
            "permissions": oct(stat.S_IMODE(mode))[2:].zfill(3),
        }
        birth = getattr(status, "st_birthtime", None)
        if birth is not None:
            data["created"] = _iso(birth)
        if kind == "file":
            data["mimeType"] = mime_type(real) or OCTET_STREAM
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
