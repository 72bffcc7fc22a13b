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
from .anchored import Place
from .mime import OCTET_STREAM, mime_type
from .names import wire_path
from .paging import Page
from .paths import AccessError, AccessPolicy
from .reading import check_encoding, fit_text, json_weight, read_bytes, read_part
from .toolkit import PATH, READ, ToolFamily, ToolSpec, count, media_limit, obj, out, result, string_list


def iso(timestamp: float) -> str:
    """A UTC time in ISO 8601, to the second."""
    return _iso_seconds(int(timestamp))


@functools.lru_cache(maxsize=4096)
def _iso_seconds(seconds: int) -> str:
    # Cached: the files of a directory mostly share a handful of mtimes, and formatting dominated
    # the listing of large directories.
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


#: The arguments that choose a part of a file, shared by read_text_file and read_multiple_files.
#: Their meaning is said once, in the tools' descriptions (each word in the schema costs every turn).
_HEAD_TAIL = {"head": count(), "tail": count()}

READ_TEXT_FILE = ToolSpec(
    title="Read a text file",
    input_schema=obj(
        {
            "path": PATH,
            **_HEAD_TAIL,
            "startLine": count("1-based"),
            "endLine": count(),
            "offset": count(minimum=0),
            "length": count(),
            "cursor": {"type": "string"},
            # Names longer than 64 characters are refused by check_encoding.
            "encoding": {"type": "string", "default": "utf-8"},
        },
        ("path",),
    ),
    output_schema=out(
        {
            "path": {"type": "string"},
            "content": {"type": "string"},
            "size": {"type": "integer"},
            "truncated": {"type": "boolean", "description": "more of what was asked is left: see nextCursor"},
            "encodingErrors": {"type": "boolean"},
            "startLine": {"type": "integer"},
            "endLine": {"type": "integer"},
            "offset": {"type": "integer", "description": "byte offset of the first byte shown"},
            "nextCursor": {"type": "string", "description": "pass as cursor to read on"},
            "tailContent": {"type": "string", "description": "with head and tail: the tail (content is the head)"},
            "omittedBytes": {"type": "integer", "description": "with head and tail: bytes between them, not read"},
        },
        ("path", "content", "size", "truncated"),
    ),
    annotations=READ,
)

READ_MULTIPLE_FILES = ToolSpec(
    title="Read several files",
    input_schema=obj({"paths": {**string_list(max_items=50), "minItems": 1}, **_HEAD_TAIL}, ("paths",)),
    output_schema=out(
        {
            "files": {
                "type": "array",
                "items": out(
                    {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                        "truncated": {"type": "boolean"},
                        "nextCursor": {"type": "string", "description": "read on with read_text_file's cursor"},
                        "tailContent": {"type": "string"},
                        "error": {"type": "string"},
                    },
                    ("path",),
                ),
            }
        },
        ("files",),
    ),
    annotations=READ,
)

READ_MEDIA_FILE = ToolSpec(
    title="Read an image or audio file",
    input_schema=obj({"path": PATH}, ("path",)),
    output_schema=out(
        {"path": {"type": "string"}, "mimeType": {"type": "string"}, "size": {"type": "integer"}},
        ("path", "mimeType", "size"),
    ),
    annotations=READ,
)

GET_FILE_INFO = ToolSpec(
    title="File information",
    input_schema=obj({"path": PATH}, ("path",)),
    output_schema=out(
        {
            "path": {"type": "string"},
            "type": {"type": "string"},
            "size": {"type": "integer"},
            "created": {"type": "string"},
            "modified": {"type": "string"},
            "accessed": {"type": "string"},
            "permissions": {"type": "string"},
            "mimeType": {"type": "string"},
        },
        ("path", "type", "size", "modified", "permissions"),
    ),
    annotations=READ,
)

LIST_ALLOWED_DIRECTORIES = ToolSpec(
    title="Allowed directories",
    input_schema=None,
    output_schema=out({"directories": {"type": "array", "items": {"type": "string"}}}, ("directories",)),
    annotations=READ,
)


