"""The tools that show directories: a listing of one, and the tree below one. Always registered."""

from __future__ import annotations

import functools
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
from plainmcp import Context, ToolResult

from . import anchored
from .anchored import Place
from .dirsize import directory_sizes
from .gitignore import GitIgnore
from .globs import Excluder
from .names import labelled, wire_name
from .read_tools import iso
from .result_pages import fitting, more
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
    Budget,
    ToolFamily,
    ToolSpec,
    big_array,
    count,
    obj,
    out,
    result,
)
from .walk import Pacer, walk

LIST_DIRECTORY = ToolSpec(
    title="List a directory",
    input_schema=obj(
        {
            "path": PATH,
            # Both said in the description.
            "sizes": {"type": "boolean"},
            "dirSizes": {"type": "boolean"},
            "sortBy": {"type": "string", "enum": ["name", "size", "modified"], "default": "name"},
            "includeHidden": {"type": "boolean", "default": True},
            "gitignore": GITIGNORE,
            "maxEntries": count(),
            "cursor": CURSOR,
        },
        ("path",),
    ),
    output_schema=out(
        {
            "path": {"type": "string"},
            "directories": big_array("names of subdirectories"),
            "files": big_array("names of regular files"),
            "others": {"type": "array", "description": "items: {name, type}: links, FIFOs, sockets, devices"},
            "sizes": {"type": "object", "description": "with sizes: file name -> size in bytes"},
            "modified": {"type": "object", "description": "with sizes: name -> modification time (UTC, ISO 8601)"},
            "totalSize": {"type": "integer", "description": "with sizes: bytes in the files listed"},
            "directorySizes": {
                "type": "object",
                "description": "with dirSizes: directory name -> bytes of every file below",
            },
            "partialSizes": {
                "type": "array",
                "items": {"type": "string"},
                "description": "with dirSizes: directories too large to count whole (their size is a lower bound)",
            },
            "truncated": {"type": "boolean"},
            "nextCursor": NEXT_CURSOR,
            "skipped": SKIPPED,
        },
        ("path", "directories", "files", "others", "truncated"),
    ),
    annotations=READ,
)

DIRECTORY_TREE = ToolSpec(
    title="Directory tree",
    input_schema=obj(
        {
            "path": PATH,
            "maxDepth": count("1 = only its own entries"),
            "excludePatterns": EXCLUDES,
            "gitignore": GITIGNORE,
            "maxEntries": count(),
            "cursor": CURSOR,
        },
        ("path",),
    ),
    output_schema=out(
        {
            "path": {"type": "string"},
            "tree": big_array("{name, type, children?, continued?}, nested"),
            "entries": {"type": "integer"},
            "truncated": {"type": "boolean"},
            "nextCursor": NEXT_CURSOR,
            "skipped": SKIPPED,
        },
        ("path", "tree", "entries", "truncated"),
    ),
    annotations=READ,
)


def _order(sort_by: str, status_of: dict[str, os.stat_result]) -> Any:
    """The sort key of a listing: None (by name), largest first, or newest first; ties by name."""
    if sort_by == "size":
        return lambda name: (-status_of[name].st_size, name)
    if sort_by == "modified":
        return lambda name: (-status_of[name].st_mtime, name)
    return None


