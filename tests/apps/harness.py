"""The browser harness for MCP Apps views: a real host, a real server, a real browser.

:func:`open_view` starts ``plainmcp app`` (the development host: a page built on ``AppBridge`` of npm
``@modelcontextprotocol/ext-apps``, a sandbox proxy on a second origin, the view in its inner iframe) against
a server command or URL, in one era, and opens its page in headless Chromium. The view's ``tools/call``
requests go back through the host process's plainmcp client to the server. :class:`HostedView` gives the
page, the view's frame (a Playwright ``FrameLocator``), the host's record of the exchange, and screenshots.

The browser is Debian's ``/usr/bin/chromium`` (never a downloaded one); missing, the tests skip with the
install line, or fail under ``CI``. The bridge bundle comes from ``tools/app_bridge.py`` (npm, at set-up).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
IMAGES = ROOT / "docs" / "images"
#: Set to 1 to also write each screenshot to docs/images (the READMEs show them).
DOCS_IMAGES_ENV = "PLAINMCP_DOCS_IMAGES"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PLAINMCP = [sys.executable, "-m", "plainmcp.cli"]
#: Bound for the host to start, the page to reach a state, a view to render.
QUICK = 30.0
ERAS = ("legacy", "modern")


def chromium() -> str:
    """Debian's Chromium: skipped with the install line when absent (failed under CI, which must run it)."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        message = "chromium is not installed (apt-get install -y chromium; no browser is downloaded)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def ensure_bridge() -> Path:
    """The bundled ``AppBridge`` (built once by tools/app_bridge.py from the pinned npm packages)."""
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import app_bridge
    finally:
        sys.path.remove(str(ROOT / "tools"))
    try:
        return Path(app_bridge.build())
    except Exception as error:  # no npm registry reachable, no Node: say so, do not hide it under CI
        if os.environ.get("CI"):
            raise
        pytest.skip(f"the MCP Apps host bridge could not be built (python3 tools/app_bridge.py): {error}")


@dataclass
class HostProcess:
    """A running ``plainmcp app``: its URL and the process (stderr kept in ``log``)."""

    process: subprocess.Popen[str]
    url: str
    log: Path


@contextmanager
def app_process(
    target: Sequence[str] | str, tool: str, arguments: dict[str, Any], era: str, log: Path, *, theme: str = "light"
) -> Iterator[HostProcess]:
    """``plainmcp app`` for ``target`` (a command as a list, or a URL) and ``tool`` with ``arguments``."""
    import json

    command = [*PLAINMCP, "app", "--era", era, "--args", json.dumps(arguments), "--theme", theme, "--timeout", "20"]
    command += [tool, "--", *target] if not isinstance(target, str) else [target, tool]
    with log.open("w") as stderr:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=stderr, text=True)
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + QUICK
        url = ""
        while not url.startswith("http") and time.monotonic() < deadline:
            url = process.stdout.readline().strip()
            if not url and process.poll() is not None:
                break
        if not url.startswith("http"):
            raise AssertionError(f"plainmcp app did not start:\n{log.read_text()}")
        yield HostProcess(process, url, log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@dataclass
class HostedView:
    """A view rendered by the host page: the page, the view's frame, and helpers to wait and keep pictures."""

    page: Any
    host: HostProcess
    errors: list[str]

    @property
    def view(self) -> Any:
        """The view's document (the inner iframe of the sandbox proxy), as a Playwright FrameLocator."""
        return self.page.frame_locator("#sandbox").frame_locator("iframe")

    def state(self) -> str:
        return str(self.page.evaluate("document.documentElement.dataset.state"))

    def wait_for_state(self, state: str) -> None:
        # A selector, not wait_for_function: the host page's CSP (no eval) refuses Playwright's predicates.
        self.page.locator(f"html[data-state='{state}']").wait_for(state="attached", timeout=QUICK * 1000)

    def record(self) -> dict[str, Any]:
        """What the host saw from the view: its tool calls, log messages, ui/message, model context, sizes."""
        return dict(self.page.evaluate("window.plainmcpHost.record"))

    def call(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """The host calls the tool again with ``arguments`` and sends the view the new input and result."""
        return dict(self.page.evaluate("(args) => window.plainmcpHost.call(args)", arguments))

    def set_theme(self, theme: str) -> None:
        self.page.evaluate("(theme) => window.plainmcpHost.setTheme(theme)", theme)

    def screenshot(self, name: str, *, docs: str | None = None) -> Path:
        """The view's frame as the host shows it, kept as ``tests/apps/artifacts/<name>.png`` (git-ignored);
        with ``docs`` and PLAINMCP_DOCS_IMAGES=1, also as ``docs/images/<docs>.png`` (the READMEs show those)."""
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.locator("#frame").screenshot(path=str(path))
        if docs is not None and os.environ.get(DOCS_IMAGES_ENV) == "1":
            IMAGES.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, IMAGES / f"{docs}.png")
        return path


@contextmanager
def browser() -> Iterator[Any]:
    """Headless Debian Chromium through Playwright (skipped without it)."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@contextmanager
def open_view(
    browser_: Any,
    target: Sequence[str] | str,
    tool: str,
    arguments: dict[str, Any],
    era: str,
    log: Path,
    *,
    theme: str = "light",
    state: str = "result",
) -> Iterator[HostedView]:
    """The host page for ``tool`` of ``target`` in ``era`` ("legacy" or "modern"), its view rendered (the
    host reached ``state``: "result" once the tool's result was sent to the view)."""
    with app_process(target, tool, arguments, era, log, theme=theme) as host:
        context = browser_.new_context(viewport={"width": 960, "height": 900}, color_scheme=theme)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        try:
            page.goto(host.url)
            hosted = HostedView(page, host, errors)
            hosted.wait_for_state(state)
            yield hosted
        finally:
            context.close()
