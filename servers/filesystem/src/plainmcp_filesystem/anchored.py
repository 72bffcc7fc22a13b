"""Paths held by directory descriptors: the one primitive every file operation goes through.

An allowed directory is opened once, at start-up (:class:`Anchor`), and kept open. A file is then
named by a :class:`Place`: an anchor plus link-free path components below it. Every operation
opens those components one at a time, each relative to the descriptor of its parent, with
``O_NOFOLLOW | O_DIRECTORY``, and acts on the last one through the parent's descriptor
(``dir_fd=``). No system call ever receives a path string that the kernel would walk again, so a
directory that another process swaps for a symbolic link between our check and our use cannot lead
outside: the walk meets the link, refuses it (:class:`PathChanged`), and nothing happens.

The anchor is the directory itself, not its name: if the allowed directory is renamed or replaced
while the server runs, the server keeps serving the directory it opened (its shown name is only a
label), and never the replacement.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class AccessError(Exception):
    """A path a client may not use, or cannot use. The message is safe to show to the client."""


class PathDenied(AccessError):
    """The path is outside the allowed directories, malformed, or of a kind never opened."""


class PathNotFound(AccessError):
    """The path is allowed but does not exist."""


class PathChanged(PathDenied):
    """A directory on the path was replaced (by a link or a file) after the path was checked."""


CHANGED = "Access denied: a directory on the path was replaced while in use; try again"


class Anchor:
    """An allowed directory, opened once and kept open for the life of the server.

    ``real`` is its path at start-up, with every link resolved: used to show paths and to match
    the absolute paths clients send, never to reach the directory again.

    Raises:
        ValueError: ``real`` is not a directory (operator error).
    """

    __slots__ = ("fd", "real")

    def __init__(self, real: str) -> None:
        try:
            self.fd = os.open(real, DIR_FLAGS)
        except OSError:
            raise ValueError(f"not a directory: {real}") from None
        self.real = real

    def __repr__(self) -> str:
        return f"Anchor({self.real!r}, fd={self.fd})"

    def __del__(self) -> None:
        # A server lives as long as its anchors; tests build hundreds of servers.
        with contextlib.suppress(OSError, AttributeError):
            os.close(self.fd)


@dataclass(frozen=True, slots=True)
class Place:
    """A file or directory below an anchor: ``parts`` are link-free names (empty: the anchor itself)."""

    anchor: Anchor
    parts: tuple[str, ...]

    @property
    def real(self) -> str:
        """The path as a string, for showing and for matching change events; never opened."""
        return os.path.join(self.anchor.real, *self.parts) if self.parts else self.anchor.real

    @property
    def name(self) -> str:
        return self.parts[-1] if self.parts else ""

    def child(self, *names: str) -> Place:
        return Place(self.anchor, self.parts + names)


def refusal(problem: OSError, parent: int, name: str) -> AccessError:
    """What a failed open of ``name`` (a directory we expected) means, as a safe message."""
    if problem.errno == errno.ENOENT:
        return PathNotFound("No such file or directory")
    if problem.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        try:
            mode = os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode
        except OSError:
            return PathChanged(CHANGED)
        if stat.S_ISLNK(mode) or stat.S_ISDIR(mode):
            return PathChanged(CHANGED)
        return PathNotFound("No such file or directory (a component is not a directory)")
    if problem.errno in (errno.EACCES, errno.EPERM):
        return PathDenied("Permission denied")
    return PathDenied(f"Cannot access the path: {os.strerror(problem.errno or 0)}")


def reopen(fd: int) -> int:
    """A new descriptor of the directory ``fd``, with its own read position: ``dup`` would share
    one, and two listings of the same directory at once would then steal each other's entries."""
    return os.open(".", DIR_FLAGS, dir_fd=fd)


def open_directory(anchor: Anchor, parts: tuple[str, ...]) -> int:
    """Open the directory ``parts`` below ``anchor``, one component at a time, following no link.
    Returns a new descriptor the caller closes.

    Raises:
        PathChanged: a component is now a link (or a file where a directory was).
        PathNotFound, PathDenied: it is gone, or cannot be opened.
    """
    fd = reopen(anchor.fd)
    try:
        for name in parts:
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as problem:
                raise refusal(problem, fd, name) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def directory(place: Place) -> Iterator[int]:
    """The directory at ``place``, open (closed after)."""
    fd = open_directory(place.anchor, place.parts)
    try:
        yield fd
    finally:
        os.close(fd)


@contextlib.contextmanager
def parent(place: Place) -> Iterator[tuple[int, str]]:
    """``(descriptor of the parent directory, name)`` of ``place``: act on the name with ``dir_fd``.

    Raises:
        PathDenied: ``place`` is an allowed directory itself (it has no parent we may use).
        PathChanged, PathNotFound: as :func:`open_directory`, for the parent.
    """
    if not place.parts:
        raise PathDenied("Access denied: an allowed directory itself cannot be replaced, moved or deleted")
    fd = open_directory(place.anchor, place.parts[:-1])
    try:
        yield fd, place.parts[-1]
    finally:
        os.close(fd)


def lstat(place: Place) -> os.stat_result:
    """The status of ``place`` itself (a link is not followed).

    Raises:
        PathNotFound, PathChanged, PathDenied.
    """
    if not place.parts:
        return os.fstat(place.anchor.fd)
    with parent(place) as (fd, name):
        try:
            return os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            raise PathNotFound("No such file or directory") from None


def kind_refusal(mode: int) -> str:
    """Why a file of this type is not read, as a safe message."""
    if stat.S_ISDIR(mode):
        return "Not a file: the path is a directory"
    if stat.S_ISLNK(mode):
        return "Access denied: the path changed to a symbolic link"
    kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device"
    return f"Access denied: the path is a {kind}; special files are never opened"


def open_regular(dir_fd: int, name: str) -> int:
    """Open ``name`` in ``dir_fd`` for reading if it is a regular file (never a link, never a FIFO:
    ``O_NONBLOCK`` keeps a FIFO from blocking the open). Returns a descriptor the caller closes.

    Raises:
        PathDenied: a link, directory or special file.
        PathNotFound: it is gone.
    """
    try:
        # Look before opening: opening a device can have effects of its own (a tape rewinds).
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):
            raise PathDenied(kind_refusal(mode))
        fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        raise PathNotFound("No such file or directory") from None
    except OSError as problem:
        if problem.errno == errno.ELOOP:
            raise PathDenied("Access denied: the path changed to a symbolic link") from None
        if problem.errno in (errno.EACCES, errno.EPERM):
            raise PathDenied("Permission denied") from None
        if problem.errno == errno.ENXIO:  # a socket
            raise PathDenied(kind_refusal(stat.S_IFSOCK)) from None
        raise PathDenied(f"Cannot open the file: {os.strerror(problem.errno or 0)}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise PathDenied(kind_refusal(mode))
    return fd


def open_file(place: Place) -> int:
    """Open the regular file at ``place`` for reading; see :func:`open_regular`."""
    if not place.parts:
        raise PathDenied(kind_refusal(stat.S_IFDIR))
    with parent(place) as (fd, name):
        return open_regular(fd, name)
