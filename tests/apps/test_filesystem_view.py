"""The filesystem diff view (ui://plainmcp-filesystem/edit-diff.html) in headless Chromium, through the
official host bridge (``plainmcp app``), against the real filesystem server over stdio on a real directory,
in both eras: edit_file's dry run as numbered diff lines with whitespace visible, CRLF and a BOM named,
hostile text as text; "apply" calls edit_file again without dryRun through the host and the file on disk
changes exactly as the diff said; a failed apply says so and writes nothing; a client without the
extension gets the result it always got."""

from __future__ import annotations

import codecs
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import APP_MIME, UI_EXTENSION, connect_stdio
from plainmcp_filesystem.write_tools import DIFF_URI

from .harness import ERAS
from .test_sqlite_view import readme_command

APPS = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}
VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
HOSTILE = '<img src=x onerror="parent.parent.__pwned=1">'
CRLF_FILE = b"[core]\r\nname = old\r\n\tindent = 1\r\ntrail = x  \r\n<script>alert(1)</script>\r\nend\r\n"
CRLF_EDITS = [
    {"oldText": "name = old", "newText": f"name = {HOSTILE}"},
    {"oldText": "trail = x  ", "newText": "trail =\u00a0y\t"},
]
BOM_FILE = codecs.BOM_UTF8 + b"first line\nsecond\n"
HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "win.ini").write_bytes(CRLF_FILE)
    (folder / "bom.txt").write_bytes(BOM_FILE)
    return folder


def server(root: Path) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", str(root), "--allow-write", "--log-level", "warning"]


