"""Changing files: atomic writes, no-replace creation, moves, copies and deletes, all through
directory descriptors (:mod:`plainmcp_filesystem.anchored`).

New content is written to an *unnamed* file in the target's directory (``O_TMPFILE``), flushed to
disk, and only then given a name: readers see the old content or the new, never half of it, and a
server killed mid-write leaves nothing behind (the kernel frees an unnamed file when its last
descriptor closes). A no-replace creation links the unnamed file straight to its name (``linkat``
fails if anything, even a dangling link, is there); a replacement links it to a temporary name and
renames that over the target within the same directory descriptor, so the only temporary name that
ever exists lives for the two system calls between link and rename. Where ``O_TMPFILE`` is not
supported, a named temporary file (``.NAME.HEX.plainmcp-tmp``, created with ``O_EXCL |
O_NOFOLLOW``) is used instead. ``rename`` replaces a symbolic link at the target rather than
writing through it. A server killed between naming and renaming (or, without ``O_TMPFILE``, while
writing) leaves such a temporary name: :func:`sweep_temporaries` removes old ones when a server that
may write starts.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from typing import BinaryIO

from . import skipped
from .anchored import (
    DIR_FLAGS,
    AccessError,
    PathChanged,
    PathDenied,
    PathNotFound,
    Place,
    directory,
    lstat,
    open_directory,
    open_file,
    refusal,
)
from .skipped import Skipped
from .walk import Entry, walk

#: The deepest tree copy_file copies (it holds two descriptors per level): deeper is refused before
#: anything is written.
MAX_COPY_DEPTH = 256
#: The most directory descriptors a recursive delete keeps open (deeper levels are opened again from
#: the nearest one kept, one component at a time, never following a link).
_DELETE_WINDOW = 64

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
TEMP_SUFFIX = ".plainmcp-tmp"
_TEMP_NAME = re.compile(r"\..{1,180}\.[0-9a-f]{16}" + re.escape(TEMP_SUFFIX) + r"\Z", re.DOTALL)


class WriteFailed(Exception):
    """A change that could not be made; the message is safe to show."""


@contextlib.contextmanager
def _parent(place: Place, missing: str) -> Iterator[tuple[int, str]]:
    """The parent directory's descriptor and the name, or WriteFailed(``missing``) if it is gone."""
    if not place.parts:
        raise WriteFailed("An allowed directory itself cannot be replaced, moved or deleted")
    try:
        fd = open_directory(place.anchor, place.parts[:-1])
    except PathNotFound:
        raise WriteFailed(missing) from None
    try:
        yield fd, place.parts[-1]
    finally:
        os.close(fd)


def _status(dir_fd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _temp_name(name: str) -> str:
    return f".{name[:180]}.{secrets.token_hex(8)}{TEMP_SUFFIX}"


def _unlink_quietly(dir_fd: int, name: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)


def _fill(fd: int, data: bytes | BinaryIO, mode: int | None) -> None:
    """Write ``data`` (bytes, or a file to stream from) to ``fd``, set its mode, flush it to disk."""
    with open(fd, "wb", closefd=False) as file:
        if isinstance(data, bytes):
            file.write(data)
        else:
            shutil.copyfileobj(data, file, 1024 * 1024)
        file.flush()
    if mode is not None:
        os.fchmod(fd, mode)  # the umask narrowed the mode open() set
    os.fsync(fd)


#: An unnamed file is named through its ``/proc/self/fd`` link (``linkat`` with ``AT_EMPTY_PATH``
#: would need a capability); without /proc, named temporary files are used.
_CAN_NAME_UNNAMED = hasattr(os, "O_TMPFILE") and os.path.isdir("/proc/self/fd")


def _unnamed(dir_fd: int, data: bytes | BinaryIO, mode: int | None) -> int | None:
    """A new unnamed file in ``dir_fd`` holding ``data``; None where ``O_TMPFILE`` is unsupported."""
    if not _CAN_NAME_UNNAMED:
        return None
    flags = os.O_TMPFILE
    try:
        fd = os.open(".", flags | os.O_WRONLY | os.O_CLOEXEC, 0o666 if mode is None else mode, dir_fd=dir_fd)
    except OSError as problem:
        if problem.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise
    try:
        _fill(fd, data, mode)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _name_unnamed(fd: int, dir_fd: int, name: str) -> None:
    """Give the unnamed file ``fd`` the name ``name`` in ``dir_fd`` (FileExistsError if taken)."""
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)


