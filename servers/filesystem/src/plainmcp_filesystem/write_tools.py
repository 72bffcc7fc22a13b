"""The tools that change files: registered only with ``--allow-write`` (``delete_file`` also needs
``--allow-delete``). Tools that are not registered are not listed, and calling one is an unknown tool."""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
from plainmcp import UI_EXTENSION, Context, ToolError, ToolResult

from .editing import DiffTooLarge, EditOutcome, apply_edits, fenced, unified_diff
from .reading import read_bytes
from .toolkit import PATH, ToolFamily, ToolSpec, obj, out, result, writes
from .writing import append, atomic_write, copy, delete, make_directories, move

if TYPE_CHECKING:
    from .access import Access
    from .config import Config

#: ``await changed(real_paths, structural)``: what a write tool calls after it changed files
#: (``structural`` when names came or went), so subscribers hear of it.
Changed = Callable[[list[str], bool], Awaitable[None]]

#: The largest file edit_file changes: it holds the file, the new text and the diff in memory at once.
EDIT_MAX_BYTES = 8 * 1024 * 1024

#: What write_file and append_file write: text (UTF-8), or bytes as base64. Exactly one, checked in code.
_CONTENT = {"content": {"type": "string"}, "content_base64": {"type": "string"}}

WRITE_FILE = ToolSpec(
    title="Write a file",
    input_schema=obj({"path": PATH, **_CONTENT}, ("path",)),
    output_schema=out(
        {"path": {"type": "string"}, "created": {"type": "boolean"}, "bytes": {"type": "integer"}},
        ("path", "created", "bytes"),
    ),
    annotations=writes(destructive=True, idempotent=True),
)

APPEND_FILE = ToolSpec(
    title="Append to a file",
    input_schema=obj({"path": PATH, **_CONTENT}, ("path",)),
    output_schema=out(
        {
            "path": {"type": "string"},
            "created": {"type": "boolean"},
            "bytes": {"type": "integer"},
            "size": {"type": "integer", "description": "the file's size after"},
        },
        ("path", "created", "bytes", "size"),
    ),
    # Not destructive: nothing that was there is changed. Not idempotent: each call adds again.
    annotations=writes(destructive=False, idempotent=False),
)

EDIT_FILE = ToolSpec(
    title="Edit a file",
    input_schema=obj(
        {
            "path": PATH,
            "edits": {
                "type": "array",
                "minItems": 1,
                "maxItems": 100,
                "items": obj(
                    {
                        "oldText": {"type": "string", "minLength": 1},
                        "newText": {"type": "string"},
                        "replace_all": {"type": "boolean"},
                    },
                    ("oldText", "newText"),
                ),
            },
            "dryRun": {"type": "boolean", "description": "Diff only, no write"},
        },
        ("path", "edits"),
    ),
    output_schema=out(
        {
            "path": {"type": "string"},
            "diff": {"type": "string"},
            "applied": {"type": "boolean"},
            "notes": {"type": "array", "items": {"type": "string"}},
        },
        ("path", "diff", "applied"),
    ),
    annotations=writes(destructive=True, idempotent=False),
)

#: The MCP Apps view of edit_file's results (views/diff.html): the diff, and "apply" after a dry run.
DIFF_URI = "ui://plainmcp-filesystem/edit-diff.html"

EDIT_KEYS = frozenset(EDIT_FILE.input_schema["properties"]["edits"]["items"]["properties"])  # type: ignore[index]  # EDIT_FILE has a schema

CREATE_DIRECTORY = ToolSpec(
    title="Create a directory",
    input_schema=obj({"path": PATH}, ("path",)),
    output_schema=out({"path": {"type": "string"}, "created": {"type": "boolean"}}, ("path", "created")),
    annotations=writes(destructive=False, idempotent=True),
)

MOVE_FILE = ToolSpec(
    title="Move or rename",
    input_schema=obj({"source": PATH, "destination": PATH}, ("source", "destination")),
    output_schema=out({"source": {"type": "string"}, "destination": {"type": "string"}}, ("source", "destination")),
    # Not destructive: it refuses to replace anything, so no data is lost.
    annotations=writes(destructive=False, idempotent=False),
)

COPY_FILE = ToolSpec(
    title="Copy",
    input_schema=obj({"source": PATH, "destination": PATH}, ("source", "destination")),
    output_schema=out(
        {
            "source": {"type": "string"},
            "destination": {"type": "string"},
            "files": {"type": "integer"},
            "directories": {"type": "integer"},
            "bytes": {"type": "integer"},
            "skipped": {"type": "integer"},
        },
        ("source", "destination", "files", "directories", "bytes", "skipped"),
    ),
    annotations=writes(destructive=False, idempotent=False),
)