def run_async(main: Any) -> Any:
    """``anyio.run(main)`` on a thread of its own: Playwright's sync API keeps an event loop on this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


def visible(text: str, crlf: bool) -> str:
    """A line as the view writes it: spaces, tabs, no-break spaces and a BOM as signs, CRLF named."""
    signs = {" ": "·", "\t": "→", "\u00a0": "⍽", "\ufeff": "BOM"}
    return "".join(signs.get(char, char) for char in text) + ("CRLF" if crlf else "")


def diff_rows(hosted: Any) -> list[list[str]]:
    """The diff table as shown: old line number, new line number, sign, text."""
    rows = hosted.view.locator("#diff tbody tr")
    return [row.locator("td").all_text_contents() for row in rows.all()]


def patched(original: str, diff: str) -> str:
    """``original`` (LF lines) with the unified ``diff`` applied: what the diff says the file becomes."""
    lines = original.split("\n")
    out: list[str] = []
    at = 0
    for line in diff.split("\n"):
        hunk = HUNK.match(line)
        if hunk:
            start = int(hunk[1]) - 1
            out += lines[at:start]
            at = start
        elif line.startswith(("---", "+++", "\\")) or not line:
            continue
        elif line.startswith("-"):
            assert lines[at] == line[1:]
            at += 1
        elif line.startswith("+"):
            out.append(line[1:])
        else:
            assert lines[at] == line[1:]
            out.append(lines[at])
            at += 1
    return "\n".join(out + lines[at:])


@pytest.mark.parametrize("era", ERAS)
def test_filesystem_view_shows_the_dry_run_diff_of_a_crlf_file(app_host, root, era: str) -> None:
    arguments = {"path": "win.ini", "edits": CRLF_EDITS, "dryRun": True}
    hosted = app_host(server(root), "edit_file", arguments, era)
    view = hosted.view
    view.locator("#mode", has_text="Dry run").wait_for()
    assert view.locator("#path").text_content() == str(root / "win.ini")
    assert view.locator("#mode").text_content() == "Dry run: nothing written"
    assert view.locator("#eol").text_content() == "Line endings: CRLF (Windows), kept"
    assert view.locator("#bom").is_hidden()
    assert diff_rows(hosted) == [
        ["", "", "", "@@ -1,6 +1,6 @@"],
        ["1", "1", " ", visible("[core]", True)],
        ["2", "", "−", visible("name = old", True)],
        ["", "2", "+", visible(f"name = {HOSTILE}", True)],
        ["3", "3", " ", visible("\tindent = 1", True)],
        ["4", "", "−", visible("trail = x  ", True)],
        ["", "4", "+", visible("trail =\u00a0y\t", True)],
        ["5", "5", " ", visible("<script>alert(1)</script>", True)],
        ["6", "6", " ", visible("end", True)],
    ]
    # Trailing whitespace is flagged; the hostile texts stayed text.
    assert view.locator("tr.del .trailing").count() == 2 and view.locator("tr.add .trailing").count() == 1
    assert view.locator("#diff img, #diff script").count() == 0
    assert hosted.page.evaluate("window.__pwned") is None
    assert view.locator("#apply").is_visible() and view.locator("#status").text_content() == "4 changed line(s)"
    assert (root / "win.ini").read_bytes() == CRLF_FILE  # a dry run writes nothing
    hosted.screenshot(f"filesystem-edit-diff-{era}", docs="filesystem-edit-diff" if era == "legacy" else None)
    assert hosted.errors == []


def test_filesystem_view_names_a_bom(app_host, root) -> None:
    arguments = {"path": "bom.txt", "edits": [{"oldText": "first", "newText": "1st"}], "dryRun": True}
    hosted = app_host(server(root), "edit_file", arguments, "modern", theme="dark")
    view = hosted.view
    view.locator("#mode", has_text="Dry run").wait_for()
    assert view.locator("html").get_attribute("data-theme") == "dark"
    assert view.locator("#bom").text_content() == "BOM: UTF-8, kept"
    assert view.locator("#eol").text_content() == "Line endings: LF"
    assert diff_rows(hosted) == [
        ["", "", "", "@@ -1,2 +1,2 @@"],
        ["1", "", "−", visible("\ufefffirst line", False)],
        ["", "1", "+", visible("\ufeff1st line", False)],
        ["2", "2", " ", visible("second", False)],
    ]
    assert view.locator("tr.del .mark").text_content() == "BOM"
    hosted.screenshot("filesystem-edit-diff-bom-dark")
    hosted.set_theme("light")
    view.locator("html[data-theme='light']").wait_for(state="attached")
    assert hosted.errors == []


@pytest.mark.parametrize("era", ERAS)
def test_filesystem_view_apply_writes_what_the_diff_said(app_host, root, era: str) -> None:
    arguments = {"path": "win.ini", "edits": CRLF_EDITS, "dryRun": True}
    hosted = app_host(server(root), "edit_file", arguments, era)
    view = hosted.view
    view.locator("#mode", has_text="Dry run").wait_for()
    shown = diff_rows(hosted)
    view.locator("#apply").focus()
    view.locator("#apply").press("Enter")
    view.locator("#mode", has_text="Applied").wait_for()
    # One call from the view, through the host: the same edits, without dryRun.
    assert hosted.record()["calls"] == [{"name": "edit_file", "arguments": {"path": "win.ini", "edits": CRLF_EDITS}}]
    assert view.locator("#outcome").text_content() == f"Written: {root / 'win.ini'} now reads as the diff shows."
    assert view.locator("#apply").is_hidden() and diff_rows(hosted) == shown
    # The file on disk is the dry run's diff applied to the original, its CRLF line endings kept.
    original = CRLF_FILE.decode("utf-8").replace("\r\n", "\n")
    expected = patched(original, dry_run_diff(root, arguments, era)).replace("\n", "\r\n")
    assert (root / "win.ini").read_bytes() == expected.encode("utf-8")
    assert (root / "win.ini").read_bytes() == CRLF_FILE.replace(b"name = old", f"name = {HOSTILE}".encode()).replace(
        b"trail = x  ", "trail =\u00a0y\t".encode()
    )
    hosted.screenshot(f"filesystem-edit-applied-{era}", docs="filesystem-edit-applied" if era == "modern" else None)
    assert hosted.errors == []


def dry_run_diff(root: Path, arguments: dict[str, Any], era: str) -> str:
    """The diff a dry run gives now, on a copy of the original file (the real one was just changed)."""
    copy = root / "copy.ini"
    copy.write_bytes(CRLF_FILE)

    async def main() -> str:
        async with connect_stdio(server(root), protocol_version=VERSIONS[era]) as client:
            result = await client.call_tool("edit_file", {**arguments, "path": "copy.ini"})
        return str(result["structuredContent"]["diff"]).replace("copy.ini", "win.ini")

    try:
        return str(run_async(main))
    finally:
        copy.unlink()


def test_filesystem_view_of_an_edit_made_without_dry_run_has_nothing_to_apply(app_host, root) -> None:
    arguments = {"path": "bom.txt", "edits": [{"oldText": "second", "newText": "2nd"}]}
    hosted = app_host(server(root), "edit_file", arguments, "modern")
    view = hosted.view
    view.locator("#mode", has_text="Applied").wait_for()
    assert view.locator("#apply").is_hidden() and view.locator("#status").text_content() == "2 changed line(s)"
    assert [row[:3] for row in diff_rows(hosted)] == [["", "", ""], ["1", "1", " "], ["2", "", "−"], ["", "2", "+"]]
    assert (root / "bom.txt").read_bytes() == codecs.BOM_UTF8 + b"first line\n2nd\n"
    assert hosted.record()["calls"] == []


def test_filesystem_view_apply_that_fails_says_so_and_writes_nothing(app_host, root) -> None:
    arguments = {"path": "win.ini", "edits": CRLF_EDITS, "dryRun": True}
    hosted = app_host(server(root), "edit_file", arguments, "legacy")
    view = hosted.view
    view.locator("#mode", has_text="Dry run").wait_for()
    changed = CRLF_FILE.replace(b"name = old", b"name = changed meanwhile")
    (root / "win.ini").write_bytes(changed)  # someone else edits the file between the dry run and apply
    view.locator("#apply").click()
    view.locator("#status", has_text="not applied").wait_for()
    assert "Edit 1: oldText was not found" in (view.locator("#error").text_content() or "")
    assert view.locator("#mode").text_content() == "Dry run: nothing written"
    assert view.locator("#apply").is_enabled()
    assert (root / "win.ini").read_bytes() == changed
    assert hosted.errors == []


@pytest.mark.parametrize("era", ERAS)
def test_filesystem_without_the_extension_sees_unchanged_results(root, era: str) -> None:
    arguments = {"path": "win.ini", "edits": CRLF_EDITS, "dryRun": True}

    async def main() -> tuple[Any, ...]:
        async with connect_stdio(server(root), protocol_version=VERSIONS[era]) as plain:
            tools = await plain.list_all_tools()
            resources = await plain.list_all_resources()
            result = await plain.call_tool("edit_file", arguments)
        async with connect_stdio(server(root), protocol_version=VERSIONS[era], extensions=APPS) as apps:
            app_tools = await apps.list_all_tools()
            app_result = await apps.call_tool("edit_file", arguments)
        return tools, resources, result, app_tools, app_result

    tools, resources, result, app_tools, app_result = run_async(main)
    (edit,) = [tool for tool in tools if tool["name"] == "edit_file"]
    (app_edit,) = [tool for tool in app_tools if tool["name"] == "edit_file"]
    assert "_meta" not in edit and app_edit["_meta"]["ui"]["resourceUri"] == DIFF_URI
    assert {key: value for key, value in app_edit.items() if key != "_meta"} == edit
    assert not [resource for resource in resources if resource["uri"].startswith("ui://")]
    assert set(result["structuredContent"]) == {"path", "diff", "applied", "notes"}
    assert app_result["structuredContent"] == {**result["structuredContent"], "line_endings": "CRLF", "bom": None}
    assert result["content"] == app_result["content"]


def test_readme_app_command_shows_the_diff(chromium_browser, tmp_path) -> None:
    """The filesystem README's line, as written, in a directory holding notes.txt; apply writes it."""
    (tmp_path / "notes.txt").write_text("A draft of the notes.\n")
    edit = '{"path": "notes.txt", "edits": [{"oldText": "draft", "newText": "final"}], "dryRun": true}'
    command = ["plainmcp", "app", "edit_file", "--args", edit, "--", "plainmcp-filesystem", "--allow-write", "."]
    with readme_command(chromium_browser, command, cwd=tmp_path) as view:
        view.locator("#mode", has_text="Dry run").wait_for()
        assert view.locator("tr.add td.text").text_content() == "A·final·of·the·notes."
        view.locator("#apply").click()
        view.locator("#mode", has_text="Applied").wait_for()
    assert (tmp_path / "notes.txt").read_text() == "A final of the notes.\n"