def _named(dir_fd: int, name: str, data: bytes | BinaryIO, mode: int | None) -> str:
    """A new temporary file next to ``name`` holding ``data``; returns its name."""
    temp = _temp_name(name)
    fd = os.open(temp, _TEMP_FLAGS, 0o666 if mode is None else mode, dir_fd=dir_fd)
    try:
        _fill(fd, data, mode)
    except BaseException:
        _unlink_quietly(dir_fd, temp)
        raise
    finally:
        os.close(fd)
    return temp


def _publish(dir_fd: int, name: str, data: bytes | BinaryIO, mode: int | None, *, replace: bool) -> None:
    """Put ``data`` at ``name`` in ``dir_fd`` atomically: over what is there (``replace``), or
    only if nothing is (else WriteFailed)."""
    fd = _unnamed(dir_fd, data, mode)
    if fd is not None:
        try:
            if not replace:
                try:
                    _name_unnamed(fd, dir_fd, name)
                except FileExistsError:
                    raise WriteFailed("The destination already exists") from None
                return
            temp = _temp_name(name)
            _name_unnamed(fd, dir_fd, temp)
        finally:
            os.close(fd)
        _rename_or_drop(dir_fd, temp, name)
        return
    if not isinstance(data, bytes):
        data.seek(0)
    temp = _named(dir_fd, name, data, mode)
    if replace:
        _rename_or_drop(dir_fd, temp, name)
        return
    try:
        _link_no_replace(dir_fd, temp, name)
    finally:
        _unlink_quietly(dir_fd, temp)


def _rename_or_drop(dir_fd: int, temp: str, name: str) -> None:
    try:
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        _unlink_quietly(dir_fd, temp)
        raise


