"""A subscription is acknowledged only once the watch that reports its changes is in place.

Real server processes over stdio, real files, the real watcher (watchfiles). The client subscribes and
changes the file as soon as the acknowledgement arrives, the way a demo, a test or an editor does: every
change must be reported. Each wait is bounded (:data:`WAIT`); nothing asserts how fast it comes.

Regression: ``resources/subscribe`` (and ``subscriptions/listen``'s acknowledgement) used to go out before
the watcher had registered its watch with the kernel, and a change made at once went unseen.
"""

from __future__ import annotations

import logging
import os
import resource
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import Client, connect_stdio
from plainmcp.testing import connect_in_memory
from plainmcp_filesystem.config import Config
from plainmcp_filesystem.server import build_server, default_deps

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

MODERN = "2026-07-28"
#: The longest a test waits for one notification (it normally comes within the debounce).
WAIT = 5.0
ROUNDS = 20
UPDATED = "notifications/resources/updated"


def command(root: Path) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", str(root), "--debounce-ms", "100", "--log-level", "warning"]


class Inbox:
    """Notifications a legacy client received, with a bounded wait for an update of one URI."""

    def __init__(self) -> None:
        self.items: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, notification: Any) -> None:
        self.items.append((notification.method, notification.params or {}))

    async def updated(self, uri: str) -> bool:
        with anyio.move_on_after(WAIT):
            while not any(m == UPDATED and p.get("uri") == uri for m, p in self.items):
                await anyio.sleep(0.02)
        return any(m == UPDATED and p.get("uri") == uri for m, p in self.items)


async def subscribe_then_change_legacy(root: Path, path: Path) -> bool:
    """A fresh server: ``resources/subscribe`` right after ``initialize``, the change right after its result."""
    inbox = Inbox()
    async with connect_stdio(command(root), on_notification=inbox) as client:
        await client.subscribe(path.as_uri())
        with path.open("a", encoding="utf-8") as file:
            file.write("changed right after subscribing\n")
        return await inbox.updated(path.as_uri())


async def subscribe_then_change_modern(root: Path, path: Path) -> bool:
    """A fresh server: ``subscriptions/listen`` at once, the change right after its acknowledgement."""
    async with connect_stdio(command(root), protocol_version=MODERN) as client:
        async with client.listen(uris=[path.as_uri()]) as subscription:
            with path.open("a", encoding="utf-8") as file:
                file.write("changed right after listening\n")
            with anyio.move_on_after(WAIT):
                while (await subscription.next()).method != UPDATED:
                    pass
                return True
    return False


async def test_subscribe_ready_a_change_right_after_the_acknowledgement_is_reported(tmp_path: Path) -> None:
    missed: list[str] = []
    with anyio.fail_after(ROUNDS * (WAIT + 15)):
        for round_ in range(ROUNDS):
            root = tmp_path / f"round{round_}"
            root.mkdir()
            path = root / f"fresh{round_}.txt"
            path.write_text("start\n", encoding="utf-8")
            era = "modern" if round_ % 2 else "legacy"
            subscribe_then_change = subscribe_then_change_modern if round_ % 2 else subscribe_then_change_legacy
            if not await subscribe_then_change(root, path):
                missed.append(f"{era} round {round_}")
    assert missed == [], f"{len(missed)} of {ROUNDS} changes made right after subscribing went unreported: {missed}"


async def test_subscribe_ready_a_file_in_a_new_directory_is_watched_before_the_acknowledgement(
    tmp_path: Path,
) -> None:
    # One server; each round makes a directory and a file in it, subscribes at once and changes the file:
    # the subscription is answered once the watch includes the new directory (the watcher rebuilds it).
    (tmp_path / "start.txt").write_text("start\n", encoding="utf-8")
    inbox = Inbox()
    missed: list[int] = []
    with anyio.fail_after(ROUNDS * (WAIT + 15)):
        async with connect_stdio(command(tmp_path), on_notification=inbox) as client:
            await settle(client, inbox, tmp_path / "start.txt")
            for round_ in range(ROUNDS):
                path = tmp_path / f"new{round_}" / "fresh.txt"
                path.parent.mkdir()
                path.write_text("start\n", encoding="utf-8")
                await client.subscribe(path.as_uri())
                path.write_text("changed right after subscribing\n", encoding="utf-8")
                if not await inbox.updated(path.as_uri()):
                    missed.append(round_)
    assert missed == [], f"{len(missed)} of {ROUNDS} changes in new directories went unreported: rounds {missed}"


async def settle(client: Client, inbox: Inbox, path: Path) -> None:
    """Wait until the server watches (a change of ``path`` is reported), so the rounds test the rebuilds."""
    await client.subscribe(path.as_uri())
    for attempt in range(20):
        path.write_text(f"revision {attempt}\n", encoding="utf-8")
        if await inbox.updated(path.as_uri()):
            return
    raise AssertionError("the server never reported a change")


def watch_threads() -> int:
    """The watchfiles (notify) threads of this process, by their kernel names."""
    names = [name for task in os.listdir("/proc/self/task") if (name := _thread_name(task)) is not None]
    return sum(1 for name in names if name.startswith("notify-rs"))


