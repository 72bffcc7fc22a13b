"""Searching: file names by glob (``search_files``) and file contents by text or regex (``search_content``).

Both walk with :func:`~plainmcp_filesystem.walk.walk` (never out of the allowed directories), stop at
a result cap (saying so), and step a :class:`~plainmcp_filesystem.walk.Pacer` per entry so a long
search reports progress and stops when cancelled. Content search skips binary files (a NUL byte in
the first 8 KiB) and files over a size cap, and counts what it skipped. A regular expression runs
in a worker process under a deadline (see :func:`search_contents`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from . import anchored
from .anchored import PathDenied, PathNotFound, Place
from .gitignore import GitIgnore
from .globs import Excluder, Glob
from .names import wire_path
from .sizes import weight
from .skipped import CHANGED, PERMISSION_DENIED, READ_ERROR, VANISHED, Skipped
from .walk import Entry, Pacer, walk

MAX_LINE_CHARS = 500
_SNIFF = 8192


async def search_names(
    start: Place,
    shown_length: int,
    glob: Glob,
    *,
    exclude: Excluder,
    max_depth: int,
    max_results: int,
    max_bytes: int,
    pacer: Pacer,
    ignore: GitIgnore | None = None,
    skipped: Skipped | None = None,
) -> tuple[list[tuple[str, str]], bool]:
    """``(relative path, kind)`` of entries below ``start`` whose name (or relative path) matches;
    and truncated (``max_results`` reached, or the paths, each shown under a prefix of
    ``shown_length`` characters, would weigh more than ``max_bytes``). Directories that could not be
    read are counted in ``skipped``."""
    found: list[tuple[str, str]] = []
    total = 0
    with anchored.directory(start) as fd:
        walked = walk(fd, max_depth=max_depth, exclude=exclude, ignore=ignore, report_ignored=True, skipped=skipped)
        for entry in walked:
            if entry.ignored:
                await pacer.idle()
                continue
            await pacer.step()
            if glob.matches(entry.relative, entry.name):
                relative = wire_path(entry.relative)  # a name that is not UTF-8 as "bytes:..."
                total += 2 * weight(relative) + shown_length * 2 + 8
                if len(found) >= max_results or total > max_bytes:
                    return found, True
                found.append((relative, entry.kind))
    return found, False


def compile_query(query: str, *, regex: bool, case_sensitive: bool) -> re.Pattern[str]:
    """The pattern to search for. Raises ValueError (with re's reason) for a bad regex."""
    flags = 0 if case_sensitive else re.IGNORECASE
    try:
        return re.compile(query if regex else re.escape(query), flags | re.MULTILINE)
    except re.error as problem:
        raise ValueError(f"Invalid regular expression: {problem}") from None


@dataclass(slots=True)
class ContentSearch:
    """The outcome of a content search: matches and what was skipped."""

    matches: list[dict[str, Any]] = field(default_factory=list)
    files_searched: int = 0
    files_matched: int = 0
    skipped_binary: int = 0
    skipped_large: int = 0
    truncated: bool = False
    #: Files and directories that could not be read (not the binary or large ones: those are counted above).
    skipped: Skipped = field(default_factory=Skipped)


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"


@dataclass(frozen=True, slots=True)
class GrepRequest:
    """What to search for, as plain data (it crosses to the worker process as JSON)."""

    query: str
    flags: int
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    context: int
    max_depth: int
    max_results: int
    max_file_bytes: int
    max_bytes: int
    shown_length: int
    #: The parents' .gitignore rules as (prefix, text) pairs (see gitignore.GitIgnore), or None: not honoured.
    gitignore: tuple[tuple[str, str], ...] | None = None


class Grep:
    """A content search fed one walk entry at a time (no I/O of its own but reading those files)."""

    def __init__(self, request: GrepRequest) -> None:
        self.request = request
        self.pattern = re.compile(request.query, request.flags)
        self.include = Excluder(request.include)
        self.exclude = Excluder(request.exclude)
        self.outcome = ContentSearch()
        self.weight = 0

    def ignore(self) -> GitIgnore | None:
        """A fresh set of ``.gitignore`` rules for one walk (None when they are not honoured)."""
        outer = self.request.gitignore
        return None if outer is None else GitIgnore(tuple((prefix, text) for prefix, text in outer))

    def feed(self, entry: Entry) -> bool:
        """Search one entry (if it is a regular file); returns True when the result is full."""
        request, outcome = self.request, self.outcome
        if entry.kind != "file" or (self.include and not self.include.excluded(entry.relative, entry.name)):
            return False
        try:
            fd = entry.open()
        except OSError as problem:
            outcome.skipped.error(problem, entry.relative)
            return False
        except PathNotFound:  # gone between the listing and the open: once, a whole search failed here
            outcome.skipped.add(VANISHED, entry.relative)
            return False
        except PathDenied as problem:
            outcome.skipped.add(_refusal_reason(problem), entry.relative)
            return False
        try:
            with open(fd, "rb", closefd=True) as file:
                if os.fstat(file.fileno()).st_size > request.max_file_bytes:
                    outcome.skipped_large += 1
                    return False
                data = file.read(request.max_file_bytes + 1)
        except OSError as problem:  # EIO, or a file on a network system gone under us
            outcome.skipped.error(problem, entry.relative)
            return False
        if b"\x00" in data[:_SNIFF]:
            outcome.skipped_binary += 1
            return False
        outcome.files_searched += 1
        text = data.decode("utf-8", errors="replace")
        if self.pattern.search(text) is None:
            return False  # most files: one scan in C, no line splitting
        lines = text.splitlines()
        relative = wire_path(entry.relative)  # a name that is not UTF-8 as "bytes:..."
        matched = False
        context = request.context
        for number, line in enumerate(lines):
            if self.pattern.search(line) is None:
                continue
            self.weight += (
                2 * (weight(relative) + request.shown_length + min(len(line), MAX_LINE_CHARS) * 6 * (1 + 2 * context))
                + 64
            )
            if len(outcome.matches) >= request.max_results or self.weight > request.max_bytes:
                outcome.truncated = True
                return True
            if not matched:
                matched = True
                outcome.files_matched += 1
            match: dict[str, Any] = {"path": relative, "line": number + 1, "text": _clip(line)}
            if context:
                match["before"] = [_clip(x) for x in lines[max(0, number - context) : number]]
                match["after"] = [_clip(x) for x in lines[number + 1 : number + 1 + context]]
            outcome.matches.append(match)
        return False

    def run(self, fd: int) -> ContentSearch:
        """The whole search below the open directory ``fd``, synchronously (in the worker process)."""
        walked = walk(
            fd,
            max_depth=self.request.max_depth,
            exclude=self.exclude,
            ignore=self.ignore(),
            skipped=self.outcome.skipped,
        )
        for entry in walked:
            if self.feed(entry):
                break
        return self.outcome


def _refusal_reason(problem: PathDenied) -> str:
    """Why :func:`~plainmcp_filesystem.anchored.open_regular` refused a file the walk saw as one."""
    text = str(problem)
    if text.startswith("Permission denied"):
        return PERMISSION_DENIED
    return READ_ERROR if text.startswith("Cannot open") else CHANGED  # a link or another type now


class SearchTimeout(Exception):
    """A search that ran past its deadline and was stopped."""


async def search_contents(
    start: Place, request: GrepRequest, *, regex: bool, pacer: Pacer, timeout: float, workers: Any = None
) -> ContentSearch:
    """Matching lines in the regular files below ``start``.

    A plain-text query runs here, on the event loop, yielding between entries (``re.escape`` makes
    it a literal search: linear time). A regular expression may backtrack for minutes on a crafted
    line, holding the interpreter lock all the while, so it runs in a separate process that gets a
    descriptor of ``start`` (never a path) and is killed when ``timeout`` seconds pass or the call
    is cancelled. ``workers`` (an ``anyio.CapacityLimiter``) bounds how many such processes run at
    once; a search waiting for one counts against its deadline.

    Raises:
        SearchTimeout: a regular expression search ran past ``timeout``.
    """
    if regex:
        return await _in_worker(start, request, timeout, workers)
    grep = Grep(request)
    with anchored.directory(start) as fd:
        walked = walk(
            fd,
            max_depth=request.max_depth,
            exclude=grep.exclude,
            ignore=grep.ignore(),
            report_ignored=True,
            skipped=grep.outcome.skipped,
        )
        for entry in walked:
            if entry.ignored:
                await pacer.idle()
                continue
            await pacer.step()
            if grep.feed(entry):
                break
    return grep.outcome


async def _in_worker(start: Place, request: GrepRequest, timeout: float, workers: Any) -> ContentSearch:
    import anyio

    try:
        with anyio.fail_after(timeout):
            async with workers or contextlib.nullcontext():
                return await _run_worker(start, request)
    except TimeoutError:
        raise SearchTimeout(
            f"The regular expression search took longer than {timeout:g} s and was stopped; "
            "simplify the expression (nested repetition such as (a+)+ backtracks) or search "
            "a smaller directory"
        ) from None


async def _run_worker(start: Place, request: GrepRequest) -> ContentSearch:
    """One worker process, killed when this is cancelled (the deadline included)."""
    import anyio

    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])))
    # Shielded: a deadline landing while the process is being spawned would otherwise lose the
    # process object with the process already running, and nothing would kill it (seen under load).
    # Cancellation then lands at the first checkpoint below, whose cleanup kills the worker.
    with anchored.directory(start) as fd, anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            # Our pid: the worker dies with this process, however it ends (see grep_worker).
            [sys.executable, "-m", "plainmcp_filesystem.grep_worker", str(fd), str(os.getpid())],
            pass_fds=(fd,),
            env=env,
            stderr=subprocess.DEVNULL,
        )
    limit = 2 * request.max_bytes + 1024 * 1024
    try:
        assert process.stdin is not None and process.stdout is not None
        await process.stdin.send(json.dumps(asdict(request)).encode())
        await process.stdin.aclose()
        received = bytearray()
        async for chunk in process.stdout:
            received += chunk
            if len(received) > limit:
                raise ValueError("The search result was too large")
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
        with anyio.CancelScope(shield=True):
            await process.aclose()
    if process.returncode != 0:
        raise ValueError("The regular expression search failed")
    found = json.loads(received)
    found["skipped"] = Skipped.from_wire(found["skipped"])
    return ContentSearch(**found)