def _link_no_replace(dir_fd: int, source: str, target: str) -> None:
    """Give ``source`` the new name ``target`` unless it exists; ``link`` refuses atomically."""
    try:
        os.link(source, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise WriteFailed("The destination already exists") from None
    except OSError as problem:
        if problem.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # No hard links here (some file systems): check, then rename (a small window remains).
        if _status(dir_fd, target) is not None:
            raise WriteFailed("The destination already exists") from None
        os.rename(source, target, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def atomic_write(place: Place, data: bytes) -> bool:
    """Replace (or create) the file at ``place`` with ``data``; returns whether it was created.

    An existing file keeps its permission bits. Raises WriteFailed when the target is a
    directory or its parent does not exist, PathChanged when a directory on the way was swapped
    for a link, OSError for other failures.
    """
    with _parent(place, "The parent directory does not exist (create it with create_directory)") as (fd, name):
        status = _status(fd, name)
        mode: int | None = None
        if status is not None:
            if stat.S_ISDIR(status.st_mode):
                raise WriteFailed("The path is a directory")
            if stat.S_ISREG(status.st_mode):
                mode = stat.S_IMODE(status.st_mode)
        _publish(fd, name, data, mode, replace=True)
    return status is None


_APPEND_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def append(place: Place, data: bytes) -> tuple[bool, int]:
    """Add ``data`` at the end of the file at ``place`` (created if missing); returns (created, size after).

    In place, with ``O_APPEND``: each write lands at the end even while others append, and nothing
    before the old end is rewritten. Never through a link (``O_NOFOLLOW``), never to a FIFO or device
    (``O_NONBLOCK`` keeps the open from waiting, then the type is checked before any byte is written).

    A file with more than one hard link is refused: appending in place would change it under its other
    names too, which may lie outside the allowed directories.

    Raises:
        WriteFailed: the parent is missing, the target is a directory or special file, or has several links.
        PathDenied: the target is a link. OSError: other failures.
    """
    with _parent(place, "The parent directory does not exist (create it with create_directory)") as (fd, name):
        created = False
        try:
            try:
                out = os.open(name, _APPEND_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                out = os.open(name, _APPEND_FLAGS | os.O_CREAT | os.O_EXCL, 0o666, dir_fd=fd)
                created = True
        except OSError as problem:
            if problem.errno == errno.EISDIR:
                raise WriteFailed("The path is a directory") from None
            if problem.errno in (errno.ENXIO, errno.ENODEV):
                raise WriteFailed("The path is a special file; only regular files are appended to") from None
            raise refusal(problem, fd, name) from None
        try:
            status = os.fstat(out)
            if not stat.S_ISREG(status.st_mode):
                raise WriteFailed("The path is a special file; only regular files are appended to")
            if status.st_nlink > 1:
                # Written in place, a file with another hard link changes under every name it has, and
                # one may be outside the allowed directories (write_file and edit_file replace the name).
                raise WriteFailed(
                    "The file has more than one hard link (another name, maybe outside the allowed "
                    "directories, shares its content); append_file does not write to it: use write_file"
                )
            view = memoryview(data)
            while view:
                view = view[os.write(out, view) :]
            return created, os.fstat(out).st_size
        finally:
            os.close(out)


def create_exclusive(place: Place, data: bytes | BinaryIO, mode: int | None = None) -> None:
    """Create a new file at ``place`` atomically, failing if anything is there (even a dangling link).

    Raises WriteFailed when the target exists or its parent does not.
    """
    with _parent(place, "The destination's parent directory does not exist") as (fd, name):
        _publish(fd, name, data, mode, replace=False)


def make_directories(place: Place) -> bool:
    """Create the directory at ``place`` and any missing parents, one component at a time from the
    anchor; returns whether anything was created.

    Raises WriteFailed when a file is in the way; PathChanged when a directory was swapped for a link.
    """
    created = False
    fd = open_directory(place.anchor, ())
    try:
        for name in place.parts:
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, dir_fd=fd)
                    created = True
                try:
                    child = os.open(name, DIR_FLAGS, dir_fd=fd)
                except OSError as problem:
                    raise refusal(problem, fd, name) from None
            except NotADirectoryError:
                raise WriteFailed("A file with that name already exists") from None
            except OSError as problem:
                raise refusal(problem, fd, name) from None
            os.close(fd)
            fd = child
    finally:
        os.close(fd)
    return created


def move(source: Place, destination: Place) -> None:
    """Move a file, link or directory to a new name; never replaces what is there.

    Raises WriteFailed when the destination exists or is on another file system.
    """
    with (
        _parent(source, "The source does not exist") as (source_fd, source_name),
        _parent(destination, "The destination's parent directory does not exist") as (target_fd, target_name),
    ):
        status = _status(source_fd, source_name)
        if status is None:
            raise PathNotFound("No such file or directory")
        if _status(target_fd, target_name) is not None:
            raise WriteFailed("The destination already exists")
        if not stat.S_ISDIR(status.st_mode):
            try:
                os.link(source_name, target_name, src_dir_fd=source_fd, dst_dir_fd=target_fd, follow_symlinks=False)
            except FileExistsError:
                raise WriteFailed("The destination already exists") from None
            except OSError:
                pass  # no hard links here: fall back to check-then-rename below
            else:
                os.unlink(source_name, dir_fd=source_fd)
                return
        try:
            os.rename(source_name, target_name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
        except OSError as problem:
            if problem.errno == errno.EXDEV:
                raise WriteFailed("The source and destination are on different file systems") from None
            if problem.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise WriteFailed("The destination already exists") from None
            if problem.errno == errno.EINVAL:
                raise WriteFailed("A directory cannot be moved into itself") from None
            raise


def _nothing() -> None:
    return None


def copy(
    source: Place, destination: Place, *, max_entries: int, check: Callable[[], None] = _nothing
) -> dict[str, int]:
    """Copy a file, or a directory recursively, to a new name; never replaces what is there.

    Regular files and directories are copied; links and special files inside a directory are
    skipped (and counted). ``check`` is called before each entry (it may raise to stop the copy,
    which then leaves what it copied so far). Returns ``{"files", "directories", "bytes", "skipped"}``.

    Raises:
        WriteFailed: the destination exists, or the tree has more than ``max_entries`` entries.
        PathDenied, PathNotFound: the source cannot be read.
    """
    counts = {"files": 0, "directories": 0, "bytes": 0, "skipped": 0}
    if not stat.S_ISDIR(lstat(source).st_mode):
        fd = open_file(source)
        with open(fd, "rb", closefd=True) as file:
            status = os.fstat(file.fileno())
            create_exclusive(destination, file, stat.S_IMODE(status.st_mode))
        counts.update(files=1, bytes=status.st_size)
        return counts
    if destination.anchor is source.anchor and destination.parts[: len(source.parts)] == source.parts:
        raise WriteFailed("A directory cannot be copied into itself")
    with (
        directory(source) as source_fd,
        _parent(destination, "The destination's parent directory does not exist") as (parent_fd, name),
    ):
        if _status(parent_fd, name) is not None:
            raise WriteFailed("The destination already exists")
        # Count first, so a tree over the limits, or with parts that cannot be read, is refused before
        # anything is written: a copy that left them out would look complete.
        entries = 0
        unreadable = Skipped()
        for entry in walk(source_fd, max_depth=MAX_COPY_DEPTH + 1, skipped=unreadable):
            entries += 1
            if entry.depth > MAX_COPY_DEPTH:
                raise WriteFailed(f"The directory is more than {MAX_COPY_DEPTH} levels deep; copy it in parts")
            if entry.kind == "file":
                _check_readable(entry, unreadable)
        if entries > max_entries:
            raise WriteFailed(f"The directory has more than {max_entries} entries; copy it in parts")
        if unreadable:
            raise WriteFailed(f"Nothing was copied: {unreadable.line(lambda path: path)}")
        try:
            os.mkdir(name, stat.S_IMODE(os.fstat(source_fd).st_mode) | stat.S_IRWXU, dir_fd=parent_fd)
        except FileExistsError:
            raise WriteFailed("The destination already exists") from None
        counts["directories"] += 1
        # targets[d - 1] is where the entries at depth d go; the walk gives parents before children.
        targets = [os.open(name, DIR_FLAGS, dir_fd=parent_fd)]
        try:
            for entry in walk(source_fd, max_depth=MAX_COPY_DEPTH):
                check()
                while len(targets) > entry.depth:
                    os.close(targets.pop())
                _copy_entry(entry, targets, counts)
        finally:
            for fd in targets:
                os.close(fd)
    return counts


def _check_readable(entry: Entry, unreadable: Skipped) -> None:
    try:
        os.close(entry.open())
    except PathNotFound:
        unreadable.add(skipped.VANISHED, entry.relative)
    except PathChanged:
        unreadable.add(skipped.CHANGED, entry.relative)
    except PathDenied:
        unreadable.add(skipped.PERMISSION_DENIED, entry.relative)
    except OSError as problem:
        unreadable.error(problem, entry.relative)


def _copy_entry(entry: Entry, targets: list[int], counts: dict[str, int]) -> None:
    into = targets[-1]
    if entry.kind == "directory":
        os.mkdir(entry.name, stat.S_IMODE(entry.lstat().st_mode) | stat.S_IRWXU, dir_fd=into)
        targets.append(os.open(entry.name, DIR_FLAGS, dir_fd=into))
        counts["directories"] += 1
        return
    if entry.kind != "file":
        counts["skipped"] += 1  # links and special files are not copied
        return
    try:
        fd = entry.open()
    except Exception:  # gone, unreadable, or no longer a regular file
        counts["skipped"] += 1
        return
    with open(fd, "rb", closefd=True) as file:
        status = os.fstat(file.fileno())
        _publish(into, entry.name, file, stat.S_IMODE(status.st_mode), replace=False)
    counts["files"] += 1
    counts["bytes"] += status.st_size


def delete(place: Place, *, recursive: bool, check: Callable[[], None] = _nothing) -> str:
    """Delete a file, link or (with ``recursive``, or when empty) directory; returns its kind.

    A tree is removed by :func:`_remove_tree`: through directory descriptors, never following a link
    it meets, without recursion (a tree thousands of levels deep is removed like any other).
    ``check`` is called per directory (it may raise to stop).

    Raises WriteFailed for a non-empty directory without ``recursive``.
    """
    with _parent(place, "No such file or directory") as (fd, name):
        status = _status(fd, name)
        if status is None:
            raise PathNotFound("No such file or directory")
        if stat.S_ISDIR(status.st_mode):
            if recursive:
                _remove_tree(fd, name, check)
            else:
                try:
                    os.rmdir(name, dir_fd=fd)
                except OSError as problem:
                    if problem.errno in (errno.ENOTEMPTY, errno.EEXIST):
                        raise WriteFailed(
                            "The directory is not empty; pass recursive: true to delete it and its contents"
                        ) from None
                    raise
            return "directory"
        os.unlink(name, dir_fd=fd)
        return "symlink" if stat.S_ISLNK(status.st_mode) else "file"


class _Level:
    """One directory on the way down a tree being removed: its name in its parent, its descriptor
    (None once closed to keep within the window) and the subdirectories left to remove (None: not read yet)."""

    __slots__ = ("name", "fd", "pending")

    def __init__(self, name: str, fd: int | None) -> None:
        self.name = name
        self.fd = fd
        self.pending: list[str] | None = None


def _level_fd(top: int, levels: list[_Level]) -> int:
    """The descriptor of the last of ``levels`` (``top`` if there is none), opened again from the
    nearest open one above it if it was closed; then at most :data:`_DELETE_WINDOW` stay open.

    A name that is no longer a directory (a link swapped in) fails to open (``O_NOFOLLOW | O_DIRECTORY``).
    """
    if not levels:
        return top
    if levels[-1].fd is None:
        start = len(levels) - 1
        while start > 0 and levels[start - 1].fd is None:
            start -= 1
        fd = top if start == 0 else levels[start - 1].fd
        for level in levels[start:]:
            assert fd is not None
            level.fd = fd = os.open(level.name, DIR_FLAGS, dir_fd=fd)
    open_levels = [level for level in levels if level.fd is not None]
    for level in open_levels[: max(len(open_levels) - _DELETE_WINDOW, 0)]:
        assert level.fd is not None
        os.close(level.fd)
        level.fd = None
    fd = levels[-1].fd
    assert fd is not None
    return fd


def _remove_tree(top: int, name: str, check: Callable[[], None]) -> None:
    """Remove the directory ``name`` in the directory ``top`` and everything below it, iteratively.

    Each directory's files, links and special files are unlinked and its subdirectories listed once;
    then the last subdirectory is entered, and an emptied directory is removed from its parent. At
    most :data:`_DELETE_WINDOW` descriptors stay open; a directory whose descriptor was closed is
    opened again from the nearest open one above it, one component at a time.
    """
    levels = [_Level(name, None)]
    try:
        while levels:
            check()
            level = levels[-1]
            fd = _level_fd(top, levels)
            if level.pending is None:
                level.pending = []
                with os.scandir(fd) as entries:
                    for entry in entries:
                        if entry.is_dir(follow_symlinks=False):
                            level.pending.append(entry.name)
                        else:
                            os.unlink(entry.name, dir_fd=fd)  # a file, link or special file itself
            if level.pending:
                levels.append(_Level(level.pending.pop(), None))
                continue
            levels.pop()
            os.close(fd)
            level.fd = None
            os.rmdir(level.name, dir_fd=_level_fd(top, levels))
    finally:
        for level in levels:
            if level.fd is not None:
                os.close(level.fd)


def sweep_temporaries(places: list[Place], *, older_than: float, now: float, max_entries: int) -> int:
    """Remove temporary files a killed server left behind below ``places``; returns how many.

    Only regular files named exactly as :func:`_temp_name` names them and unchanged for
    ``older_than`` seconds (a write in progress changes its file continuously) are removed, through
    their directory's descriptor. At most ``max_entries`` entries are looked at.
    """
    removed = seen = 0
    for place in places:
        try:
            fd = open_directory(place.anchor, place.parts)
        except AccessError:
            continue
        try:
            for entry in walk(fd, max_depth=64):
                seen += 1
                if seen > max_entries:
                    return removed
                if entry.kind != "file" or not entry.name.endswith(TEMP_SUFFIX) or not _TEMP_NAME.match(entry.name):
                    continue
                with contextlib.suppress(OSError):
                    if now - entry.lstat().st_mtime > older_than:
                        os.unlink(entry.name, dir_fd=entry.dir_fd)
                        removed += 1
        finally:
            os.close(fd)
    return removed
