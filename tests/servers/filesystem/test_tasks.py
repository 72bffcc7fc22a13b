"""``search_content`` as a task (issue 17), on the real server process over stdio in both eras: a
2026-07-28 client that declared the tasks extension gets a taskId at once and polls or cancels; a
2025-11-25 client sends ``params.task`` and reads the matches with ``tasks/result``. A cancelled
regular-expression search kills its worker process (seen in /proc, not taken from the server)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from plainmcp import connect_stdio

from ..task_calls import LEGACY, MODERN, rpc, settled

pytestmark = pytest.mark.anyio

POLLS = 500

WAIT = 15.0
#: Backtracks exponentially over a line of many "a" ending in "b": the search runs until stopped.
BACKTRACKING = "(a+)+$"


def command(root: Path) -> list[str]:
    return [sys.executable, "-m", "plainmcp_filesystem", str(root), "--no-watch", "--search-timeout", "60"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small tree: "needle" on known lines of two files, none in the third."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("one\nneedle = 1\nthree\n")
    (tmp_path / "src" / "b.txt").write_text("needle\nno\n")
    (tmp_path / "c.md").write_text("nothing here\n")
    (tmp_path / "slow.txt").write_text("a" * 40 + "b\n")
    return tmp_path


def search(root: Path, query: str, **more: Any) -> dict[str, Any]:
    return {"name": "search_content", "arguments": {"path": str(root), "query": query, **more}}


def found(result: dict[str, Any], root: Path) -> list[tuple[str, int]]:
    return sorted(
        (os.path.relpath(match["path"], root), match["line"]) for match in result["structuredContent"]["matches"]
    )


def workers_of(pid: int) -> list[int]:
    """The grep worker processes whose parent is ``pid``, read from /proc."""
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue  # ended while we looked
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == pid and b"grep_worker" in cmdline:
            children.append(int(entry))
    return children


async def until_workers(pid: int, present: bool) -> list[int]:
    for _ in range(POLLS):
        workers = workers_of(pid)
        if bool(workers) == present:
            return workers
        await anyio.sleep(0.01)
    raise AssertionError(f"grep workers of {pid}: {workers_of(pid)}")


EXPECTED = [("src/a.py", 2), ("src/b.txt", 1)]


async def test_search_content_says_it_may_run_as_a_task(tree):
    async with connect_stdio(command(tree)) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
    assert tools["search_content"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["search_files"] and "execution" not in tools["read_text_file"]


async def test_modern_search_becomes_a_task_whose_result_is_the_matches(tree):
    async with connect_stdio(command(tree), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            created = await rpc(client, "tools/call", search(tree, "needle"))
            done = await settled(client, created["taskId"], "completed", "failed")
    assert created["resultType"] == "task" and created["status"] == "working" and "content" not in created
    assert done["status"] == "completed" and "isError" not in done["result"]
    assert found(done["result"], tree) == EXPECTED


async def test_modern_bad_arguments_are_refused_at_once_not_as_a_task(tree, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    async with connect_stdio(command(tree), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            denied = await rpc(client, "tools/call", search(outside, "needle"))
            bad_regex = await rpc(client, "tools/call", search(tree, "(", regex=True))
            a_file = await rpc(client, "tools/call", search(tree / "c.md", "needle"))
    for refused in (denied, bad_regex, a_file):
        assert refused["resultType"] == "complete" and refused["isError"] is True and "taskId" not in refused
    assert str(outside) not in denied["content"][0]["text"]


async def test_modern_cancel_kills_the_regex_worker(tree):
    async with connect_stdio(command(tree), protocol_version=MODERN) as client:
        pid = client.process.pid
        with anyio.fail_after(WAIT):
            task_id = (await rpc(client, "tools/call", search(tree, BACKTRACKING, regex=True)))["taskId"]
            running = await until_workers(pid, present=True)
            await rpc(client, "tasks/cancel", {"taskId": task_id})
            cancelled = await settled(client, task_id, "cancelled")
            left = await until_workers(pid, present=False)
            after = await rpc(client, "tools/call", search(tree, "needle"), extension=False)
    assert len(running) == 1 and left == []
    assert cancelled["status"] == "cancelled" and "result" not in cancelled
    assert found(after, tree) == EXPECTED


async def test_modern_client_without_the_extension_gets_an_ordinary_answer(tree):
    async with connect_stdio(command(tree), protocol_version=MODERN) as client:
        with anyio.fail_after(WAIT):
            result = await rpc(client, "tools/call", search(tree, "needle"), extension=False)
    assert result["resultType"] == "complete" and "taskId" not in result
    assert found(result, tree) == EXPECTED


async def test_legacy_search_with_params_task_is_read_with_tasks_result(tree):
    statuses: list[dict[str, Any]] = []

    def on_notification(notification: Any) -> None:
        if notification.method == "notifications/tasks/status":
            statuses.append(notification.params)

    async with connect_stdio(command(tree), protocol_version=LEGACY, on_notification=on_notification) as client:
        with anyio.fail_after(WAIT):
            created = await client.session.request("tools/call", {**search(tree, "needle"), "task": {"ttl": 60_000}})
            task_id = created["task"]["taskId"]
            result = await client.session.request("tasks/result", {"taskId": task_id})
            listed = await client.session.request("tasks/list", {})
            for _ in range(POLLS):  # the status notification may trail the result
                if statuses:
                    break
                await anyio.sleep(0.01)
    assert created["task"]["status"] == "working" and created["task"]["ttl"] == 60_000
    assert found(result, tree) == EXPECTED
    assert [(task["taskId"], task["status"]) for task in listed["tasks"]] == [(task_id, "completed")]
    assert statuses and statuses[-1]["taskId"] == task_id and statuses[-1]["status"] == "completed"


async def test_legacy_cancel_kills_the_regex_worker(tree):
    async with connect_stdio(command(tree), protocol_version=LEGACY) as client:
        pid = client.process.pid
        with anyio.fail_after(WAIT):
            created = await client.session.request("tools/call", {**search(tree, BACKTRACKING, regex=True), "task": {}})
            task_id = created["task"]["taskId"]
            await until_workers(pid, present=True)
            await client.session.request("tasks/cancel", {"taskId": task_id})
            cancelled = await settled(client, task_id, "cancelled", modern=False)
            left = await until_workers(pid, present=False)
    assert cancelled["status"] == "cancelled" and left == []