@dataclass
class Listing:
    """What a directory holds, by kind; ``status_of`` with details; ``incomplete`` when the directory
    had more entries than were read; ``skipped``: entries left out because they could not be stat'ed."""

    directories: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    others: list[tuple[str, str]] = field(default_factory=list)
    status_of: dict[str, os.stat_result] = field(default_factory=dict)
    incomplete: bool = False
    skipped: Skipped = field(default_factory=Skipped)

    def names(self) -> Iterator[str]:
        """Every name, in the order shown: directories, files, then the others."""
        return itertools.chain(self.directories, self.files, (name for name, _ in self.others))

    def __len__(self) -> int:
        return len(self.directories) + len(self.files) + len(self.others)

    def sort(self, sort_by: str) -> None:
        order = _order(sort_by, self.status_of)
        self.directories.sort(key=order)
        self.files.sort(key=order)
        self.others.sort(key=None if order is None else lambda item: order(item[0]))

    async def drop(self, ignore: GitIgnore, pacer: Pacer) -> None:
        """Leave out what ``.gitignore`` rules ignore, yielding to the event loop as it goes (hostile
        rules over thousands of names take seconds; a cancelled call stops here)."""
        kept: list[str] = []
        for name in self.directories:
            await pacer.idle()
            if not ignore.ignored(name, name, True):
                kept.append(name)
        self.directories = kept
        kept = []
        for name in self.files:
            await pacer.idle()
            if not ignore.ignored(name, name, False):
                kept.append(name)
        self.files = kept
        self.others = [(name, kind) for name, kind in self.others if not ignore.ignored(name, name, False)]

    def to_wire(self) -> None:
        """Every name in its wire form (a name that is not UTF-8 as ``bytes:...``, see names.py)."""
        self.directories = [wire_name(name) for name in self.directories]
        self.files = [wire_name(name) for name in self.files]
        self.others = [(wire_name(name), kind) for name, kind in self.others]
        self.status_of = {wire_name(name): status for name, status in self.status_of.items()}

    def window(self, start: int, stop: int) -> None:
        """Keep the entries from ``start`` to ``stop`` (in the order shown)."""
        dirs, files = len(self.directories), len(self.files)
        self.directories = self.directories[start:stop]
        self.files = self.files[max(start - dirs, 0) : max(stop - dirs, 0)]
        self.others = self.others[max(start - dirs - files, 0) : max(stop - dirs - files, 0)]

    def keep(self, cap: int) -> None:
        """Keep the first ``cap`` entries: directories, then files, then the others."""
        self.directories = self.directories[:cap]
        self.files = self.files[: cap - len(self.directories)]
        self.others = self.others[: cap - len(self.directories) - len(self.files)]


async def read_listing(place: Place, *, hidden: bool, detailed: bool, max_read: int) -> Listing:
    """The entries of a directory, at most ``max_read`` of them read (memory is bounded before
    sorting: names past it are not even kept). Without ``detailed`` no entry is stat'ed: names and
    types come from the directory listing itself (d_type), which keeps a listing of thousands cheap."""
    listing = Listing()
    directories, files, others, status_of = listing.directories, listing.files, listing.others, listing.status_of
    read = 0
    with anchored.directory(place) as fd, os.scandir(fd) as found:
        while chunk := list(itertools.islice(found, 4096)):
            await anyio.sleep(0)  # a checkpoint per chunk: a huge directory stays cancellable
            if len(chunk) > max_read - read:
                chunk = chunk[: max_read - read]
                listing.incomplete = True
            read += len(chunk)
            for entry in chunk:
                name = entry.name
                if not hidden and name.startswith("."):
                    continue
                if detailed:
                    try:
                        status_of[name] = entry.stat(follow_symlinks=False)
                    except OSError as problem:  # gone since the listing was read
                        listing.skipped.error(problem, name)
                        continue
                # Files first: most entries are files, and each test is a call.
                if entry.is_file(follow_symlinks=False):
                    files.append(name)
                elif entry.is_dir(follow_symlinks=False):
                    directories.append(name)
                else:
                    others.append((name, "symlink" if entry.is_symlink() else "other"))
            if listing.incomplete:
                break
    return listing


def _fitting(listing: Listing, cap: int, *, detailed: bool, max_bytes: int) -> int:
    """``cap``, lowered so that the result stays within ``max_bytes``."""
    # A name appears in the structured lists and the text, and with details also as a key of
    # sizes and of modified.
    copies, extra = (4, 100) if detailed else (2, 24)
    total = len(listing)
    # Names are at most 255 bytes (6 * 255 as JSON escapes): below that bound nothing can be over
    # budget, so don't count.
    if (
        total * (copies * 6 * 255 + extra) <= max_bytes
        or sum(map(weight, listing.names())) * copies + extra * total <= max_bytes
    ):
        return cap
    budget = Budget(max_bytes)
    return min(cap, next(i for i, name in enumerate(listing.names()) if not budget.take(copies * weight(name) + extra)))


