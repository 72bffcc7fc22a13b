"""watchfiles' polling rules, for servers that make its ``RustNotify`` themselves.

A server that must know when its file watch is registered (to answer a subscription only then) makes
watchfiles' ``RustNotify`` on a worker thread instead of using ``awatch``, which makes it at its
first step and does not say. ``awatch`` also reads the environment to decide between inotify and
polling; :func:`watchfiles_polling` is that decision, so such a server behaves as ``awatch`` would.
No watchfiles import here: the core does not depend on it.
"""

from __future__ import annotations

import os


def watchfiles_polling() -> tuple[bool, int]:
    """``(force_polling, poll_delay_ms)`` as watchfiles' ``awatch`` decides them:
    ``WATCHFILES_FORCE_POLLING`` (any value but false/disable/disabled), else polling on WSL (inotify
    misses changes made from Windows); ``WATCHFILES_POLL_DELAY_MS``, else 300."""
    forced = os.environ.get("WATCHFILES_FORCE_POLLING")
    if forced:
        force_polling = forced.lower() not in {"false", "disable", "disabled"}
    else:
        system = os.uname()
        force_polling = system.sysname == "Linux" and "microsoft-standard" in system.release.lower()
    delay = os.environ.get("WATCHFILES_POLL_DELAY_MS", "")
    return force_polling, int(delay) if delay.isdecimal() else 300
