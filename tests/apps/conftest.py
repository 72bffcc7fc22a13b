"""Fixtures of the browser tests: one Chromium per run, the bridge built once, and ``app_host``."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from typing import Any

import pytest

from . import harness


@pytest.fixture(scope="session")
def app_bridge() -> Any:
    return harness.ensure_bridge()


@pytest.fixture(scope="module")
def chromium_browser(app_bridge: Any) -> Iterator[Any]:
    # Module-scoped, not session-scoped: Playwright's sync API keeps an asyncio loop running on this thread
    # while it is open, and every async (anyio) test that runs meanwhile would find a loop already running.
    # So a module of browser tests holds only sync tests, and its browser is closed before the next module.
    with harness.browser() as launched:
        yield launched


@pytest.fixture
def app_host(chromium_browser: Any, tmp_path: Any) -> Iterator[Callable[..., harness.HostedView]]:
    """``app_host(server_command_or_url, tool, args, era, theme="light") -> HostedView``: the view of that
    tool call rendered by the development host in Chromium (closed at the end of the test)."""
    with ExitStack() as stack:
        count = 0

        def open_one(
            target: Sequence[str] | str, tool: str, args: dict[str, Any], era: str, **options: Any
        ) -> harness.HostedView:
            nonlocal count
            count += 1
            log = tmp_path / f"app-host-{count}.log"
            return stack.enter_context(harness.open_view(chromium_browser, target, tool, args, era, log, **options))

        yield open_one