class DirectoryTools(ToolFamily):
    """Listings and trees."""

    def _page(self, args: dict[str, Any], listing: Listing, detailed: bool) -> tuple[int, int, int]:
        """Keep the page of ``listing`` this call shows, within the text budget: (entries in all pages, start, stop)."""
        shown, start = len(listing), self.cursors.start("list_directory", args)
        # A suffix like "  (123+ bytes)" is charged to every entry.
        suffix = 32 if detailed or args.get("dirSizes") else 2
        names = itertools.islice(listing.names(), start, None)
        stop = start + fitting((weight(labelled(name)) + suffix for name in names), self.config.max_read_bytes - 400)
        listing.window(start, stop)
        return shown, start, stop

    async def list_directory(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """List one directory's entries (directories first). sizes adds file sizes and mtimes (sortBy
        size or modified implies it), dirSizes each subdirectory's total. Recursive: directory_tree."""
        config = self.config
        policy, place = await self.directory(ctx, args)
        cap = self.limit(args, "maxEntries", config.max_entries)
        sort_by = args.get("sortBy", "name")
        detailed = bool(args.get("sizes")) or sort_by != "name"
        listing = await read_listing(
            place, hidden=args.get("includeHidden", True), detailed=detailed, max_read=config.max_entries_limit
        )
        ignore = self.ignore(args, place)
        if ignore is not None:
            with anchored.directory(place) as fd:
                ignore.load(fd, "")
            await listing.drop(ignore, Pacer(ctx, "entries checked"))
        listing.to_wire()
        listing.sort(sort_by)
        total = len(listing)
        cap = _fitting(listing, cap, detailed=detailed, max_bytes=config.max_result_bytes)
        truncated = total > cap or listing.incomplete
        if total > cap:
            listing.keep(cap)
        shown, start, stop = self._page(args, listing, detailed)
        data: dict[str, Any] = {
            "path": policy.display(place.real),
            "directories": listing.directories,
            "files": listing.files,
            "others": [{"name": name, "type": kind} for name, kind in listing.others],
            "truncated": truncated,
        }
        # The text is `ls -F` style: "name/" for a directory, "name@" for a link, plain for a file.
        lines = [labelled(name) + "/" for name in listing.directories]
        if args.get("dirSizes"):
            lines = await self._with_sizes(place, listing, data)
        summary = "\n" + ", ".join(
            _count(len(names), *words)
            for names, words in (
                (listing.files, ("file", "files")),
                (listing.directories, ("directory", "directories")),
                (listing.others, ("other", "others")),
            )
        )
        if detailed:
            sizes = {name: listing.status_of[name].st_size for name in listing.files}
            data["sizes"] = sizes
            data["modified"] = {name: iso(listing.status_of[name].st_mtime) for name in listing.names()}
            data["totalSize"] = sum(sizes.values())
            lines += [f"{labelled(name)}  ({sizes[name]} bytes)" for name in listing.files]
            summary += f", {data['totalSize']} bytes in files"
        else:
            lines += map(labelled, listing.files)
        lines += [labelled(name) + ("@" if kind == "symlink" else "?") for name, kind in listing.others]
        if listing.incomplete:
            summary += (
                f" (the first {min(cap, total)} of the first {total} entries read; the directory holds more "
                f"than {config.max_entries_limit}: list it with search_files and a pattern)"
            )
        elif truncated:
            summary += f" (the first {cap} of {total} entries)"
        if start or stop < shown:
            summary += f"; entries {min(start + 1, shown)}-{min(stop, shown)} of {shown}"
        lines.append(summary)
        if stop < shown:
            data["truncated"] = True
            data["nextCursor"] = self.cursors.issue("list_directory", args, stop)
            lines.append(more(data["nextCursor"]))
        shown_path = functools.partial(_join, data["path"])
        return result(report(listing.skipped, "\n".join(lines), data, shown_path), data)

    async def _with_sizes(self, place: Any, listing: Any, data: dict[str, Any]) -> list[str]:
        """The directories' lines with their total sizes (``dirSizes``), recorded in ``data`` too."""
        # Many thousand files below: a worker thread keeps the event loop serving, and a
        # cancelled call stops between entries.
        counted = await anyio.to_thread.run_sync(
            functools.partial(
                directory_sizes,
                place,
                listing.directories,
                max_entries=self.config.max_entries_limit,
                max_depth=self.config.max_depth,
                check=anyio.from_thread.check_cancelled,
            )
        )
        data["directorySizes"], data["partialSizes"] = counted.totals, counted.partial
        listing.skipped.absorb(counted.skipped, "")
        return [
            f"{labelled(name)}/  ({counted.totals[name]}{'+' if name in counted.partial else ''} bytes)"
            if name in counted.totals
            else labelled(name) + "/"
            for name in listing.directories
        ]

    async def directory_tree(self, ctx: Context, args: dict[str, Any]) -> ToolResult:
        """The tree below a directory as nested {name, type, children}; links shown, never followed.
        On big trees set maxDepth or excludePatterns."""
        policy, place = await self.directory(ctx, args)
        cap = self.limit(args, "maxEntries", self.config.max_entries)
        exclude = Excluder(args.get("excludePatterns", ()))
        pacer = Pacer(ctx, "entries walked")
        tree: list[dict[str, Any]] = []
        stack: list[list[dict[str, Any]]] = [tree]
        lines: list[str] = []
        truncated = False
        budget = Budget(self.config.max_result_bytes)
        # Entries before the cursor are walked again, not shown: only the directories above them are kept.
        start, room = self.cursors.start("directory_tree", args), Budget(self.config.max_read_bytes - 400)
        above: list[str] = []
        following = None
        skipped = Skipped()
        with anchored.directory(place) as fd:
            ignore = self.ignore(args, place)
            walked = walk(
                fd, max_depth=self.depth(args), exclude=exclude, ignore=ignore, report_ignored=True, skipped=skipped
            )
            for entry in walked:
                if entry.ignored:
                    await pacer.idle()  # thousands ignored must not hold the event loop
                    continue
                await pacer.step()
                label = wire_name(entry.name)
                # A node weighs its name twice (structured and text) plus the JSON around it.
                if pacer.count > cap or not budget.take(3 * weight(label) + 2 * entry.depth + 36):
                    truncated = True
                    break
                if pacer.count <= start:
                    del above[entry.depth - 1 :]
                    if entry.kind == "directory":
                        above.append(label)
                    continue
                if not room.take(2 * weight(label) + 2 * entry.depth) and lines:
                    following = pacer.count - 1
                    break
                if not lines and entry.depth > 1:
                    # A continued page starts inside directories an earlier page showed: they are
                    # repeated in the structure (marked continued), and named once in the text.
                    for name in above[: entry.depth - 1]:
                        inside: list[dict[str, Any]] = []
                        stack[-1].append({"name": name, "type": "directory", "children": inside, "continued": True})
                        stack.append(inside)
                    lines.append(f"[continued inside {'/'.join(above[: entry.depth - 1])}/]")
                    room.take(len(lines[-1].encode()))
                del stack[entry.depth :]
                node: dict[str, Any] = {"name": label, "type": entry.kind}
                stack[-1].append(node)
                if entry.kind == "directory":
                    node["children"] = []
                    stack.append(node["children"])
                    lines.append("  " * (entry.depth - 1) + labelled(label) + "/")
                else:
                    lines.append("  " * (entry.depth - 1) + labelled(label) + ("@" if entry.kind == "symlink" else ""))
        entries = following if following is not None else pacer.count - 1 if truncated else pacer.count
        if truncated:
            lines.append(
                f"[truncated after {entries} entries (entry or size cap); lower maxDepth, add "
                "excludePatterns or list a subdirectory]"
            )
        data: dict[str, Any] = {
            "path": policy.display(place),
            "tree": tree,
            "entries": max(entries - start, 0),
            "truncated": truncated or following is not None,
        }
        if following is not None:
            data["nextCursor"] = self.cursors.issue("directory_tree", args, following)
            lines.append(more(data["nextCursor"]))
        shown_path = functools.partial(_join, data["path"])
        return result(report(skipped, "\n".join(lines) or "(empty)", data, shown_path), data)


def _join(shown: str, relative: str) -> str:
    """A ``/``-separated path below the directory shown, as the result shows paths."""
    return os.path.join(shown, *relative.split("/"))


def _count(n: int, one: str, many: str) -> str:
    """``1 file``, ``2 files``: the count with the word it takes."""
    return f"{n} {one if n == 1 else many}"
