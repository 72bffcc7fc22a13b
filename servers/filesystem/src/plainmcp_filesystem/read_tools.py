"""The tools that read files and describe them: always registered."""

from __future__ import annotations

import functools
import os
import stat
from datetime import UTC, datetime
from typing import Any

import anyio
from plainmcp import Context, ToolError, ToolResult, content

from . import anchored
from .mime import OCTET_STREAM, mime_type
from .paths import AccessError
from .reading import check_encoding, fit_text, read_bytes, read_text
from .toolkit import PATH, READ, ToolFamily, ToolSpec, count, media_limit, obj, out, result, string_list


def iso(timestamp: float) -> str:
    """A UTC time in ISO 8601, to the second."""
    return _iso_seconds(int(timestamp))


@functools.lru_cache(maxsize=4096)
def _iso_seconds(seconds: int) -> str:
    # Cached: the files of a directory mostly share a handful of mtimes, and formatting dominated
    # the listing of large directories.
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


READ_TEXT_FILE = ToolSpec(
    title="Read a text file",
    input_schema=obj({
        "path": PATH,
        "head": count("First N lines"),
        "tail": count("Last N lines"),
        "startLine": count("1-based, inclusive"),
        "endLine": count(),
        # Names longer than 64 characters are refused by check_encoding.
        "encoding": {"type": "string", "default": "utf-8"},
    }, ("path",)),
    output_schema=out({
        "path": {"type": "string"}, "content": {"type": "string"}, "size": {"type": "integer"},
        "truncated": {"type": "boolean"}, "encodingErrors": {"type": "boolean"},
        "startLine": {"type": "integer"}, "endLine": {"type": "integer"},
    }, ("path", "content", "size", "truncated")),
    annotations=READ,
)

READ_MULTIPLE_FILES = ToolSpec(
    title="Read several files",
    input_schema=obj({"paths": {**string_list(max_items=50), "minItems": 1}}, ("paths",)),
    output_schema=out({"files": {"type": "array", "items": out({
        "path": {"type": "string"}, "content": {"type": "string"}, "truncated": {"type": "boolean"},
        "error": {"type": "string"},
    }, ("path",))}}, ("files",)),
    annotations=READ,
)

READ_MEDIA_FILE = ToolSpec(
    title="Read an image or audio file",
    input_schema=obj({"path": PATH}, ("path",)),
    output_schema=out({"path": {"type": "string"}, "mimeType": {"type": "string"}, "size": {"type": "integer"}},
                      ("path", "mimeType", "size")),
    annotations=READ,
)

GET_FILE_INFO = ToolSpec(
    title="File information",
    input_schema=obj({"path": PATH}, ("path",)),
    output_schema=out({
        "path": {"type": "string"}, "type": {"type": "string"}, "size": {"type": "integer"},
        "created": {"type": "string"}, "modified": {"type": "string"}, "accessed": {"type": "string"},
        "permissions": {"type": "string"}, "mimeType": {"type": "string"},
    }, ("path", "type", "size", "modified", "permissions")),
    annotations=READ,
)

LIST_ALLOWED_DIRECTORIES = ToolSpec(
    title="Allowed directories",
    input_schema=None,
    output_schema=out({"directories": {"type": "array", "items": {"type": "string"}}}, ("directories",)),
    annotations=READ,
)


def _one_range(args: dict[str, Any]) -> None:
    """Refuse more than one of head, tail and a line range, and a range that ends before it starts."""
    ranges = [k for k in ("head", "tail") if k in args] + (["a line range"] if {"startLine", "endLine"} & set(args) else [])
    if len(ranges) > 1:
        raise ToolError(f"Give only one of head, tail or startLine/endLine (got {', '.join(ranges)})")
    if args.get("startLine", 1) > args.get("endLine", float("inf")):
        raise ToolError("startLine is after endLine")


class FileTools(ToolFamily):
    """Reading files, and what the server may access."""

    async def read_text_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read a text file, whole or part: head, tail, or startLine-endLine. Output is capped; a cut
        result says how to read the rest. Images and binaries: read_media_file."""
        _one_range(args)
        try:
            encoding = check_encoding(args.get("encoding", "utf-8"))
        except LookupError:
            raise ToolError(f"Unknown encoding: {args.get('encoding')!r}") from None
        config = self.config
        policy = await self.access.policy_for(ctx)
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

    async def read_multiple_files(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read several text files in one call; a file that fails says why and the others are still read."""
        policy = await self.access.policy_for(ctx)
        files: list[dict[str, Any]] = []
        parts: list[str] = []
        # One budget for all the files (each goes out twice): fifty 1 MiB files would otherwise
        # outgrow the message limit and fail as a whole.
        left = self.config.max_result_bytes // 2 - 4096
        for path in args["paths"]:
            try:
                place = policy.resolve(path)
                read = read_text(place, max_bytes=min(self.config.max_read_bytes, max(left, 0)))
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

    async def read_media_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read an image or audio file as an image/audio block; other binary files as an embedded resource."""
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"])
        cap = media_limit(self.config)
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

    async def get_file_info(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Metadata of a file or directory: type, size, times, permissions, MIME type."""
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"])
        status = anchored.lstat(place)
        mode = status.st_mode
        kind = ("directory" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode)
                else "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device")
        data: dict[str, Any] = {
            "path": policy.display(place), "type": kind, "size": status.st_size,
            "modified": iso(status.st_mtime), "accessed": iso(status.st_atime),
            "permissions": oct(stat.S_IMODE(mode))[2:].zfill(3),
        }
        birth = getattr(status, "st_birthtime", None)
        if birth is not None:
            data["created"] = iso(birth)
        if kind == "file":
            data["mimeType"] = mime_type(place.name) or OCTET_STREAM
        return result("\n".join(f"{key}: {value}" for key, value in data.items()), data)

    async def list_allowed_directories(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """The directories this server may access."""
        policy = await self.access.policy_for(ctx)
        shown = [root.shown for root in policy.roots]
        return result("Allowed directories:\n" + "\n".join(shown), {"directories": shown})