DELETE_FILE = ToolSpec(
    title="Delete",
    input_schema=obj(
        {
            "path": PATH,
            "recursive": {"type": "boolean"},
        },
        ("path",),
    ),
    output_schema=out({"path": {"type": "string"}, "deleted": {"type": "string"}}, ("path", "deleted")),
    annotations=writes(destructive=True, idempotent=True),
)


def payload(args: dict[str, Any]) -> bytes:
    """The bytes to write: ``content`` as UTF-8, or ``content_base64`` decoded (strictly: a stray
    character is an error, not silently dropped).

    Raises:
        ToolError: neither or both given, or base64 that does not decode.
    """
    if ("content" in args) == ("content_base64" in args):
        raise ToolError("Give exactly one of content (text) or content_base64 (bytes)")
    if "content" in args:
        return str(args["content"]).encode("utf-8", "surrogatepass")
    try:
        return base64.b64decode(str(args["content_base64"]), validate=True)
    except (binascii.Error, ValueError):
        raise ToolError("content_base64 is not valid base64") from None


def text_encoding(raw: bytes) -> tuple[bytes, str]:
    """The byte order mark a file starts with (kept apart, written back as it was) and the codec of the rest.

    UTF-8 (a UTF-8 BOM is text's first character ``\ufeff``, kept as it is) and UTF-16 with a BOM: both
    decode and encode back byte for byte, so an edit changes only the bytes of the places it replaces.

    Raises:
        ToolError: any other encoding (editing it as UTF-8 would rewrite its bytes).
    """
    if raw.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        raise ToolError("The file is UTF-32 text; edit_file changes UTF-8 and UTF-16 (with a BOM) files only")
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if raw.startswith(bom):
            try:
                raw[len(bom) :].decode(codec)
            except UnicodeDecodeError:
                break
            return bom, codec
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(
            "The file is not valid UTF-8 or UTF-16 text; edit_file changes only those (rewrite "
            "others whole with write_file)"
        ) from None
    return b"", "utf-8"


_BOMS = {codecs.BOM_UTF16_LE: "UTF-16LE", codecs.BOM_UTF16_BE: "UTF-16BE"}


