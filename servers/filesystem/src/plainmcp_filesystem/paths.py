"""The access policy: which paths a client may touch. Small on purpose, and tested on its own.

Every tool and resource goes through :meth:`AccessPolicy.resolve` (or :meth:`~AccessPolicy.resolve_entry`)
before it touches a path. What comes back is a :class:`~plainmcp_filesystem.anchored.Place`: an
allowed directory's descriptor plus link-free names below it, which every operation then opens one
component at a time (see :mod:`plainmcp_filesystem.anchored`). The rules:

- A path is a non-empty string without NUL bytes, at most :data:`MAX_PATH_CHARS` long.
- Relative paths are resolved against the allowed directories, never the process's cwd.
- The path is first checked lexically (so ``..`` never makes us even look outside), then walked
  component by component from the allowed directory's descriptor. A symbolic link met on the way is
  read (``readlink`` relative to its directory's descriptor) and followed only if its target is
  lexically inside an allowed directory; the walk then restarts from that directory's descriptor.
  Never more than :data:`MAX_LINKS` links. Containment compares whole components (``/allowed``
  does not contain ``/allowed_evil``).
- A path that does not exist yet (a new file) keeps its missing names; a dangling link's target
  counts as the path.
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

from .anchored import CHANGED, DIR_FLAGS, AccessError, Anchor, PathChanged, PathDenied, PathNotFound, Place, refusal
from .names import BadName, from_wire, wire_path

__all__ = ["AccessError", "AccessPolicy", "PathChanged", "PathDenied", "PathNotFound", "Place", "Root"]

#: Longer paths are refused before any system call (Linux PATH_MAX is 4096 bytes).
MAX_PATH_CHARS = 4096

#: The most symbolic links one path may pass through (as Linux allows).
MAX_LINKS = 40


DENIED_OUTSIDE = "Access denied: the path is outside the allowed directories (see list_allowed_directories)"


@dataclass(frozen=True, slots=True)
class Root:
    """One allowed directory: ``shown`` is how it was named (absolute), ``real`` is it with every
    link resolved; both forms match lexically (macOS's ``/tmp`` is ``/private/tmp``). ``anchor`` is
    the descriptor every path below it is reached from, and ``prefix`` the names from the anchor to
    this directory (empty for an operator's directory; a client's root is a subdirectory of one)."""

    shown: str
    real: str
    anchor: Anchor
    prefix: tuple[str, ...] = ()


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
        seen: dict[tuple[str, str], Root] = {}
        for directory in directories:
            shown = os.path.abspath(_expand(directory))
            real = os.path.realpath(shown)
            if (shown, real) not in seen:
                seen[(shown, real)] = Root(shown, real, Anchor(real))
        self.roots: tuple[Root, ...] = tuple(seen.values())

    @classmethod
    def _of(cls, roots: Iterable[Root]) -> AccessPolicy:
        policy = cls.__new__(cls)
        policy.roots = tuple(dict.fromkeys(roots))
        return policy

    # ------------------------------------------------------------------------------ containment

    def contains(self, real_path: str) -> bool:
        """Whether a fully resolved path is inside an allowed directory (lexically: for showing)."""
        return any(_inside(real_path, root.real) for root in self.roots)

    def _contains_lexically(self, path: str) -> bool:
        return any(_inside(path, root.shown) or _inside(path, root.real) for root in self.roots)

    def _lexical_root(self, path: str) -> tuple[Root, list[str]] | None:
        """The innermost root whose shown or real name contains ``path``, and the names below it."""
        best: tuple[Root, str] | None = None
        for root in self.roots:
            for base in (root.real, root.shown):
                if _inside(path, base) and (best is None or len(base) > len(best[1])):
                    best = (root, base)
        if best is None:
            return None
        root, base = best
        return root, [name for name in path[len(base) :].split(os.sep) if name]

    def holds(self, place: Place) -> bool:
        """Whether ``place`` is inside one of this policy's directories."""
        return any(
            root.anchor is place.anchor and place.parts[: len(root.prefix)] == root.prefix for root in self.roots
        )

    def root_of(self, real_path: str) -> Root | None:
        """The innermost allowed directory holding a resolved path, or None."""
        best: Root | None = None
        for root in self.roots:
            if _inside(real_path, root.real) and (best is None or len(root.real) > len(best.real)):
                best = root
        return best

    def is_root(self, place: Place) -> bool:
        return any(root.anchor is place.anchor and place.parts == root.prefix for root in self.roots)

    def places(self) -> list[tuple[Root, Place]]:
        """Each allowed directory with its place (for walks over everything allowed)."""
        return [(root, Place(root.anchor, root.prefix)) for root in self.roots]

    def display(self, real_path: str | Place) -> str:
        """A resolved path as the client should see it: under the directory's shown name."""
        if isinstance(real_path, Place):
            real_path = real_path.real
        root = self.root_of(real_path)
        if root is None:
            return "(outside the allowed directories)"
        return wire_path(root.shown + real_path[len(root.real) :])

    def echo(self, path: object) -> str:
        """A client's path, safe to repeat back: itself if relative or lexically inside, else a placeholder."""
        if not isinstance(path, str) or "\x00" in path or len(path) > MAX_PATH_CHARS:
            return "(invalid path)"
        try:
            from_wire(path)
        except BadName:
            return "(invalid path)"
        if not os.path.isabs(path) or self._contains_lexically(os.path.normpath(path)):
            return wire_path(path)
        return "(a path outside the allowed directories)"

    # -------------------------------------------------------------------------------- resolving

    def resolve(self, path: object, *, for_write: bool = False, must_exist: bool = True) -> Place:
        """Where ``path`` is, if a client may use it: links resolved (inside the roots only).

        Args:
            path: what the client sent.
            for_write: the path will be replaced, moved or deleted: an allowed directory itself
                and special files are refused.
            must_exist: refuse with :class:`PathNotFound` when nothing is there. When False, a
                missing path is allowed if where it would be created is allowed.

        Raises:
            PathDenied, PathNotFound: with a message safe to show.
        """
        place, mode = self._locate(self._candidate(path), follow_last=True, must_exist=must_exist)
        if for_write:
            if self.is_root(place):
                raise PathDenied("Access denied: an allowed directory itself cannot be replaced, moved or deleted")
            if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise PathDenied("Access denied: not a regular file or directory")
        return place

    def resolve_entry(self, path: object, *, must_exist: bool = True) -> Place:
        """The directory entry ``path`` names, *without* following a link at its last component.
        For operations on the entry itself (delete, move, the destination of a copy), which must
        act on a link rather than on what it points to, and must create a new name exactly where
        asked.

        Raises:
            PathDenied, PathNotFound: as :meth:`resolve`; an allowed directory itself is refused.
        """
        place, _ = self._locate(self._candidate(path), follow_last=False, must_exist=must_exist)
        if self.is_root(place):
            raise PathDenied("Access denied: an allowed directory itself cannot be replaced, moved or deleted")
        return place

    def _candidate(self, path: object) -> str:
        """The absolute, normalized path a client's string names (checked, not yet walked)."""
        if not isinstance(path, str) or not path:
            raise PathDenied("Access denied: the path must be a non-empty string")
        if "\x00" in path:
            raise PathDenied("Access denied: the path contains a NUL byte")
        if len(path) > MAX_PATH_CHARS:
            raise PathDenied(f"Access denied: the path is longer than {MAX_PATH_CHARS} characters")
        if not self.roots:
            raise PathDenied("Access denied: no directory is allowed for this client")
        try:
            path = from_wire(path)  # names that are not UTF-8 come as "bytes:..." (see names.py)
        except BadName as problem:
            raise PathDenied(f"Access denied: {problem}") from None
        return self._absolute(_expand(path))

    def _locate(self, candidate: str, *, follow_last: bool, must_exist: bool) -> tuple[Place, int | None]:
        """Walk ``candidate`` from its root's descriptor; returns the place and its mode (None when
        it does not exist). Links are followed (the last one only with ``follow_last``) when their
        target is inside an allowed directory, by restarting from that directory's descriptor."""
        found = self._lexical_root(candidate)
        if found is None:
            raise PathDenied(DENIED_OUTSIDE)
        root, below = found
        anchor = root.anchor
        pending = [*root.prefix, *below]
        done: list[str] = []
        mode: int | None = os.fstat(anchor.fd).st_mode
        links = 0
        fd = os.dup(anchor.fd)
        try:
            while pending:
                name = pending.pop(0)
                last = not pending
                try:
                    mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
                except FileNotFoundError:
                    if must_exist:
                        raise PathNotFound(
                            "No such file or directory: "
                            + self.display(os.path.join(anchor.real, *done, name, *pending))
                        ) from None
                    done += [name, *pending]
                    mode = None
                    break
                except OSError as problem:
                    raise PathDenied(_os_reason(problem)) from None
                if stat.S_ISLNK(mode) and (follow_last or not last):
                    links += 1
                    if links > MAX_LINKS:
                        raise PathDenied("Access denied: the path is a symbolic link loop")
                    try:
                        target = os.readlink(name, dir_fd=fd)
                    except OSError:
                        raise PathChanged(CHANGED) from None  # no longer a link: swapped meanwhile
                    # The directory holding the link is link-free, so its ".." is lexical.
                    found = self._lexical_root(os.path.normpath(os.path.join(anchor.real, *done, target)))
                    if found is None:
                        raise PathDenied(DENIED_OUTSIDE)
                    root, below = found
                    anchor = root.anchor
                    pending = [*root.prefix, *below, *pending]
                    done = []
                    previous, fd = fd, os.dup(anchor.fd)
                    os.close(previous)
                    mode = os.fstat(fd).st_mode
                    continue
                done.append(name)
                if last:
                    break
                if not stat.S_ISDIR(mode):
                    raise PathNotFound("No such file or directory (a component is not a directory)")
                try:
                    child = os.open(name, DIR_FLAGS, dir_fd=fd)
                except OSError as problem:
                    raise refusal(problem, fd, name) from None
                os.close(fd)
                fd = child
        finally:
            os.close(fd)
        place = Place(anchor, tuple(done))
        if not self.holds(place):
            raise PathDenied(DENIED_OUTSIDE)
        return place, mode

    def _absolute(self, path: str) -> str:
        if os.path.isabs(path):
            return os.path.normpath(path)
        # Against each allowed directory in turn: the first where it exists, else the first one.
        joined = [os.path.normpath(os.path.join(root.shown, path)) for root in self.roots]
        return next((p for p in joined if self._contains_lexically(p) and self._exists(p)), joined[0])

    def _exists(self, candidate: str) -> bool:
        try:
            self._locate(candidate, follow_last=False, must_exist=True)
        except AccessError:
            return False
        return True

    # -------------------------------------------------------------------------------- narrowing

    def narrowed(self, client_directories: Iterable[str]) -> AccessPolicy:
        """The intersection with a client's roots: each client directory inside an allowed one,
        and each allowed directory inside a client one. Never wider than this policy; possibly
        empty (then every path is refused)."""
        kept: list[Root] = []
        for directory in client_directories:
            if not isinstance(directory, str) or "\x00" in directory or not os.path.isabs(directory):
                continue
            try:
                place, mode = self._locate(self._candidate(directory), follow_last=True, must_exist=True)
            except AccessError:
                place, mode = None, None
            if place is not None and mode is not None and stat.S_ISDIR(mode):
                kept.append(Root(os.path.normpath(directory), place.real, place.anchor, place.parts))
                continue
            real = os.path.realpath(directory)
            kept.extend(root for root in self.roots if _inside(root.real, real))
        return AccessPolicy._of(kept)


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
