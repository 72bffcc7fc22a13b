"""The sqlite result grid (ui://plainmcp-sqlite/result-grid.html) in headless Chromium, through the
official host bridge (``plainmcp app``), against the real sqlite server over stdio on a real database
file, in both eras: column names and types, NULLs distinct from the text 'NULL', hostile cells as text,
sorting from the keyboard, "next page" through the host to the server, the chart, CSV; and a client
without the extension gets the result it always got."""

from __future__ import annotations

import csv
import io
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import APP_MIME, UI_EXTENSION, connect_stdio
from plainmcp_sqlite.tools import GRID_URI

from .harness import ERAS, QUICK

APPS = {UI_EXTENSION: {"mimeTypes": [APP_MIME]}}
VERSIONS = {"legacy": "2025-11-25", "modern": "2026-07-28"}
SCRIPT = "<script>alert(1)</script>"
IMAGE = '<img src=x onerror="parent.parent.__pwned=1">'
ROWS = 60
PAGE = 25
QUERY = {"sql": "SELECT id, name, price, note FROM items ORDER BY id", "max_rows": PAGE}


def note(i: int) -> str | None:
    """Row ``i``'s note: the hostile texts, the text 'NULL', real NULLs, and text that CSV must quote."""
    return {2: "NULL", 4: SCRIPT, 5: IMAGE, 9: 'say "hi", then\nleave'}.get(i, None if i % 3 == 0 else f"note {i}")


def price(i: int) -> float | None:
    return None if i % 7 == 0 else float(i % 11) * 1.5  # whole REALs among them (3.0, 12.0)


@pytest.fixture
def database(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL, note TEXT)")
    connection.executemany(
        "INSERT INTO items VALUES (?, ?, ?, ?)", [(i, f"item {i}", price(i), note(i)) for i in range(1, ROWS + 1)]
    )
    connection.close()
    return path


def server(path: Path) -> list[str]:
    return [sys.executable, "-m", "plainmcp_sqlite", "--db", str(path), "--log-level", "warning"]


