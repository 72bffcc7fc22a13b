"""Request tasks are plain asyncio tasks that keep an anyio task group's guarantees: ``aclose`` (the
owner's ``finally``) cancels and waits for them, a failure reaches the group, and each starts in a
copy of its starter's context."""

from __future__ import annotations

import asyncio
import contextvars

import anyio
import pytest
from plainmcp import request_tasks
from plainmcp.request_tasks import RequestTasks

pytestmark = pytest.mark.anyio

VAR: contextvars.ContextVar[str] = contextvars.ContextVar("VAR", default="unset")


async def test_tasks_are_plain_asyncio_tasks_outside_the_group() -> None:
    names: list[str] = []

    async def work() -> None:
        names.append(asyncio.current_task().get_name())  # type: ignore[union-attr]  # always inside a task

    async with anyio.create_task_group() as group:
        tasks = RequestTasks(group)
        tasks.start_soon(work, name="plain-one")
        await anyio.wait_all_tasks_blocked()
        await tasks.aclose()
    assert names == ["plain-one"]


async def test_aclose_cancels_running_tasks_and_waits_for_their_cleanup() -> None:
    events: list[str] = []
    started = anyio.Event()

    async def slow() -> None:
        started.set()
        try:
            await anyio.sleep_forever()
        finally:
            events.append("cancelled")
            with anyio.CancelScope(shield=True):
                await anyio.sleep(0.01)  # cleanup that itself waits
            events.append("cleaned up")

    async with anyio.create_task_group() as group:
        tasks = RequestTasks(group)
        for _ in range(3):
            tasks.start_soon(slow, name="slow")
        await started.wait()
        await tasks.aclose()
        assert sorted(events) == ["cancelled"] * 3 + ["cleaned up"] * 3  # before aclose returned
    assert sorted(events) == ["cancelled"] * 3 + ["cleaned up"] * 3  # every cleanup finished before the group


async def test_an_outer_cancellation_reaches_the_tasks() -> None:
    finished: list[str] = []

    async def slow() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            finished.append("slow")

    with anyio.move_on_after(0.05):
        async with anyio.create_task_group() as group:
            tasks = RequestTasks(group)
            try:
                tasks.start_soon(slow, name="slow")
                await anyio.sleep_forever()
            finally:
                await tasks.aclose()  # under cancellation: shielded, it still waits
    assert finished == ["slow"]


async def test_a_failing_task_fails_the_group_like_a_child() -> None:
    async def fail() -> None:
        await anyio.sleep(0)
        raise LookupError("from a request task")

    other_cancelled = []

    async def other() -> None:
        try:
            await anyio.sleep_forever()
        finally:
            other_cancelled.append(True)

    with pytest.raises(ExceptionGroup) as raised:
        async with anyio.create_task_group() as group:
            tasks = RequestTasks(group)
            try:
                tasks.start_soon(other, name="other")
                tasks.start_soon(fail, name="fail")
                await anyio.sleep_forever()  # the failure cancels this, as a child's would
            finally:
                await tasks.aclose()
    assert [type(error) for error in raised.value.exceptions] == [LookupError]
    assert other_cancelled == [True]


async def test_each_task_starts_in_a_copy_of_the_starters_context() -> None:
    seen: list[str] = []

    async def work() -> None:
        seen.append(VAR.get())
        VAR.set("changed inside")

    async with anyio.create_task_group() as group:
        tasks = RequestTasks(group)
        VAR.set("first")
        tasks.start_soon(work, name="one")
        VAR.set("second")
        tasks.start_soon(work, name="two")
        await anyio.wait_all_tasks_blocked()
        await tasks.aclose()
    assert seen == ["first", "second"]
    assert VAR.get() == "second"


async def test_without_an_asyncio_loop_the_group_spawns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(request_tasks, "_running_asyncio_loop", lambda: None)
    ran = anyio.Event()

    async def work() -> None:
        ran.set()

    async with anyio.create_task_group() as group:
        spawned: list[str] = []
        original = group.start_soon

        def counting(func, *args, name=None):  # type: ignore[no-untyped-def]  # a spy on the group
            spawned.append(name)
            return original(func, *args, name=name)

        monkeypatch.setattr(group, "start_soon", counting)
        RequestTasks(group).start_soon(work, name="via-group")
        await ran.wait()
    assert spawned == ["via-group"]  # the group itself ran the task


async def test_after_aclose_the_group_spawns() -> None:
    ran = anyio.Event()

    async def work() -> None:
        ran.set()

    async with anyio.create_task_group() as group:
        tasks = RequestTasks(group)
        await tasks.aclose()
        tasks.start_soon(work, name="late")
        assert not tasks._tasks  # not a plain task: nobody would close it
        await ran.wait()
