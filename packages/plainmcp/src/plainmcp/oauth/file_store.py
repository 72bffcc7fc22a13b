"""The token cache of a person's OAuth logins: one JSON file readable by its owner alone.

Where: ``$PLAINMCP_TOKEN_FILE`` when set (tests, or a user with several identities), else
``$XDG_STATE_HOME/plainmcp/tokens.json``, else ``~/.local/state/plainmcp/tokens.json``. Tokens are
*state* in the XDG sense: kept across restarts, not configuration a person edits, and not a cache
that may be deleted behind the user's back without cost (a deleted file means logging in again).

The file holds ``{"version": 1, "entries": [{"issuer", "resource", "record"}, ...]}``, one entry per
authorization server (issuer) and protected resource. Its guarantees:

- created ``0600`` in a ``0700`` directory; a file (or directory) that another user may read or
  write, or that another user owns, is refused with an error that says how to fix it;
- written atomically: a temporary file in the same directory, ``fsync``, ``rename`` over the old
  one, ``fsync`` of the directory; a crash mid-write leaves the previous file whole;
- read-modify-write under an advisory lock (``flock`` on ``tokens.json.lock``), so two processes
  (the CLI and the bridge) saving at once do not lose each other's entries;
- bounded: a file above :data:`MAX_BYTES` is refused on read, and a save that would exceed it fails;
- a corrupted file is a clear :class:`TokenStoreError`, never a traceback or a silent reset.

Nothing here logs a record: records hold tokens.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio

#: Environment variable naming the token file (overrides the XDG location).
TOKEN_FILE_ENV = "PLAINMCP_TOKEN_FILE"
#: The largest token file read or written (a few hundred logins fit in far less).
MAX_BYTES = 1024 * 1024
FORMAT_VERSION = 1


class TokenStoreError(Exception):
    """The token file cannot be used (unsafe permissions, corrupted, too large); the message names
    the file and what to do, and never contains a token."""


def default_path() -> Path:
    """The token file's path (see the module docstring for the order)."""
    explicit = os.environ.get(TOKEN_FILE_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    return base / "plainmcp" / "tokens.json"


class FileTokenStore:
    """A ``TokenStore`` kept in one JSON file (see the module docstring). ``path`` defaults to
    :func:`default_path`, read when the store is made."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()

    async def load(self, issuer: str, resource: str) -> dict[str, Any] | None:
        for entry in await anyio.to_thread.run_sync(self._read_entries):
            if entry["issuer"] == issuer and entry["resource"] == resource:
                return dict(entry["record"])
        return None

    async def save(self, issuer: str, resource: str, record: dict[str, Any]) -> None:
        def change(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
            kept = [e for e in entries if (e["issuer"], e["resource"]) != (issuer, resource)]
            return [*kept, {"issuer": issuer, "resource": resource, "record": record}]

        await anyio.to_thread.run_sync(self._update, change)

    async def delete(self, issuer: str, resource: str) -> None:
        def change(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [e for e in entries if (e["issuer"], e["resource"]) != (issuer, resource)]

        await anyio.to_thread.run_sync(self._update, change)

    async def entries(self) -> list[tuple[str, str, dict[str, Any]]]:
        found = await anyio.to_thread.run_sync(self._read_entries)
        return [(e["issuer"], e["resource"], dict(e["record"])) for e in found]

    # ---------------------------------------------------------------------------- the file

    def _read_entries(self) -> list[dict[str, Any]]:
        with self._locked(shared=True):
            return self._read()

    def _update(self, change: Any) -> None:
        self._ensure_directory()
        with self._locked(shared=False):
            self._write(change(self._read()))

    def _ensure_directory(self) -> None:
        directory = self.path.parent
        if not directory.exists():
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.chmod(directory, 0o700)  # mkdir's mode is masked by the umask; parents keep the default
        self._check_directory()

    def _check_directory(self) -> None:
        directory = self.path.parent
        info = os.stat(directory)
        if info.st_uid != os.geteuid():
            raise TokenStoreError(f"{directory} (the token directory) belongs to another user; refusing to use it")
        if info.st_mode & 0o022:
            raise TokenStoreError(
                f"{directory} (the token directory) may be written by other users; run: chmod 700 {directory}"
            )

    @contextlib.contextmanager
    def _locked(self, *, shared: bool) -> Iterator[None]:
        """An advisory lock beside the file (none where ``fcntl`` is missing, or before the
        directory exists: then there is nothing to read)."""
        try:
            import fcntl
        except ImportError:  # Windows: no flock; the atomic rename still keeps the file whole
            yield
            return
        if not self.path.parent.exists():
            yield
            return
        descriptor = os.open(
            self.path.with_name(self.path.name + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600
        )
        try:
            fcntl.flock(descriptor, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)  # closing releases the lock

    def _read(self) -> list[dict[str, Any]]:
        """The file's entries ([] when there is no file). Raises TokenStoreError."""
        try:
            descriptor = os.open(self.path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return []
        except OSError as error:
            raise TokenStoreError(f"cannot open the token file {self.path}: {error.strerror}") from None
        with os.fdopen(descriptor, "rb") as file:
            info = os.fstat(file.fileno())
            self._check_file(info)
            data = file.read(MAX_BYTES + 1)
        if len(data) > MAX_BYTES:
            raise TokenStoreError(f"the token file {self.path} is larger than {MAX_BYTES} bytes; refusing to read it")
        self._check_directory()
        return self._parse(data)

    def _check_file(self, info: os.stat_result) -> None:
        if not stat.S_ISREG(info.st_mode):
            raise TokenStoreError(f"the token file {self.path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise TokenStoreError(f"the token file {self.path} belongs to another user; refusing to read it")
        if info.st_mode & 0o077:
            raise TokenStoreError(
                f"the token file {self.path} may be read or written by other users "
                f"(mode {stat.S_IMODE(info.st_mode):04o}); its tokens may have leaked: "
                f"log in again after running: chmod 600 {self.path}"
            )

    def _parse(self, data: bytes) -> list[dict[str, Any]]:
        corrupted = f"the token file {self.path} is corrupted"
        fix = f"; delete it (rm {self.path}) and log in again"
        try:
            document = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise TokenStoreError(corrupted + " (not JSON)" + fix) from None
        if not isinstance(document, dict) or document.get("version") != FORMAT_VERSION:
            raise TokenStoreError(corrupted + f" (not a version {FORMAT_VERSION} token file)" + fix)
        entries = document.get("entries")
        if not isinstance(entries, list) or not all(_is_entry(entry) for entry in entries):
            raise TokenStoreError(corrupted + " (malformed entries)" + fix)
        return entries

    def _write(self, entries: list[dict[str, Any]]) -> None:
        data = json.dumps({"version": FORMAT_VERSION, "entries": entries}, indent=1).encode("utf-8") + b"\n"
        if len(data) > MAX_BYTES:
            raise TokenStoreError(f"the token file {self.path} would exceed {MAX_BYTES} bytes; log out of some servers")
        directory = self.path.parent
        self._remove_leftovers()
        temporary = directory / f".{self.path.name}.{secrets.token_hex(6)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(temporary, flags, 0o600)
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        _fsync_directory(directory)

    def _remove_leftovers(self) -> None:
        """Delete the temporary files of writers that died mid-write (they hold tokens). Called under
        the exclusive lock, so no living writer's file is among them; without ``flock`` nothing is
        removed (another process might be writing)."""
        try:
            import fcntl  # noqa: F401  (only its presence matters: the lock was taken)
        except ImportError:
            return
        for leftover in self.path.parent.glob(f".{self.path.name}.*.tmp"):
            with contextlib.suppress(OSError):
                leftover.unlink()


def _is_entry(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("issuer"), str)
        and isinstance(entry.get("resource"), str)
        and isinstance(entry.get("record"), dict)
    )


def _fsync_directory(directory: Path) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    try:
        descriptor = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
