"""A subscription to the sqlite server is acknowledged only once the database's file watch is in place.

Real server processes over stdio, a real SQLite file, the real watcher (watchfiles). The test process
commits through its own connection as soon as the acknowledgement arrives (another process writing the
database, as the server sees it): every such commit must be reported. Each round is a fresh server, each
wait is bounded (:data:`WAIT`); nothing asserts how fast it comes.

Regression: ``resources/subscribe`` (and ``subscriptions/listen``'s acknowledgement) used to go out before
the watcher had started ``watchfiles.awatch``, and a commit made at once went unseen.
"""

from __future__ import annotations

import logging
import os
import resource
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio

from .support import STDIO_COMMAND, make_shop, serve

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:resources/subscribe is removed")]

MODERN = "2026-07-28"
#: The longest a round waits for its notification (it normally comes within watchfiles' debounce).
WAIT = 6.0
ROUNDS = 12
UPDATED = "notifications/resources/updated"
URI = "sqlite://table/customers"


def commit(path: Path, name: str) -> None:
    """One committed insert through a connection of this process (not the server's)."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        connection.execute("INSERT INTO customers (name) VALUES (?)", (name,))
    finally:
        connection.close()


def command(path: Path) -> list[str]:
    return [*STDIO_COMMAND, "--db", str(path), "--log-level", "warning"]


async def subscribe_then_commit_legacy(path: Path, name: str) -> bool:
    """A fresh server: ``resources/subscribe`` right after ``initialize``, the commit right after its result."""
    updates: list[str] = []

    def on_notification(notification: object) -> None:
        if getattr(notification, "method", None) == UPDATED:
            updates.append((getattr(notification, "params", None) or {}).get("uri", ""))

    async with connect_stdio(command(path), on_notification=on_notification) as client:
        await client.subscribe(URI)
        commit(path, name)
        with anyio.move_on_after(WAIT):
            while URI not in updates:
                await anyio.sleep(0.02)
        return URI in updates


async def subscribe_then_commit_modern(path: Path, name: str) -> bool:
    """A fresh server: ``subscriptions/listen`` at once, the commit right after its acknowledgement."""
    async with connect_stdio(command(path), protocol_version=MODERN) as client:
        async with client.listen(uris=[URI]) as subscription:
            commit(path, name)
            with anyio.move_on_after(WAIT):
                while (await subscription.next()).method != UPDATED:
                    pass
                return True
    return False


async def test_subscribe_ready_a_commit_right_after_the_acknowledgement_is_reported(tmp_path: Path) -> None:
    missed: list[str] = []
    with anyio.fail_after(ROUNDS * (WAIT + 20)):
        for round_ in range(ROUNDS):
            folder = tmp_path / f"round{round_}"
            folder.mkdir()
            path = make_shop(folder)
            era = "modern" if round_ % 2 else "legacy"
            subscribe_then_commit = subscribe_then_commit_modern if round_ % 2 else subscribe_then_commit_legacy
            if not await subscribe_then_commit(path, f"fresh {round_}"):
                missed.append(f"{era} round {round_}")
    assert missed == [], f"{len(missed)} of {ROUNDS} commits made right after subscribing went unreported: {missed}"


def watch_threads() -> int:
    """The watchfiles (notify) threads of this process, by their kernel names."""
    names = [Path(f"/proc/self/task/{task}/comm").read_text().strip() for task in os.listdir("/proc/self/task")]
    return sum(1 for name in names if name.startswith("notify-rs"))


async def test_subscribe_ready_unsubscribing_and_the_session_end_leave_no_watch_thread(tmp_path: Path) -> None:
    # In process, to count this process's threads; the server, its watcher and watchfiles are the real ones.
    path = make_shop(tmp_path)
    updates: list[str] = []

    async def on_notification(notification: Any) -> None:
        if notification.method == UPDATED:
            updates.append(notification.params["uri"])

    before = watch_threads()
    with anyio.fail_after(60):
        async with serve(path, on_notification=on_notification) as client:
            for round_ in range(3):  # each round starts a watch, the unsubscription stops it
                await client.subscribe(URI)
                assert watch_threads() == before + 1
                commit(path, f"in process {round_}")
                while URI not in updates:
                    await anyio.sleep(0.02)
                updates.clear()
                await client.unsubscribe(URI)
                while watch_threads() > before:  # the watch closes within a step of the unsubscription
                    await anyio.sleep(0.02)
            await client.subscribe(URI)
            assert watch_threads() == before + 1
        while watch_threads() > before:  # and within a step of the session's end
            await anyio.sleep(0.02)


async def test_subscribe_ready_a_watch_that_cannot_be_set_up_is_logged_once_and_subscriptions_answered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The process is at its open-file limit when the watcher starts: watchfiles cannot make its watch.
    path = make_shop(tmp_path)
    caplog.set_level(logging.INFO, logger="plainmcp_sqlite.watch")
    limits = resource.getrlimit(resource.RLIMIT_NOFILE)
    with anyio.fail_after(60):
        async with serve(path) as client:
            await client.read_resource("sqlite://schema")  # the reading connection is open now
            used = {int(fd) for fd in os.listdir("/proc/self/fd")}
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(set(range(len(used) + 1)) - used), limits[1]))
            try:
                for uri in (URI, "sqlite://schema", "sqlite://table/orders"):
                    await client.subscribe(uri)
            finally:
                resource.setrlimit(resource.RLIMIT_NOFILE, limits)
    messages = [record.getMessage() for record in caplog.records if record.name == "plainmcp_sqlite.watch"]
    assert sum("could not be set up" in message for message in messages) == 1, messages
    # Answered because the watch failed, not because the wait for it ran out.
    assert not any("was not in place" in message for message in messages), messages
