"""edit_file's MCP Apps view (ui://plainmcp-filesystem/edit-diff.html), from the server's side, both eras: the tool
names the view (only when writes are allowed, as edit_file itself) and serves it under a policy that allows
only its own blocks, a client that took up the extension is told the file's line endings and BOM (the diff
shows LF only), a client without it gets exactly today's result."""

from __future__ import annotations

import base64
import codecs
import hashlib
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from plainmcp import APP_MIME, UI_EXTENSION, Client
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.write_tools import DIFF_URI

from .conftest import text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]
EDIT = [{"oldText": "b = 2", "newText": "b = 3"}]


@asynccontextmanager
async def serve(make_server: Any, era: str, *, apps: bool, **config: Any) -> AsyncIterator[Client]:
    options: dict[str, Any] = {"protocol_version": era}
    if apps:
        options["extensions"] = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}
    async with connect_in_memory(make_server(**config), **options) as client:
        yield client


@pytest.mark.parametrize("era", ERAS)
async def test_edit_file_names_the_diff_view_for_an_apps_client(make_server, era):
    async with serve(make_server, era, apps=True, allow_write=True) as client:
        tools = await client.list_all_tools()
        resources = await client.list_all_resources()
        html = (await client.read_resource(DIFF_URI))["contents"][0]["text"]
    (edit,) = [tool for tool in tools if tool["name"] == "edit_file"]
    assert edit["_meta"]["ui"] == {"resourceUri": DIFF_URI, "visibility": ["model", "app"]}
    assert [r["mimeType"] for r in resources if r["uri"] == DIFF_URI] == [APP_MIME]
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)[1]
    assert "default-src 'none'" in policy and "unsafe" not in policy and "innerHTML" not in html
    # One script (plainmcp's view-side helper, then the view's code) and one style, each allowed by its hash.
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["script-src"] == _hash(script) and directives["style-src"] == _hash(style)
    assert directives["connect-src"] == directives["frame-src"] == "'none'" and html.count("<script") == 1
    assert "const host = (() => {" in script and "//@app-view" not in script


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


async def test_read_only_server_has_no_diff_view(make_server):
    async with serve(make_server, ERAS[0], apps=True) as client:
        resources = await client.list_all_resources()
    assert not [resource for resource in resources if resource["uri"].startswith("ui://")]


@pytest.mark.parametrize(
    ("raw", "endings", "bom"),
    [
        (b"a = 1\r\nb = 2\r\n", "CRLF", None),
        (b"a = 1\nb = 2\n", "LF", None),
        (b"a = 1\r\nb = 2\n", "mixed", None),
        (codecs.BOM_UTF8 + b"a = 1\nb = 2\n", "LF", "UTF-8"),
        (codecs.BOM_UTF16_LE + "a = 1\r\nb = 2\r\n".encode("utf-16-le"), "CRLF", "UTF-16LE"),
        (b"b = 2", "none", None),
    ],
)
@pytest.mark.parametrize("era", ERAS)
async def test_edit_file_names_line_endings_and_bom_for_an_apps_client(tree, make_server, era, raw, endings, bom):
    path = tree.root / "f.txt"
    path.write_bytes(raw)
    async with serve(make_server, era, apps=True, allow_write=True) as client:
        dry = await client.call_tool("edit_file", {"path": "f.txt", "edits": EDIT, "dryRun": True})
    assert dry["structuredContent"]["line_endings"] == endings
    assert dry["structuredContent"]["bom"] == bom
    assert path.read_bytes() == raw  # a dry run


@pytest.mark.parametrize("era", ERAS)
async def test_edit_file_without_the_extension_is_unchanged(tree, make_server, era):
    path = tree.root / "f.txt"
    path.write_bytes(b"a = 1\r\nb = 2\r\n")
    call = {"path": "f.txt", "edits": EDIT, "dryRun": True}
    async with serve(make_server, era, apps=False, allow_write=True) as plain:
        tools = await plain.list_all_tools()
        resources = await plain.list_all_resources()
        before = await plain.call_tool("edit_file", call)
    async with serve(make_server, era, apps=True, allow_write=True) as apps:
        after = await apps.call_tool("edit_file", call)
    (edit,) = [tool for tool in tools if tool["name"] == "edit_file"]
    assert "ui" not in edit.get("_meta", {}) and "ui/resourceUri" not in edit.get("_meta", {})
    assert not [resource for resource in resources if resource["uri"].startswith("ui://")]
    assert set(before["structuredContent"]) == {"path", "diff", "applied", "notes"}
    trimmed = {k: v for k, v in after["structuredContent"].items() if k not in ("line_endings", "bom")}
    assert trimmed == before["structuredContent"] and text_of(after) == text_of(before)