async def test_subscribe_ready_rebuilds_and_the_session_end_leave_no_watch_thread(tmp_path: Path) -> None:
    # In process, to count this process's threads; the watcher and watchfiles are the real ones.
    config = Config(roots=(str(tmp_path),), debounce_ms=50)
    deps = default_deps(config)
    server = build_server(config, deps)
    before = watch_threads()
    inbox = Inbox()
    with anyio.fail_after(60):
        async with connect_in_memory(server, on_notification=inbox) as client:
            for round_ in range(5):  # each new directory rebuilds the watch, the old one then closes
                path = tmp_path / f"new{round_}" / "fresh.txt"
                path.parent.mkdir()
                path.write_text("start\n", encoding="utf-8")
                await client.subscribe(path.as_uri())
                path.write_text("changed\n", encoding="utf-8")
                assert await inbox.updated(path.as_uri()), round_
            while watch_threads() > before + 1:  # each old watch's thread ends soon after it is closed
                await anyio.sleep(0.02)
            assert watch_threads() == before + 1
        while watch_threads() > before:  # closed within a step of the session's end
            await anyio.sleep(0.02)
    assert deps.watcher is not None and deps.watcher.watching is False


async def test_subscribe_ready_a_watch_that_cannot_be_set_up_is_logged_once_and_subscriptions_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The process is at its open-file limit while the watcher starts: watchfiles cannot make its watch.
    config = Config(roots=(str(tmp_path),), debounce_ms=50)
    server = build_server(config, default_deps(config))
    caplog.set_level(logging.INFO, logger="plainmcp_filesystem.watch")
    used = {int(fd) for fd in os.listdir("/proc/self/fd")}
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    with anyio.fail_after(60):
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(set(range(len(used) + 1)) - used), limits[1]))
        try:
            async with connect_in_memory(server) as client:
                for name in ("a.txt", "b.txt", "c.txt"):
                    await client.subscribe((tmp_path / name).as_uri())
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    messages = [record.getMessage() for record in caplog.records if record.name == "plainmcp_filesystem.watch"]
    assert sum("the file watcher failed" in message for message in messages) == 1, messages
    # Answered because the watch failed, not because the wait for it ran out.
    assert not any("was not in place" in message for message in messages), messages


def inotify_descriptors(pid: int) -> int:
    """How many inotify instances process ``pid`` holds open (its descriptors' link names say)."""
    links = [os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")]
    return sum(1 for link in links if link == "anon_inode:inotify")


@pytest.mark.parametrize("polling", [False, True])
async def test_subscribe_ready_the_watch_follows_watchfiles_variables(tmp_path: Path, polling: bool) -> None:
    # watchfiles' own switch to polling (WATCHFILES_FORCE_POLLING, and WSL) still applies, and the
    # subscription waits for the polling watch as for inotify's.
    env = {key: value for key, value in os.environ.items() if not key.startswith("WATCHFILES_")}
    if polling:
        env.update(WATCHFILES_FORCE_POLLING="1", WATCHFILES_POLL_DELAY_MS="50")
    path = tmp_path / "fresh.txt"
    path.write_text("start\n", encoding="utf-8")
    inbox = Inbox()
    with anyio.fail_after(60):
        async with connect_stdio(command(tmp_path), env=env, on_notification=inbox) as client:
            await client.subscribe(path.as_uri())
            path.write_text("changed right after subscribing\n", encoding="utf-8")
            # Polling compares modification times in whole seconds: this change is in another second.
            later = path.stat().st_mtime + 5
            os.utime(path, (later, later))
            assert await inbox.updated(path.as_uri())
            assert client.process is not None
            assert inotify_descriptors(client.process.pid) == (0 if polling else 1)


async def test_subscribe_ready_a_directory_made_as_the_watch_starts_is_watched(tmp_path: Path) -> None:
    # A directory made while the watcher starts (after its first scan, before its watch is registered) is
    # in neither and makes no event: it must be watched all the same. In process, so that the directory
    # is made right as the client connects; each round a fresh server on a fresh tree.
    missed: list[int] = []
    with anyio.fail_after(ROUNDS * (WAIT + 15)):
        for round_ in range(ROUNDS):
            root = tmp_path / f"round{round_}"
            root.mkdir()
            config = Config(roots=(str(root),), debounce_ms=50)
            inbox = Inbox()
            async with connect_in_memory(build_server(config, default_deps(config)), on_notification=inbox) as client:
                await anyio.sleep(round_ * 0.00015)  # each round a little later in the watcher's start
                path = root / "new" / "fresh.txt"
                path.parent.mkdir()
                path.write_text("start\n", encoding="utf-8")
                await client.subscribe(path.as_uri())
                path.write_text("changed right after subscribing\n", encoding="utf-8")
                if not await inbox.updated(path.as_uri()):
                    missed.append(round_)
    assert missed == [], f"{len(missed)} of {ROUNDS} changes in a directory made as the watch started: {missed}"


def _thread_name(task: str) -> str | None:
    """A thread's name, or None for one that ended between the listing and the read (it runs no watch)."""
    try:
        return Path(f"/proc/self/task/{task}/comm").read_text().strip()
    except FileNotFoundError:
        return None
