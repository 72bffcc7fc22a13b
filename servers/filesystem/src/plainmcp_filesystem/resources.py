"""Files as ``file://`` resources: a capped list, one template that reads any allowed file.

``resources/list`` shows the regular files below the allowed directories, walked in name order
and capped at ``Config.max_resources`` (over all pages), refreshed at most every
:data:`LIST_TTL` seconds or when the watcher sees files come or go. The template
``file://{+path}`` reads any allowed file (text when it is text, base64 otherwise, up to
``Config.max_media_bytes`` and never more than fits one message: a larger file is ``-32602`` with a
message saying how to read it) and lists a directory as text (cut, saying so, when it is huge). Denied and missing paths are "resource
not found", with no reason that could describe what is outside.
"""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
from plainmcp import Context, ErrorCode, MCPError, Resource, content

from . import anchored
from .access import Access, file_uri_path
from .anchored import Place, directory
from .mime import OCTET_STREAM, is_textual, looks_binary, mime_type
from .names import wire_name
from .paths import AccessError, AccessPolicy
from .reading import json_weight, read_bytes
from .sizes import weight
from .toolkit import Budget, media_limit
from .walk import walk

if TYPE_CHECKING:
    from plainmcp import Server

    from .config import Config

LIST_TTL = 2.0
TEMPLATE = "file://{+path}"


def path_uri(path: str) -> str:
    """The ``file://`` URI of an absolute path (percent-encoded, ``/`` kept; a name's undecodable
    bytes are percent-encoded as the bytes they are, never an error)."""
    return "file://" + quote(os.fsencode(path), safe="/")


class FileIndex:
    """The files ``resources/list`` shows: walked from the disk, kept for :data:`LIST_TTL` seconds
    or until the watcher says files came or went (:meth:`invalidate`)."""

    def __init__(self, policy: AccessPolicy, limit: int) -> None:
        self.policy = policy
        self.limit = limit
        self._listed: list[Resource] = []
        self._stamp = float("-inf")

    def invalidate(self) -> None:
        self._stamp = float("-inf")

    async def listed(self) -> list[Resource]:
        """The files, walked again (in a worker thread: it reads the disk) when the list is old."""
        now = time.monotonic()
        if now - self._stamp > LIST_TTL:
            self._listed = await anyio.to_thread.run_sync(self._walk)
            self._stamp = now
        return self._listed

    def _walk(self) -> list[Resource]:
        listed: list[Resource] = []
        for root, place in self.policy.places():
            try:
                fd = anchored.open_directory(place.anchor, place.parts)
            except AccessError:
                continue
            try:
                for entry in walk(fd, max_depth=64):
                    if len(listed) >= self.limit:
                        return listed
                    if entry.kind != "file" or not _is_text(entry.relative):
                        continue  # a name that is not UTF-8 has no URI a client could send back
                    shown = os.path.join(root.shown, *entry.relative.split("/"))
                    try:
                        size: int | None = entry.lstat().st_size
                    except OSError:
                        size = None
                    listed.append(
                        Resource(
                            path_uri(shown),
                            entry.relative,
                            _unused_reader,
                            mime_type=mime_type(entry.name),
                            size=size,
                        )
                    )
            finally:
                os.close(fd)
        return listed


def _is_text(name: str) -> bool:
    """Whether a name decoded from the file system is real text (no undecodable bytes)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


async def _unused_reader(ctx: Context, uri: str) -> None:
    return None  # listed files are read through the template


READ_FILE_DESCRIPTION = (
    "Any file below the allowed directories: text, or base64 for binary files; "
    "a directory reads as its list of names (directories end with /)"
)


class FileResources:
    """The files as resources: the listed ones (from ``index``) and the template that reads any."""

    def __init__(self, config: Config, access: Access, index: FileIndex) -> None:
        self.config = config
        self.access = access
        self.index = index

    async def list_files(self, ctx: Context) -> list[Resource]:
        return await self.index.listed()

    async def read_file(self, ctx: Context, uri: str, variables: dict[str, str]) -> Any:
        path = file_uri_path(uri)
        if path is None or not os.path.isabs(path):
            return None
        cap = media_limit(self.config)
        try:
            policy = await self.access.policy_for(ctx)
            place = policy.resolve(path)
            if stat.S_ISDIR(anchored.lstat(place).st_mode):
                text, _ = _listing(place, self.config.max_result_bytes)
                return content.text_contents(uri, text, "text/plain")
            data = read_bytes(place, max_bytes=cap)
        except (AccessError, OSError):
            return None  # "not found", whatever the reason: nothing is said about what is outside
        except ValueError as problem:
            raise MCPError(
                ErrorCode.INVALID_PARAMS,
                f"{problem} (resources/read returns files up to {cap} bytes); "
                "read it in parts with the read_text_file tool",
                {"uri": uri},
            ) from None
        return _contents(uri, place.name, data)


def register(server: Server, resources: FileResources) -> None:
    server.resource_list(resources.list_files)
    server.resource_template(TEMPLATE, "file", title="A file or directory", description=READ_FILE_DESCRIPTION)(
        resources.read_file
    )


def _listing(place: Place, max_bytes: int) -> tuple[str, bool]:
    """A directory's names, one a line (directories end with ``/``), cut to fit ``max_bytes``."""
    lines = []
    budget = Budget(max_bytes)
    with directory(place) as fd:
        for entry in walk(fd, max_depth=1):
            name = wire_name(entry.name)  # a name that is not UTF-8 as "bytes:..." (see names.py)
            if not budget.take(weight(name) + 1):
                lines.append("[truncated: the directory has more entries; use the list_directory tool]")
                return "\n".join(lines), True
            lines.append(name + ("/" if entry.kind == "directory" else ""))
    return "\n".join(lines), False


def _contents(uri: str, name: str, data: bytes) -> dict[str, Any]:
    mime = mime_type(name)
    if mime is None or is_textual(mime):
        if not looks_binary(data[:8192]):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                pass
            else:
                # As text only when its JSON is no larger than the base64 would be (control
                # characters escape to six bytes each); else as a blob that surely fits.
                if json_weight(text) <= (len(data) + 2) // 3 * 4 + 2:
                    return content.text_contents(uri, text, mime or "text/plain")
        mime = mime or OCTET_STREAM
    return content.blob_contents(uri, data, mime)
