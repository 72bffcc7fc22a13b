"""Changing files: atomic writes, no-replace creation, moves, copies and deletes.

Every write goes to a temporary file in the target's directory (created with ``O_EXCL |
O_NOFOLLOW``, so it is ours and new), is flushed to disk, then renamed over the target: readers see
the old content or the new, never half of it, and a crash leaves the old file intact. ``rename``
replaces a symbolic link at the target rather than writing through it. Callers pass paths already
resolved by the :class:`~plainmcp_filesystem.paths.AccessPolicy`.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from typing import BinaryIO

from .paths import AccessPolicy, PathDenied
from .walk import walk

_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


class WriteFailed(Exception):
    """A change that could not be made; the message is safe to show."""


def _temp_path(target: str) -> str:
    directory, name = os.path.split(target)
    return os.path.join(directory, f".{name[:180]}.{secrets.token_hex(8)}.tmp")


def _write_temp(target: str, data: bytes | BinaryIO, mode: int | None) -> str:
    """Write ``data`` (bytes, or a file to stream from) to a new temporary file next to ``target``."""
    temp = _temp_path(target)
    fd = os.open(temp, _TEMP_FLAGS, 0o666 if mode is None else mode)
    try:
        with open(fd, "wb", closefd=True) as file:
            if isinstance(data, bytes):
                file.write(data)
            else:
                shutil.copyfileobj(data, file, 1024 * 1024)
            file.flush()
            if mode is not None:
                os.fchmod(file.fileno(), mode)  # the umask narrowed the mode open() set
            os.fsync(file.fileno())
    except BaseException:
        _unlink_quietly(temp)
        raise
    return temp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_write(target: str, data: bytes) -> bool:
    """Replace (or create) the file at ``target`` with ``data``; returns whether it was created.

    An existing file keeps its permission bits. Raises WriteFailed when the target is a
    directory or its parent does not exist, OSError for other failures.
    """
    mode: int | None = None
    created = True
    try:
        status = os.lstat(target)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(status.st_mode):
            raise WriteFailed("The path is a directory")
        created = False
        if stat.S_ISREG(status.st_mode):
            mode = stat.S_IMODE(status.st_mode)
    if not os.path.isdir(os.path.dirname(target)):
        raise WriteFailed("The parent directory does not exist (create it with create_directory)")
    temp = _write_temp(target, data, mode)
    try:
        os.replace(temp, target)
    except BaseException:
        _unlink_quietly(temp)
        raise
    return created


def create_exclusive(target: str, data: bytes | BinaryIO, mode: int | None = None) -> None:
    """Create a new file at ``target`` atomically, failing if anything is there (even a dangling link).

    Raises WriteFailed when the target exists.
    """
    temp = _write_temp(target, data, mode)
    try:
        _link_no_replace(temp, target)
    finally:
        _unlink_quietly(temp)


def _link_no_replace(source: str, target: str) -> None:
    """Give ``source`` the new name ``target`` unless it exists; ``link`` refuses atomically."""
    try:
        os.link(source, target, follow_symlinks=False)
    except FileExistsError:
        raise WriteFailed("The destination already exists") from None
    except OSError as problem:
        if problem.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # No hard links here (some file systems): check, then rename (a small window remains).
        if os.path.lexists(target):
            raise WriteFailed("The destination already exists") from None
        shutil.copy2(source, target, follow_symlinks=False)


def move(source: str, destination: str) -> None:
    """Move a file, link or directory to a new name; never replaces what is there.

    Raises WriteFailed when the destination exists or is on another file system.
    """
    if os.path.lexists(destination):
        raise WriteFailed("The destination already exists")
    if not os.path.isdir(os.path.dirname(destination)):
        raise WriteFailed("The destination's parent directory does not exist")
    if not os.path.isdir(source) or os.path.islink(source):
        try:
            os.link(source, destination, follow_symlinks=False)
        except FileExistsError:
            raise WriteFailed("The destination already exists") from None
        except OSError:
            pass  # no hard links here: fall back to check-then-rename below
        else:
            os.unlink(source)
            return
    try:
        os.rename(source, destination)
    except OSError as problem:
        if problem.errno == errno.EXDEV:
            raise WriteFailed("The source and destination are on different file systems") from None
        if problem.errno in (errno.ENOTEMPTY, errno.EEXIST):
            raise WriteFailed("The destination already exists") from None
        if problem.errno == errno.EINVAL:
            raise WriteFailed("A directory cannot be moved into itself") from None
        raise


def copy(policy: AccessPolicy, source: str, destination: str, *, max_entries: int) -> dict[str, int]:
    """Copy a file, or a directory recursively, to a new name; never replaces what is there.

    Regular files and directories are copied; links and special files inside a directory are
    skipped (and counted). Returns ``{"files", "directories", "bytes", "skipped"}``.

    Raises:
        WriteFailed: the destination exists, or the tree has more than ``max_entries`` entries.
        PathDenied, PathNotFound: the source cannot be read.
    """
    if os.path.lexists(destination):
        raise WriteFailed("The destination already exists")
    if not os.path.isdir(os.path.dirname(destination)):
        raise WriteFailed("The destination's parent directory does not exist")
    counts = {"files": 0, "directories": 0, "bytes": 0, "skipped": 0}
    if not os.path.isdir(source):
        fd = policy.open_file(source)
        with open(fd, "rb", closefd=True) as file:
            status = os.fstat(file.fileno())
            create_exclusive(destination, file, stat.S_IMODE(status.st_mode))
        counts.update(files=1, bytes=status.st_size)
        return counts
    if destination == source or destination.startswith(source + os.sep):
        raise WriteFailed("A directory cannot be copied into itself")
    # Count first, so a tree over the limit is refused before anything is written.
    if sum(1 for _ in walk(source, max_depth=10_000)) > max_entries:
        raise WriteFailed(f"The directory has more than {max_entries} entries; copy it in parts")
    os.mkdir(destination, stat.S_IMODE(os.stat(source).st_mode))
    counts["directories"] += 1
    # Parents come before children in the walk, so each directory exists before its files.
    for entry in walk(source, max_depth=10_000):
        target = os.path.join(destination, *entry.relative.split("/"))
        if entry.kind == "directory":
            os.mkdir(target, stat.S_IMODE(entry.lstat().st_mode) | stat.S_IRWXU)
            counts["directories"] += 1
            continue
        if entry.kind != "file":
            counts["skipped"] += 1  # links and special files are not copied
            continue
        try:
            fd = entry.open()
        except (OSError, PathDenied):
            counts["skipped"] += 1
            continue
        with open(fd, "rb", closefd=True) as file:
            status = os.fstat(file.fileno())
            create_exclusive(target, file, stat.S_IMODE(status.st_mode))
        counts["files"] += 1
        counts["bytes"] += status.st_size
    return counts


def delete(path: str, *, recursive: bool) -> str:
    """Delete a file, link or (with ``recursive``, or when empty) directory; returns its kind.

    ``shutil.rmtree`` on this platform removes a tree through directory descriptors, never
    following a link it meets (``rmtree.avoids_symlink_attacks``).

    Raises WriteFailed for a non-empty directory without ``recursive``.
    """
    status = os.lstat(path)
    if stat.S_ISDIR(status.st_mode):
        if recursive:
            if not shutil.rmtree.avoids_symlink_attacks:
                raise WriteFailed("Recursive delete is not available safely on this platform")
            shutil.rmtree(path)
        else:
            try:
                os.rmdir(path)
            except OSError as problem:
                if problem.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    raise WriteFailed("The directory is not empty; pass recursive: true to delete it and its contents") from None
                raise
        return "directory"
    os.unlink(path)
    return "symlink" if stat.S_ISLNK(status.st_mode) else "file"