def _one_range(args: dict[str, Any]) -> None:
    """Refuse parts that do not go together (head and tail do), and a range that ends before it starts."""
    asked = [
        name
        for name, keys in (
            ("head/tail", ("head", "tail")),
            ("startLine/endLine", ("startLine", "endLine")),
            ("offset/length", ("offset", "length")),
            ("cursor", ("cursor",)),
        )
        if any(key in args for key in keys)
    ]
    if len(asked) > 1:
        raise ToolError(
            f"Give only one of head/tail, startLine/endLine, offset/length or cursor (got {', '.join(asked)})"
        )
    if args.get("startLine", 1) > args.get("endLine", float("inf")):
        raise ToolError("startLine is after endLine")


def _encoding(args: dict[str, Any]) -> str:
    try:
        return check_encoding(args.get("encoding", "utf-8"))
    except LookupError:
        raise ToolError(f"Unknown encoding: {args.get('encoding')!r}") from None


def _shown(page: Page) -> str:
    """Where a page is in its file, for the notice of a cut result."""
    if page.first_line is not None and page.last_line is not None:
        return f"lines {page.first_line}-{page.last_line}"
    return f"bytes {page.offset}-{page.end}"


#: The revisions before resource_link blocks (2025-06-18 added them).
_BEFORE_LINKS = frozenset({"2024-11-05", "2025-03-26"})