def run_async(main: Any) -> Any:
    """``anyio.run(main)`` on a thread of its own: Playwright's sync API keeps an event loop on this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


def direct(path: Path, arguments: dict[str, Any], era: str, **options: Any) -> dict[str, Any]:
    """The same call made by a plain MCP client over stdio: what the view must show."""

    async def main() -> dict[str, Any]:
        async with connect_stdio(server(path), protocol_version=VERSIONS[era], **options) as client:
            return dict(await client.call_tool("query", arguments))

    return dict(run_async(main))


def body(hosted: Any) -> list[list[str]]:
    """The grid's rows as shown: the row number, then each cell's text."""
    rows = hosted.view.locator("#grid tbody tr")
    return [row.locator("td").all_text_contents() for row in rows.all()]


def shown(value: Any, real: bool = False) -> str:
    if value is None:
        return "NULL"
    if real and float(value).is_integer():
        return f"{float(value):.1f}"
    return str(value)


def expected_rows(structured: dict[str, Any], first: int) -> list[list[str]]:
    return [
        [str(first + n), str(row[0]), row[1], shown(row[2], real=True), shown(row[3])]
        for n, row in enumerate(structured["rows"])
    ]


@pytest.mark.parametrize("era", ERAS)
def test_sqlite_view_renders_types_nulls_and_hostile_cells_as_text(app_host, database, era: str) -> None:
    page_one = direct(database, QUERY, era, extensions=APPS)["structuredContent"]
    hosted = app_host(server(database), "query", QUERY, era)
    view = hosted.view
    view.locator("#status", has_text="page 1").wait_for()
    assert view.locator("thead .name").all_text_contents() == ["id", "name", "price", "note"]
    assert view.locator("thead .type").all_text_contents() == ["INTEGER", "TEXT", "NULL | REAL", "NULL | TEXT"]
    assert body(hosted) == expected_rows(page_one, 1)
    # NULLs are marked as such; the text 'NULL' (row 2's note) is a plain cell.
    nulls = sum(value is None for row in page_one["rows"] for value in row)
    assert view.locator("td[data-null]").count() == nulls > 0
    assert view.locator("tbody tr").nth(1).locator("td").nth(4).get_attribute("data-null") is None
    # The hostile cells are text: no element came of them, nothing ran.
    assert view.locator("tbody tr").nth(3).locator("td").nth(4).text_content() == SCRIPT
    assert view.locator("tbody tr").nth(4).locator("td").nth(4).text_content() == IMAGE
    assert view.locator("tbody img, tbody script").count() == 0
    assert hosted.page.evaluate("window.__pwned") is None
    assert "Rows 1–25, page 1; more rows exist" == view.locator("#status").text_content()
    hosted.screenshot(f"sqlite-result-grid-{era}", docs="sqlite-result-grid" if era == "legacy" else None)
    assert hosted.errors == []


@pytest.mark.parametrize("era", ERAS)
def test_sqlite_view_next_page_round_trips_through_the_host(app_host, database, era: str) -> None:
    page_one = direct(database, QUERY, era, extensions=APPS)["structuredContent"]
    page_two = direct(database, {**QUERY, "cursor": page_one["next_cursor"]}, era)["structuredContent"]
    hosted = app_host(server(database), "query", QUERY, era)
    view = hosted.view
    view.locator("#status", has_text="page 1").wait_for()
    view.locator("#next").click()
    view.locator("#status", has_text="page 2").wait_for()
    # The view asked the host, the host the server: one call, the first page's cursor, the same statement.
    assert hosted.record()["calls"] == [{"name": "query", "arguments": {**QUERY, "cursor": page_one["next_cursor"]}}]
    assert body(hosted) == expected_rows(page_two, PAGE + 1)
    assert [row[1] for row in body(hosted)] == [str(i) for i in range(PAGE + 1, 2 * PAGE + 1)]
    assert view.locator("#status").text_content() == "Rows 26–50, page 2; more rows exist"
    hosted.screenshot(f"sqlite-result-grid-page-2-{era}")
    # The last page has no cursor: the button is disabled.
    view.locator("#next").click()
    view.locator("#status", has_text="page 3").wait_for()
    assert [row[1] for row in body(hosted)] == [str(i) for i in range(2 * PAGE + 1, ROWS + 1)]
    assert view.locator("#next").is_disabled()
    assert hosted.errors == []


def test_sqlite_view_sorts_by_a_column_from_the_keyboard(app_host, database) -> None:
    hosted = app_host(server(database), "query", QUERY, "legacy")
    view = hosted.view
    view.locator("#status", has_text="page 1").wait_for()
    header = view.locator("button.sort[data-column='2']")
    header.focus()
    header.press("Enter")
    prices = [row[3] for row in body(hosted)]
    values = [price(i) for i in range(1, PAGE + 1)]
    # SQLite's order: NULLs first, then the numbers ascending (ties keep the row order).
    assert prices == [shown(v, real=True) for v in sorted(values, key=lambda v: (v is not None, v or 0))]
    assert view.locator("th[aria-sort='ascending'] .name").text_content() == "price"
    view.locator("button.sort[data-column='2']").press("Enter")
    assert view.locator("th[aria-sort='descending'] .name").text_content() == "price"
    descending = [row[3] for row in body(hosted)]
    assert descending[0] == shown(max(v for v in values if v is not None), real=True) and descending[-1] == "NULL"
    # The text column sorts by code point, NULLs first.
    view.locator("button.sort[data-column='3']").press("Enter")
    notes = [row[4] for row in body(hosted)]
    texts = [note(i) for i in range(1, PAGE + 1)]
    assert notes == [shown(v) for v in sorted(texts, key=lambda v: (v is not None, v or ""))]
    assert hosted.errors == []


def test_sqlite_view_charts_a_numeric_column(app_host, database) -> None:
    hosted = app_host(server(database), "query", QUERY, "modern", theme="dark")
    view = hosted.view
    view.locator("#status", has_text="page 1").wait_for()
    assert view.locator("html").get_attribute("data-theme") == "dark"
    assert view.locator("#chart-box").is_visible()
    assert view.locator("#chart-column option").all_text_contents() == ["id", "price"]
    assert view.locator("#chart-column").input_value() == "2"  # price, not the key
    values = [price(i) for i in range(1, PAGE + 1)]
    bars = view.locator("#chart rect.bar-rect")
    assert bars.count() == sum(v is not None for v in values)
    heights = [float(bar.get_attribute("height") or 0) for bar in bars.all()]
    tallest = max(v for v in values if v is not None)
    tallest_bar = bars.nth(heights.index(max(heights)))
    assert tallest_bar.locator("title").text_content().endswith(f": {shown(tallest, real=True)}")
    assert view.locator("#chart .tick").all_text_contents() == [f"{tallest:g}", "0"]
    hosted.screenshot("sqlite-result-grid-chart-dark", docs="sqlite-result-grid-dark")
    view.locator("#chart-column").select_option("0")
    assert view.locator("#chart rect.bar-rect").count() == PAGE
    assert hosted.errors == []


def test_sqlite_view_follows_the_host_theme_and_new_results(app_host, database) -> None:
    hosted = app_host(server(database), "query", QUERY, "modern")
    view = hosted.view
    view.locator("#status", has_text="page 1").wait_for()
    view.locator("#next").click()
    view.locator("#status", has_text="page 2").wait_for()
    light = view.locator("body").evaluate("body => getComputedStyle(body).backgroundColor")
    hosted.set_theme("dark")
    view.locator("html[data-theme='dark']").wait_for(state="attached")
    assert view.locator("body").evaluate("body => getComputedStyle(body).backgroundColor") != light
    # The host calls the tool again: the grid starts over with the new result and its arguments.
    hosted.call({"sql": "SELECT count(*) AS n, sum(price) AS total FROM items"})
    view.locator("#status", has_text="Rows 1–1, page 1").wait_for()
    assert view.locator("thead .name").all_text_contents() == ["n", "total"]
    assert view.locator("thead .type").all_text_contents() == ["INTEGER", "REAL"]
    assert body(hosted) == [["1", str(ROWS), shown(sum(p for i in range(1, ROWS + 1) if (p := price(i))), real=True)]]
    assert view.locator("#next").is_disabled()
    assert hosted.errors == []


def test_sqlite_view_copies_the_page_as_csv(app_host, database) -> None:
    hosted = app_host(server(database), "query", QUERY, "legacy")
    hosted.page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    view = hosted.view
    view.locator("#status", has_text="page 1").wait_for()
    view.locator("#copy").click()
    view.locator("#status", has_text="Copied 25 row(s) as CSV").wait_for()
    copied = hosted.page.evaluate("navigator.clipboard.readText()")
    # RFC 4180 as Python's csv module writes it: CRLF line ends, quotes only where needed; NULL is empty.
    expected = io.StringIO()
    writer = csv.writer(expected, lineterminator="\r\n")
    writer.writerow(["id", "name", "price", "note"])
    for i in range(1, PAGE + 1):
        writer.writerow([i, f"item {i}", "" if price(i) is None else f"{price(i):.1f}", note(i) or ""])
    assert copied == expected.getvalue()
    assert '9,item 9,13.5,"say ""hi"", then\nleave"\r\n' in copied and "\r\n2,item 2,3.0,NULL\r\n" in copied
    # The same text is kept in the view (a textarea's value has LF line ends).
    assert view.locator("#csv").input_value() == copied.replace("\r\n", "\n")
    assert hosted.errors == []


@pytest.mark.parametrize("era", ERAS)
def test_sqlite_without_the_extension_sees_unchanged_results(database, era: str) -> None:
    async def main() -> tuple[Any, ...]:
        async with connect_stdio(server(database), protocol_version=VERSIONS[era]) as plain:
            tools = await plain.list_all_tools()
            resources = await plain.list_all_resources()
            result = await plain.call_tool("query", QUERY)
        async with connect_stdio(server(database), protocol_version=VERSIONS[era], extensions=APPS) as apps:
            app_tools = await apps.list_all_tools()
            app_result = await apps.call_tool("query", QUERY)
        return tools, resources, result, app_tools, app_result

    tools, resources, result, app_tools, app_result = run_async(main)
    (query,) = [tool for tool in tools if tool["name"] == "query"]
    (app_query,) = [tool for tool in app_tools if tool["name"] == "query"]
    assert "_meta" not in query and app_query["_meta"]["ui"]["resourceUri"] == GRID_URI
    assert {key: value for key, value in app_query.items() if key != "_meta"} == query
    assert not [resource for resource in resources if resource["uri"].startswith("ui://")]
    structured = {key: value for key, value in app_result["structuredContent"].items() if key != "column_types"}
    assert "column_types" not in result["structuredContent"] and structured == result["structuredContent"]
    assert result["content"] == app_result["content"]


@contextmanager
def readme_command(chromium_browser: Any, command: list[str], cwd: Path | None = None) -> Iterator[Any]:
    """A README's ``plainmcp app`` line run as a user runs it (the environment's scripts on PATH): the view
    of the page it prints, in Chromium, once the host sent it the tool's result."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.stderr.read() if process.stderr else ""
        page = chromium_browser.new_page()
        try:
            page.goto(url)
            page.locator("html[data-state='result']").wait_for(state="attached", timeout=QUICK * 1000)
            yield page.frame_locator("#sandbox").frame_locator("iframe")
        finally:
            page.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_readme_app_command_shows_the_grid(chromium_browser) -> None:
    """The sqlite README's line, on the bundled sample: 400 orders, the first 100 shown, and a next page."""
    command = ["plainmcp", "app", "plainmcp-sqlite", "query", "--arg", "sql=SELECT * FROM orders ORDER BY id"]
    with readme_command(chromium_browser, command) as view:
        view.locator("#status", has_text="page 1").wait_for()
        assert view.locator("#status").text_content() == "Rows 1–100, page 1; more rows exist"
        assert view.locator("thead .name").first.text_content() == "id"
        view.locator("#next").click()
        view.locator("#status", has_text="page 2").wait_for()
        assert view.locator("tbody tr").first.locator("td").nth(1).text_content() == "101"
