"""Files as ``file://`` resources: a capped list, one template that reads any allowed file.

``resources/list`` shows the regular files below the allowed directories, walked in name order
and capped at ``Config.max_resources`` (over all pages), refreshed at most every
:data:`LIST_TTL` seconds or when the watcher sees files come or go. The template
``file://{+path}`` reads any allowed file (text when it is text, base64 otherwise, up to
``Config.max_media_bytes``) and lists a directory as text. Denied and missing paths are "resource
not found", with no reason that could describe what is outside.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
from plainmcp import ErrorCode, MCPError, Resource, content

from .access import Access, file_uri_path
from .mime import OCTET_STREAM, is_textual, looks_binary, mime_type
from .paths import AccessError, AccessPolicy
from .reading import read_bytes
from .walk import walk

if TYPE_CHECKING:
    from plainmcp import Context, Server

    from .config import Config

LIST_TTL = 2.0
TEMPLATE = "file://{+path}"


def path_uri(path: str) -> str:
    """The ``file://`` URI of an absolute path (percent-encoded, ``/`` kept)."""
    return "file://" + quote(path, safe="/")


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
        for root in self.policy.roots:
            for entry in walk(root.real, max_depth=64):
                if len(listed) >= self.limit:
                    return listed
                if entry.kind != "file":
                    continue
                shown = os.path.join(root.shown, *entry.relative.split("/"))
                try:
                    size: int | None = entry.lstat().st_size
                except OSError:
                    size = None
                listed.append(Resource(
                    path_uri(shown), entry.relative, _unused_reader,
                    mime_type=mime_type(entry.name), size=size,
                ))
        return listed


async def _unused_reader(ctx: Any, uri: str) -> None:
    return None  # listed files are read through the template


def register(server: Server, config: Config, access: Access) -> FileIndex:
    index = FileIndex(access.policy, config.max_resources)

    @server.resource_list
    async def list_files(ctx: Context) -> list[Resource]:
        return await index.listed()

    @server.resource_template(
        TEMPLATE, "file", title="A file or directory",
        description="Any file below the allowed directories: text, or base64 for binary files; "
        "a directory reads as its list of names (directories end with /)",
    )
    async def read_file(ctx: Context, uri: str, variables: dict[str, str]) -> Any:
        path = file_uri_path(uri)
        if path is None or not os.path.isabs(path):
            return None
        try:
            policy = await access.policy_for(ctx)
            real = policy.resolve(path)
            if os.path.isdir(real):
                return content.text_contents(uri, _listing(real), "text/plain")
            data = read_bytes(policy, real, max_bytes=config.max_media_bytes)
        except AccessError:
            return None  # "not found", whatever the reason: nothing is said about what is outside
        except ValueError as problem:
            raise MCPError(ErrorCode.INVALID_PARAMS, f"{problem}; use read_text_file with a line range", {"uri": uri}) from None
        return _contents(uri, os.path.basename(real), data)

    return index


def _listing(real: str) -> str:
    lines = []
    for entry in walk(real, max_depth=1):
        lines.append(entry.name + ("/" if entry.kind == "directory" else ""))
    return "\n".join(lines)


def _contents(uri: str, name: str, data: bytes) -> dict[str, Any]:
    mime = mime_type(name)
    if mime is None or is_textual(mime):
        if not looks_binary(data[:8192]):
            try:
                return content.text_contents(uri, data.decode("utf-8"), mime or "text/plain")
            except UnicodeDecodeError:
                pass
        mime = mime or OCTET_STREAM
    return content.blob_contents(uri, data, mime)