def text_form(bom: bytes, text: str) -> dict[str, Any]:
    """What a diff does not show of a file's bytes: ``line_endings`` (``"LF"``, ``"CRLF"``, ``"mixed"``,
    ``"none"``) and ``bom`` (``"UTF-8"``, ``"UTF-16LE"``, ``"UTF-16BE"`` or None), both kept by an edit."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    endings = "none" if not crlf and not lf else "CRLF" if not lf else "LF" if not crlf else "mixed"
    named = _BOMS.get(bom) or ("UTF-8" if text.startswith("\ufeff") else None)
    return {"line_endings": endings, "bom": named}


def _edit_and_diff(before: str, edits: list[dict[str, Any]], name: str) -> tuple[EditOutcome, str]:
    """The edited text and its diff; a diff too large to show is left out, saying so in the notes."""
    outcome = apply_edits(before, edits)
    try:
        return outcome, unified_diff(before, outcome.text, name)
    except DiffTooLarge as problem:
        outcome.notes.append(f"The diff is not shown: {problem}; read the file to see the result")
        return outcome, ""


class WriteTools(ToolFamily):
    """Writing, editing, creating, moving, copying and deleting; each tells ``changed`` what it changed."""

    def __init__(self, config: Config, access: Access, changed: Changed) -> None:
        super().__init__(config, access)
        self.changed = changed

    async def write_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Create a file or replace its whole content (content as UTF-8, or bytes as content_base64),
        atomically; the parent must exist. To change part of a file use edit_file; to add, append_file."""
        data = payload(args)
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"], for_write=True, must_exist=False)
        created = atomic_write(place, data)
        await self.changed([place.real], created)
        shown = policy.display(place)
        verb = "Created" if created else "Replaced"
        return result(f"{verb} {shown} ({len(data)} bytes)", {"path": shown, "created": created, "bytes": len(data)})

    async def append_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Add content (or content_base64) at the end of a file, created if missing. Nothing already
        there changes; each call appends again. Include a trailing newline to end a line."""
        data = payload(args)
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"], for_write=True, must_exist=False)
        created, size = append(place, data)
        await self.changed([place.real], created)
        shown = policy.display(place)
        return result(
            f"Appended {len(data)} bytes to {shown} (now {size} bytes)",
            {"path": shown, "created": created, "bytes": len(data), "size": size},
        )

    async def edit_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Replace text in a file: each oldText must match exactly one place (or set replace_all); else the
        error shows where, or the nearest candidates. Edits apply in order, all or none; returns a diff.
        Other bytes (line endings, BOM) are kept."""
        for number, edit in enumerate(args["edits"], start=1):
            unknown = sorted(set(edit) - EDIT_KEYS)
            if unknown:
                raise ToolError(
                    f"Edit {number}: unknown key {', '.join(map(repr, unknown))}; an edit takes "
                    f"{', '.join(sorted(EDIT_KEYS))}"
                )
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"], for_write=True)
        raw = read_bytes(place, max_bytes=EDIT_MAX_BYTES)
        bom, codec = text_encoding(raw)
        before = raw[len(bom) :].decode(codec)
        shown = policy.display(place)
        # Matching and diffing megabytes of text is pure Python that can take seconds: in a worker
        # thread, the interpreter switches back to the event loop every few milliseconds.
        outcome, diff = await anyio.to_thread.run_sync(_edit_and_diff, before, args["edits"], shown.lstrip("/"))
        dry = bool(args.get("dryRun"))
        if not dry and outcome.text != before:
            atomic_write(place, bom + outcome.text.encode(codec))
            await self.changed([place.real], False)
        notes = "\n".join(outcome.notes)
        head = "Dry run: nothing written.\n" if dry else ""
        unchanged = outcome.text == before
        text = head + (notes + "\n" if notes else "") + (fenced(diff) if diff else "No changes." if unchanged else "")
        found = {"path": shown, "diff": diff, "applied": not dry and outcome.text != before, "notes": outcome.notes}
        if ctx.client_extension(UI_EXTENSION) is not None:
            found.update(text_form(bom, before))  # the diff view names them; the diff has LF only
        return result(text, found)

    async def create_directory(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Create a directory and its parents; fine if it exists."""
        policy = await self.access.policy_for(ctx)
        place = policy.resolve(args["path"], must_exist=False)
        created = make_directories(place)
        if created:
            await self.changed([place.real], True)
        shown = policy.display(place)
        return result(f"{'Created' if created else 'Already exists:'} {shown}", {"path": shown, "created": created})

    async def move_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Move or rename a file or directory; never replaces an existing destination."""
        policy = await self.access.policy_for(ctx)
        source = policy.resolve_entry(args["source"])
        destination = policy.resolve_entry(args["destination"], must_exist=False)
        move(source, destination)
        await self.changed([source.real, destination.real], True)
        data = {"source": policy.display(source), "destination": policy.display(destination)}
        return result(f"Moved {data['source']} to {data['destination']}", data)

    async def copy_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Copy a file or a directory tree (links skipped); never replaces an existing destination."""
        policy = await self.access.policy_for(ctx)
        source = policy.resolve(args["source"])
        destination = policy.resolve_entry(args["destination"], must_exist=False)
        # A tree of many thousand entries takes a while: a worker thread keeps the event loop
        # serving, and a cancelled call stops between entries.
        counts = await anyio.to_thread.run_sync(
            functools.partial(
                copy,
                source,
                destination,
                max_entries=self.config.max_entries_limit,
                check=anyio.from_thread.check_cancelled,
            )
        )
        await self.changed([destination.real], True)
        data = {"source": policy.display(source), "destination": policy.display(destination), **counts}
        skipped = f", skipped {counts['skipped']} links or special files" if counts["skipped"] else ""
        return result(
            f"Copied {data['source']} to {data['destination']}: {counts['files']} files, "
            f"{counts['bytes']} bytes{skipped}",
            data,
        )

    async def delete_file(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """Delete a file, a link (not its target) or an empty directory; recursive for a full one.
        Cannot be undone."""
        policy = await self.access.policy_for(ctx)
        place = policy.resolve_entry(args["path"])
        remove = functools.partial(
            delete, place, recursive=bool(args.get("recursive")), check=anyio.from_thread.check_cancelled
        )
        kind = await anyio.to_thread.run_sync(remove)
        await self.changed([place.real], True)
        shown = policy.display(place)
        return result(f"Deleted {kind} {shown}", {"path": shown, "deleted": kind})