class FileTools(ToolFamily):
    """Reading files, and what the server may access."""

    async def read_text_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read a text file, whole or part: head and/or tail lines, startLine-endLine (inclusive), or bytes
        offset/length. Capped at ~10k tokens: pass a cut result's nextCursor as cursor. Binaries: read_media_file."""
        _one_range(args)
        encoding = _encoding(args)
        config = self.config
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"])
        reading = functools.partial(read_part, place, args, budget=config.max_read_bytes, encoding=encoding)
        if args.get("startLine", 1) > 1:
            # Skipping lines reads the file up to them: gigabytes, for a far line of a huge file.
            # A worker thread keeps the event loop serving; check_cancelled stops it when cancelled.
            part = await anyio.to_thread.run_sync(functools.partial(reading, check=anyio.from_thread.check_cancelled))
        else:
            part = reading()
        page = part.page
        # The text goes out twice (content and structured): each copy gets half the message budget.
        shown_text, cut = fit_text(page.text, config.max_result_bytes // 2 - 4096)
        following = None if cut else page.next
        data: dict[str, Any] = {
            "path": policy.display(place),
            "content": shown_text,
            "size": part.size,
            "truncated": cut or following is not None or part.tail_cut,
            "encodingErrors": part.replaced,
            "offset": page.offset,
        }
        if page.first_line is not None:
            data["startLine"] = page.first_line
        if page.last_line is not None:
            data["endLine"] = page.last_line
        if following is not None:
            data["nextCursor"] = str(following)
        text = shown_text
        if part.tail is not None:
            data["tailContent"], data["omittedBytes"] = part.tail.text, part.omitted
            gap = f"[... {part.omitted} bytes not shown ...]\n" if part.omitted else ""
            text += ("" if not text or text.endswith("\n") else "\n") + gap + part.tail.text
        if part.replaced:
            text += f"\n[note: bytes that are not valid {encoding} are shown as U+FFFD]"
        if "\x00" in shown_text:
            text += "\n[note: this looks binary (NUL bytes): read_media_file returns it as it is]"
        if cut:
            text += (
                "\n[truncated: this text is mostly characters that need escaping (a binary file?); "
                "read it with read_media_file, or in smaller parts with offset/length]"
            )
        elif following is not None:
            text += (
                f"\n[truncated at {config.max_read_bytes} bytes: shown {_shown(page)} of a {part.size}-byte "
                f'file; read on with cursor "{following}"]'
            )
        elif part.tail_cut:
            text += f"\n[truncated: the last lines are longer than {config.max_read_bytes} bytes; shown the last bytes]"
        answer = result(text, data)
        if data["truncated"]:
            answer.content.extend(self.links(ctx, policy, [(place, part.size)]))
        return answer

    def links(self, ctx: Context, policy: AccessPolicy, files: list[tuple[Place, int]]) -> list[dict[str, Any]]:
        """``resource_link`` blocks to the ``file://`` resources of files a result could not hold whole:
        the client may fetch one with ``resources/read``. Only for files ``resources/read`` returns
        whole (up to :func:`media_limit`), and only to clients of 2025-06-18 or later (older ones
        know no such block)."""
        if ctx.version in _BEFORE_LINKS:
            return []
        from .resources import path_uri

        cap = media_limit(self.config)
        return [
            content.resource_link(
                path_uri(policy.display(place.real)),
                place.name,
                size=size,
                mime_type=mime_type(place.name) or "text/plain",
            )
            for place, size in files
            if size <= cap
        ]

    async def read_multiple_files(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read several text files at once (head/tail lines of each); a failing file says why. One output
        cap for all: read on a cut file with read_text_file."""
        policy = await self.access.policy_for(ctx)
        files: list[dict[str, Any]] = []
        parts: list[str] = []
        want: dict[str, Any] = {key: args[key] for key in ("head", "tail") if key in args}
        cut_files: list[tuple[Place, int]] = []
        # One budget of text for all the files: fifty large files read at once stay within one result.
        # And the room their JSON takes in the message (each goes out twice): escapes weigh more.
        left, room = self.config.max_read_bytes, self.config.max_result_bytes // 2 - 4096
        for path in args["paths"]:
            try:
                place = policy.resolve(path)
                part = read_part(place, want, budget=max(left, 0), encoding="utf-8")
            except (AccessError, OSError) as problem:
                message = str(problem) if isinstance(problem, AccessError) else os.strerror(problem.errno or 5)
                files.append({"path": policy.echo(path), "error": message})
                parts.append(f"{policy.echo(path)}: Error - {message}")
                left -= 200
                continue
            page, shown = part.page, policy.display(place)
            text, cut = fit_text(page.text, max(room, 0))
            room -= json_weight(text) + 2 * len(shown) + 100
            left -= len(text.encode("utf-8", "surrogatepass"))
            entry: dict[str, Any] = {
                "path": shown,
                "content": text,
                "truncated": cut or page.next is not None or part.tail_cut,
            }
            body = text
            if part.tail is not None:
                entry["tailContent"] = part.tail.text
                left -= len(part.tail.text.encode("utf-8", "surrogatepass"))
                room -= json_weight(part.tail.text)
                body += (
                    ("" if not text or text.endswith("\n") else "\n")
                    + (f"[... {part.omitted} bytes not shown ...]\n" if part.omitted else "")
                    + part.tail.text
                )
            notice = ""
            if page.next is not None and not cut:
                entry["nextCursor"] = str(page.next)
                notice = (
                    f"\n[truncated: shown {_shown(page)} of a {part.size}-byte file; read on with "
                    f'read_text_file and cursor "{page.next}"]'
                )
            elif entry["truncated"]:
                notice = "\n[truncated: read it with read_text_file]"
            files.append(entry)
            parts.append(f"{shown}:\n{body}{notice}")
            if entry["truncated"]:
                cut_files.append((place, part.size))
        answer = result("\n---\n".join(parts), {"files": files})
        answer.content.extend(self.links(ctx, policy, cut_files))
        return answer

    async def read_media_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Read an image or audio file as an image/audio block; other binary files as an embedded resource."""
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"])
        cap = media_limit(self.config)
        try:
            data = read_bytes(place, max_bytes=cap)
        except ValueError as problem:
            raise ToolError(
                f"{problem}: read_media_file returns files up to {cap} bytes (their base64 must fit "
                "in one message); read text files with read_text_file"
            ) from None
        mime = mime_type(place.name) or OCTET_STREAM
        real = place.real
        if mime.startswith("image/"):
            block = content.image(data, mime)
        elif mime.startswith("audio/"):
            block = content.audio(data, mime)
        else:
            from .resources import path_uri

            block = content.embedded_resource(content.blob_contents(path_uri(policy.display(real)), data, mime))
        return ToolResult(
            content=[block], structured={"path": policy.display(real), "mimeType": mime, "size": len(data)}
        )

    async def get_file_info(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Metadata of a file or directory: type, size, times, permissions, MIME type."""
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"])
        status = anchored.lstat(place)
        mode = status.st_mode
        kind = (
            "directory"
            if stat.S_ISDIR(mode)
            else "file"
            if stat.S_ISREG(mode)
            else "fifo"
            if stat.S_ISFIFO(mode)
            else "socket"
            if stat.S_ISSOCK(mode)
            else "device"
        )
        data: dict[str, Any] = {
            "path": policy.display(place),
            "type": kind,
            "size": status.st_size,
            "modified": iso(status.st_mtime),
            "accessed": iso(status.st_atime),
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
        shown = [wire_path(root.shown) for root in policy.roots]
        return result("Allowed directories:\n" + "\n".join(shown), {"directories": shown})
