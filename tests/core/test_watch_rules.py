"""watchfiles_polling: the environment's say over inotify or polling, as watchfiles' awatch reads it."""

from __future__ import annotations

import pytest
from plainmcp import watchfiles_polling


def test_watchfiles_polling_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHFILES_FORCE_POLLING", raising=False)
    monkeypatch.delenv("WATCHFILES_POLL_DELAY_MS", raising=False)
    forced, delay = watchfiles_polling()
    assert delay == 300 and forced is ("microsoft-standard" in __import__("os").uname().release.lower())
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "1")
    monkeypatch.setenv("WATCHFILES_POLL_DELAY_MS", "50")
    assert watchfiles_polling() == (True, 50)
    monkeypatch.setenv("WATCHFILES_FORCE_POLLING", "Disabled")
    monkeypatch.setenv("WATCHFILES_POLL_DELAY_MS", "-5")  # not a number of milliseconds: the default
    assert watchfiles_polling() == (False, 300)
