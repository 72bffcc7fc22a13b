"""The access policy: which paths a client may touch. Small on purpose, and tested on its own.

Every tool and resource goes through :meth:`AccessPolicy.resolve` before it touches a path, and
opens files through :meth:`AccessPolicy.open_file`. The rules:

- A path is a non-empty string without NUL bytes, at most :data:`MAX_PATH_CHARS` long.
- Relative paths are resolved against the allowed directories, never the process's cwd.
- The path is checked twice: lexically (so ``..`` never makes us even look outside), then after
  resolving every symbolic link (so a link inside pointing out is refused). Containment compares
  whole path components (``/allowed`` does not contain ``/allowed_evil``).
- A path that does not exist yet (a new file) is checked through its nearest existing ancestor,
  which ``realpath`` resolves; a dangling link's target counts as the path.
- Special files (FIFOs, devices, sockets) are never opened: opening a FIFO for reading blocks
  until a writer appears, which would hang the server.
- Error messages are safe to show: they never contain a path outside the allowed directories.

Unicode is deliberately *not* normalized: POSIX names are bytes, ``．．`` (fullwidth) is a name
like any other, and normalizing after the check is how such tricks work elsewhere.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

#: Longer paths are refused before any system call (Linux PATH_MAX is 4096 bytes).
MAX_PATH_CHARS = 4096

_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class AccessError(Exception):
    """A path a client may not use, or cannot use. The message is safe to show to the client."""


class PathDenied(AccessError):
    """The path is outside the allowed directories, malformed, or of a kind never opened."""


class PathNotFound(AccessError):
    """The path is allowed but does not exist."""


DENIED_OUTSIDE = "Access denied: the path is outside the allowed directories (see list_allowed_directories)"


@dataclass(frozen=True, slots=True)
class Root:
    """One allowed directory: ``shown`` is how the operator named it (absolute), ``real`` is it with
    every link resolved. Both forms match lexically (macOS's ``/tmp`` is ``/private/tmp``)."""

    shown: str
    real: str


def _inside(path: str, directory: str) -> bool:
    """Whether ``path`` is ``directory`` or below it, comparing whole components."""
    if path == directory:
        return True
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    return path.startswith(prefix)


def _expand(path: str) -> str:
    if path == "~" or path.startswith("~" + os.sep):
        return os.path.expanduser("~") + path[1:]
    return path


class AccessPolicy:
    """Decides, for every path a client names, whether it is allowed and what it really is.

    Args:
        directories: the allowed directories; each must exist and be a directory.

    Raises:
        ValueError: a directory does not exist or is not a directory (operator error; the message
            names it, since it is the operator who reads it).
    """

    __slots__ = ("roots",)

    def __init__(self, directories: Iterable[str]) -> None:
        roots: list[Root] = []
        for directory in directories:
            shown = os.path.abspath(_expand(directory))
            real = os.path.realpath(shown)
            if not os.path.isdir(real):
                raise ValueError(f"not a directory: {directory}")
            root = Root(shown, real)
            if root not in roots:
                roots.append(root)
        self.roots: tuple[Root, ...] = tuple(roots)

    @classmethod
    def _of(cls, roots: Iterable[Root]) -> AccessPolicy:
        policy = cls.__new__(cls)
        policy.roots = tuple(dict.fromkeys(roots))
        return policy

    # ------------------------------------------------------------------------------ containment

    def contains(self, real_path: str) -> bool:
        """Whether a fully resolved path is inside an allowed directory."""
        return any(_inside(real_path, root.real) for root in self.roots)

    def _contains_lexically(self, path: str) -> bool:
        return any(_inside(path, root.shown) or _inside(path, root.real) for root in self.roots)

    def root_of(self, real_path: str) -> Root | None:
        """The innermost allowed directory holding a resolved path, or None."""
        best: Root | None = None
        for root in self.roots:
            if _inside(real_path, root.real) and (best is None or len(root.real) > len(best.real)):
                best = root
        return best

    def is_root(self, real_path: str) -> bool:
        return any(real_path == root.real for root in self.roots)

    def display(self, real_path: str) -> str:
        """A resolved path as the client should see it: under the directory's shown name."""
        root = self.root_of(real_path)
        if root is None:
            return "(outside the allowed directories)"
        return root.shown + real_path[len(root.real):]

    def echo(self, path: object) -> str:
        """A client's path, safe to repeat back: itself if relative or lexically inside, else a placeholder."""
        if not isinstance(path, str) or "\x00" in path or len(path) > MAX_PATH_CHARS:
            return "(invalid path)"
        if not os.path.isabs(path) or self._contains_lexically(os.path.normpath(path)):
            return path
        return "(a path outside the allowed directories)"

    # -------------------------------------------------------------------------------- resolving

    def resolve(self, path: object, *, for_write: bool = False, must_exist: bool = True) -> str:
        """The real (link-free, absolute) path ``path`` names, if a client may use it.

        Args:
            path: what the client sent.
            for_write: the path will be replaced, moved or deleted: an allowed directory itself
                and special files are refused.
            must_exist: refuse with :class:`PathNotFound` when nothing is there. When False, a
                missing path is allowed if where it would be created is allowed.

        Raises:
            PathDenied, PathNotFound: with a message safe to show.
        """
        if not isinstance(path, str) or not path:
            raise PathDenied("Access denied: the path must be a non-empty string")
        if "\x00" in path:
            raise PathDenied("Access denied: the path contains a NUL byte")
        if len(path) > MAX_PATH_CHARS:
            raise PathDenied(f"Access denied: the path is longer than {MAX_PATH_CHARS} characters")
        if not self.roots:
            raise PathDenied("Access denied: no directory is allowed for this client")
        candidate = self._absolute(_expand(path))
        if not self._contains_lexically(candidate):
            raise PathDenied(DENIED_OUTSIDE)
        real = os.path.realpath(candidate)
        if not self.contains(real):
            raise PathDenied(DENIED_OUTSIDE)
        try:
            status = os.lstat(real)
        except (FileNotFoundError, NotADirectoryError):
            if must_exist:
                raise PathNotFound(f"No such file or directory: {self.display(real)}") from None
            return real
        except OSError as problem:
            raise PathDenied(_os_reason(problem)) from None
        if stat.S_ISLNK(status.st_mode):
            # realpath leaves a link it could not resolve in place: a loop (or an unreadable link).
            raise PathDenied("Access denied: the path is a symbolic link loop")
        if for_write:
            if self.is_root(real):
                raise PathDenied("Access denied: an allowed directory itself cannot be replaced, moved or deleted")
            if not (stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode)):
                raise PathDenied("Access denied: not a regular file or directory")
        return real

    def resolve_entry(self, path: object, *, must_exist: bool = True) -> str:
        """The path of the directory entry ``path`` names, *without* following a link at its last
        component: its parent resolved, its own name kept. For operations on the entry itself
        (delete, move, the destination of a copy), which must act on a link rather than on what it
        points to, and must create a new name exactly where asked.

        Raises:
            PathDenied, PathNotFound: as :meth:`resolve`; an allowed directory itself is refused.
        """
        if not isinstance(path, str) or not path or "\x00" in path or len(path) > MAX_PATH_CHARS:
            self.resolve(path)  # raises the matching refusal
        assert isinstance(path, str)
        if not self.roots:
            raise PathDenied("Access denied: no directory is allowed for this client")
        candidate = self._absolute(_expand(path))
        if not self._contains_lexically(candidate):
            raise PathDenied(DENIED_OUTSIDE)
        parent, name = os.path.split(candidate)
        real = os.path.join(os.path.realpath(parent), name)
        if not self.contains(real):
            raise PathDenied(DENIED_OUTSIDE)
        if self.is_root(real) or self.is_root(os.path.realpath(real)):
            raise PathDenied("Access denied: an allowed directory itself cannot be replaced, moved or deleted")
        try:
            os.lstat(real)
        except (FileNotFoundError, NotADirectoryError):
            if must_exist:
                raise PathNotFound(f"No such file or directory: {self.display(real)}") from None
        except OSError as problem:
            raise PathDenied(_os_reason(problem)) from None
        return real

    def _absolute(self, path: str) -> str:
        if os.path.isabs(path):
            return os.path.normpath(path)
        # Against each allowed directory in turn: the first where it exists, else the first one.
        joined = [os.path.normpath(os.path.join(root.shown, path)) for root in self.roots]
        return next((p for p in joined if self._contains_lexically(p) and os.path.lexists(p)), joined[0])

    # ---------------------------------------------------------------------------------- opening

    def open_file(self, real_path: str) -> int:
        """Open a resolved path for reading: regular files only, never through a link swapped in
        since :meth:`resolve`. Returns a file descriptor the caller closes.

        Raises:
            PathDenied: a special file, a link, or (on Linux) a file that turned out to be outside.
            PathNotFound: it disappeared.
        """
        try:
            before = os.lstat(real_path)
        except FileNotFoundError:
            raise PathNotFound(f"No such file or directory: {self.display(real_path)}") from None
        except OSError as problem:
            raise PathDenied(_os_reason(problem)) from None
        if not stat.S_ISREG(before.st_mode):
            raise PathDenied(_kind_refusal(before.st_mode))
        try:
            fd = os.open(real_path, _READ_FLAGS)
        except FileNotFoundError:
            raise PathNotFound(f"No such file or directory: {self.display(real_path)}") from None
        except OSError as problem:
            raise PathDenied(_os_reason(problem)) from None
        try:
            after = os.fstat(fd)
            if not stat.S_ISREG(after.st_mode):
                raise PathDenied(_kind_refusal(after.st_mode))
            opened = _opened_path(fd)
            if opened is not None and not self.contains(opened):
                raise PathDenied(DENIED_OUTSIDE)  # a parent directory was swapped for a link
        except BaseException:
            os.close(fd)
            raise
        return fd

    # -------------------------------------------------------------------------------- narrowing

    def narrowed(self, client_directories: Iterable[str]) -> AccessPolicy:
        """The intersection with a client's roots: each client directory inside an allowed one,
        and each allowed directory inside a client one. Never wider than this policy; possibly
        empty (then every path is refused)."""
        kept: list[Root] = []
        for directory in client_directories:
            if not isinstance(directory, str) or "\x00" in directory or not os.path.isabs(directory):
                continue
            real = os.path.realpath(directory)
            if not os.path.isdir(real):
                continue
            if self.contains(real):
                kept.append(Root(os.path.normpath(directory), real))
            kept.extend(root for root in self.roots if _inside(root.real, real))
        return AccessPolicy._of(kept)


def _opened_path(fd: int) -> str | None:
    """Where an open descriptor really points (Linux ``/proc``); None where that is unknown."""
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return target if target.startswith(os.sep) else None


def _kind_refusal(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "Not a file: the path is a directory"
    if stat.S_ISLNK(mode):
        return "Access denied: the path changed to a symbolic link"
    kind = "FIFO" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device"
    return f"Access denied: the path is a {kind}; special files are never opened"


def _os_reason(problem: OSError) -> str:
    """An OSError as a message without the path it carries."""
    reasons = {
        errno.ENAMETOOLONG: "Access denied: a name in the path is too long",
        errno.ELOOP: "Access denied: the path is a symbolic link loop",
        errno.EACCES: "Permission denied",
        errno.EPERM: "Permission denied",
        errno.ENOTDIR: "No such file or directory (a component is not a directory)",
    }
    return reasons.get(problem.errno or 0, f"Cannot access the path: {os.strerror(problem.errno or 0)}")
