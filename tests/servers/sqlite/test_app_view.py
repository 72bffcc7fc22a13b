"""query's MCP Apps view (ui://plainmcp-sqlite/result-grid.html), from the server's side, both eras: the tool names the
view, the view is one self-contained document with a strict policy, a client that took up the extension
gets each column's storage classes, and a client without it gets exactly the result it got before."""

from __future__ import annotations

import base64
import hashlib
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from plainmcp import APP_MIME, UI_EXTENSION, Client
from plainmcp.testing import connect_in_memory
from plainmcp_sqlite.config import Config
from plainmcp_sqlite.server import build_server
from plainmcp_sqlite.tools import GRID_URI

from .support import text_of

pytestmark = pytest.mark.anyio

ERAS = ["2025-11-25", "2026-07-28"]


def make_mixed(folder: Path) -> Path:
    path = folder / "mixed.db"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.executescript(
        """
        CREATE TABLE t (id INTEGER PRIMARY KEY, price REAL, label TEXT, data BLOB);
        INSERT INTO t VALUES (1, 1.0, 'NULL', x'00ff'), (2, NULL, NULL, NULL), (3, 2.5, '<b>x</b>', NULL);
        """
    )
    connection.close()
    return path


@asynccontextmanager
async def serve(path: Path, era: str, *, apps: bool, **config: Any) -> AsyncIterator[Client]:
    extensions = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}} if apps else None
    server = build_server(Config(db=path, **config))
    options: dict[str, Any] = {"protocol_version": era}
    if extensions:
        options["extensions"] = extensions
    async with connect_in_memory(server, **options) as client:
        yield client


def query_tool(tools: list[dict[str, Any]]) -> dict[str, Any]:
    return next(tool for tool in tools if tool["name"] == "query")


@pytest.mark.parametrize("era", ERAS)
async def test_query_names_the_grid_view_for_an_apps_client(tmp_path, era):
    async with serve(make_mixed(tmp_path), era, apps=True) as client:
        tools = await client.list_all_tools()
        resources = await client.list_all_resources()
        read = await client.read_resource(GRID_URI)
    meta = query_tool(tools)["_meta"]
    assert meta["ui"] == {"resourceUri": GRID_URI, "visibility": ["model", "app"]}
    listed = [resource for resource in resources if resource["uri"] == GRID_URI]
    assert listed and listed[0]["mimeType"] == APP_MIME
    assert listed[0]["_meta"]["ui"]["permissions"] == {"clipboardWrite": {}}
    (contents,) = read["contents"]
    assert contents["mimeType"] == APP_MIME and contents["text"].startswith("<!doctype html>")


@pytest.mark.parametrize("era", ERAS)
async def test_query_gives_storage_classes_to_an_apps_client(tmp_path, era):
    async with serve(make_mixed(tmp_path), era, apps=True) as client:
        result = await client.call_tool("query", {"sql": "SELECT * FROM t ORDER BY id"})
    structured = result["structuredContent"]
    # REAL 1.0 is REAL (JSON alone would read it as an integer); the text 'NULL' is TEXT, not NULL.
    assert structured["column_types"] == [["INTEGER"], ["NULL", "REAL"], ["NULL", "TEXT"], ["BLOB", "NULL"]]
    assert structured["rows"][0][2] == "NULL" and structured["rows"][1][2] is None


@pytest.mark.parametrize("era", ERAS)
async def test_query_without_the_extension_is_unchanged(tmp_path, era):
    path = make_mixed(tmp_path)
    call = {"sql": "SELECT * FROM t ORDER BY id", "max_rows": 2}
    async with serve(path, era, apps=False) as plain:
        tools = await plain.list_all_tools()
        resources = await plain.list_all_resources()
        before = await plain.call_tool("query", call)
    async with serve(path, era, apps=True) as apps:
        after = await apps.call_tool("query", call)
    assert "_meta" not in query_tool(tools) or "ui" not in query_tool(tools)["_meta"]
    assert not [resource for resource in resources if resource["uri"].startswith("ui://")]
    assert "column_types" not in before["structuredContent"]
    assert before["structuredContent"]["next_cursor"] == after["structuredContent"]["next_cursor"]
    assert {key: value for key, value in after["structuredContent"].items() if key != "column_types"} == before[
        "structuredContent"
    ]
    assert text_of(before) == text_of(after)


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


async def test_grid_view_is_self_contained_with_a_strict_policy(tmp_path):
    async with serve(make_mixed(tmp_path), ERAS[0], apps=True) as client:
        html = (await client.read_resource(GRID_URI))["contents"][0]["text"]
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)[1]
    (script,) = re.findall(r"<script>(.*?)</script>", html, re.DOTALL)
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.DOTALL)
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'none'" and directives["connect-src"] == "'none'"
    assert directives["script-src"] == _hash(script) and directives["style-src"] == _hash(style)
    assert "unsafe" not in policy
    # No other script or remote reference anywhere; the data is written as text, never as HTML.
    assert html.count("<script") == 1 and not re.search(r"\ssrc=", html)
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", html)
    assert "innerHTML" not in html and "insertAdjacentHTML" not in html and "document.write" not in html
    assert "ui/initialize" in script and "//@app-view" not in script
