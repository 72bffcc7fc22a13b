"""Files below a library directory, reached through directory descriptors, never outside it.

Checking a path as a string and then opening it lets anyone who can write in the library win a race:
swap a folder for a link to the outside between the check and the open, and the open follows it.
So nothing here hands the kernel a path to resolve. A path below a root is walked one component at
a time from a descriptor of the root: each folder is opened relative to the previous one
(``dir_fd=``) with ``O_NOFOLLOW | O_DIRECTORY``, the file itself with ``O_NOFOLLOW``. A link met on
the way is seen as a link (the open fails) and resolved by this walk itself (``readlink``): its
target continues from the link's folder, ``..`` goes back to the descriptor the walk came from and
never above the root, an absolute target counts only if it names a place inside the root (spelled
through the root's path as given, or its real path). Links
inside the library therefore work, and a link leading out, however and whenever it appears, is
refused with :class:`OutsideError`.

The root path itself is the operator's choice and is opened as given (it may be a link).
Hard links are not links: a hard link in the library to a file outside it is read like any file.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: Links resolved in one walk at most (Linux's own limit), so a loop of links ends.
MAX_LINKS = 40

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO someone put in the library must not wait for a writer.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


#: Told (path below the root, error) about a folder that cannot be read.
ErrorHandler = Callable[[str, OSError], None]


class OutsideError(OSError):
    """The path leads out of the root (a link to the outside, ``..`` above the root), or through
    more than MAX_LINKS links."""


def open_root(root: str) -> int:
    """A descriptor of the directory ``root`` (followed if it is a link). Raises OSError."""
    return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)


def open_below(root: str, relative: str) -> tuple[int, str]:
    """(descriptor, path below ``root`` with links resolved) of ``relative`` (``/``-separated),
    opened read-only and non-blocking; the caller closes the descriptor.

    Raises OutsideError, or the OSError of the component that failed (FileNotFoundError, ...).
    """
    root_fd = open_root(root)
    walked: list[tuple[str, int]] = []  # (name, descriptor) of each folder entered below the root
    try:
        pending = _parts(relative)
        links = 0
        while pending:
            name = pending.pop(0)
            if name == "..":
                if not walked:
                    raise OutsideError(errno.EXDEV, "leads above the library directory")
                os.close(walked.pop()[1])
                continue
            here = walked[-1][1] if walked else root_fd
            last = not pending
            try:
                fd = os.open(name, _FILE_FLAGS if last else _DIR_FLAGS, dir_fd=here)
            except OSError as error:
                target = _link_target(name, here, error)
                links += 1
                if links > MAX_LINKS:
                    raise OutsideError(errno.ELOOP, "too many links") from None
                if target.startswith("/"):
                    # Inside the root as given or as it really is (the root may be a link).
                    below = _below(os.path.abspath(root), target)
                    if below is None:
                        below = _below(os.path.realpath(root), target)
                    if below is None:
                        raise OutsideError(errno.EXDEV, "a link leading out of the library directory") from None
                    while walked:
                        os.close(walked.pop()[1])
                    target = below
                pending[:0] = _parts(target)
                continue
            if last:
                return fd, "/".join([*(folder for folder, _ in walked), name])
            walked.append((name, fd))
        raise IsADirectoryError(errno.EISDIR, "the library directory itself")
    finally:
        for _, fd in walked:
            os.close(fd)
        os.close(root_fd)


def read_regular(fd: int, limit: int) -> bytes | None:
    """Up to ``limit`` bytes of the open file ``fd`` if it is a regular file, else None."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return None
    chunks: list[bytes] = []
    size = 0
    while size < limit:
        chunk = os.read(fd, limit - size)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


@dataclass(frozen=True, slots=True)
class Entry:
    """A name found by :func:`walk`: its path below the root, and whether it is a link (resolved,
    and refused if it leads out, only when opened)."""

    path: str
    link: bool


def walk(root: str, max_depth: int, on_error: ErrorHandler) -> Iterator[Entry]:
    """Every non-hidden name below ``root`` that is not a folder (files, links, and anything else
    for the reader to refuse), folders at most ``max_depth`` deep and never entered through a link,
    each folder's names sorted. A folder that cannot
    be read is reported to ``on_error(path below root, OSError)`` and skipped; the root's own error
    is raised (OSError)."""
    root_fd = open_root(root)
    try:
        yield from _walk_folder(root_fd, "", 0, max_depth, on_error)
    finally:
        os.close(root_fd)


def _walk_folder(fd: int, prefix: str, depth: int, max_depth: int, on_error: ErrorHandler) -> Iterator[Entry]:
    with os.scandir(fd) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = prefix + entry.name
        try:
            if entry.is_dir(follow_symlinks=False):
                if depth < max_depth:
                    folder = _open_folder(entry.name, fd, path, on_error)
                    if folder is not None:
                        try:
                            yield from _walk_folder(folder, path + "/", depth + 1, max_depth, on_error)
                        finally:
                            os.close(folder)
            else:
                yield Entry(path, entry.is_symlink())
        except OSError as error:  # gone between the listing and now
            on_error(path, error)


def _open_folder(name: str, parent: int, path: str, on_error: ErrorHandler) -> int | None:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:  # unreadable, or swapped for a link since it was listed
        on_error(path, error)
        return None


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _link_target(name: str, folder: int, error: OSError) -> str:
    """The target of the link ``name`` in ``folder`` that made an open fail with ``error``; raises
    ``error`` again if ``name`` is not a link (then that was the real problem)."""
    if error.errno not in (errno.ELOOP, errno.ENOTDIR):
        raise error
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        raise error from None


def _below(real_root: str, target: str) -> str | None:
    """``target`` (absolute) as a path below ``real_root``, or None if it is not inside it."""
    # Not normalised: a ``..`` in what remains is walked like any other, from the root.
    if target.rstrip("/") == real_root:
        return ""
    prefix = real_root.rstrip("/") + "/"
    return target[len(prefix) :] if target.startswith(prefix) else None
