"""plainmcp.ServerCache, the layer weather's replicas share, behaves the same in memory and on a real
Redis: two RedisCaches on one Redis stand for two replicas (one MemoryCache twice for one process)."""

from __future__ import annotations

from contextlib import AsyncExitStack

import anyio
import pytest
from plainmcp import server_cache
from plainmcp.state.cache import MemoryCache, RedisCache
from plainmcp.state.memory import MemoryState
from plainmcp.state.redis_state import RedisState

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
def two_replicas(request):
    """An async context giving two ServerCaches that share one store."""

    async def opened(stack: AsyncExitStack):
        if request.param == "memory":
            state = MemoryState()
            await stack.enter_async_context(state.opened())
            return server_cache(state), server_cache(state)
        url = request.getfixturevalue("redis_url")
        states = [RedisState(url, prefix="cache-test:") for _ in range(2)]
        for state in states:
            await stack.enter_async_context(state.opened())
        return server_cache(states[0]), server_cache(states[1])

    return opened


def test_the_implementation_follows_the_state() -> None:
    memory = MemoryState()
    assert isinstance(server_cache(memory), MemoryCache) and server_cache(memory) is server_cache(memory)
    assert isinstance(server_cache(RedisState("redis://127.0.0.1:1/0", prefix="x:")), RedisCache)


async def test_a_stored_value_is_read_by_the_other_replica_fresh_then_stale_then_gone(two_replicas) -> None:
    async with AsyncExitStack() as stack:
        one, two = await two_replicas(stack)
        await one.put("k", {"a": [1, 2.5, "x"]}, ttl=0.2, keep=0.3)
        got = await two.get("k")
        assert got is not None and got.value == {"a": [1, 2.5, "x"]} and got.ttl == 0.2
        assert got.fresh(got.stored_at + 0.1) and not got.fresh(got.stored_at + 0.2)
        await anyio.sleep(0.3)
        stale = await two.get("k")
        assert stale is not None and stale.value == {"a": [1, 2.5, "x"]}  # kept past its TTL
        await anyio.sleep(0.35)
        assert await two.get("k") is None
        assert await two.get("never") is None


async def test_concurrent_flights_on_two_replicas_run_the_work_once(two_replicas) -> None:
    runs = 0

    async def work() -> dict:
        nonlocal runs
        runs += 1
        await anyio.sleep(0.3)
        return {"answer": 42}

    results: list = []
    async with AsyncExitStack() as stack:
        one, two = await two_replicas(stack)

        async def call(cache) -> None:
            results.append(await cache.flight("f", work, hold=5))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for index in range(10):
                    group.start_soon(call, (one, two)[index % 2])
        assert runs == 1 and results == [{"answer": 42}] * 10
        assert await one.flight("f", work, hold=5) == {"answer": 42} and runs == 2  # a new flight, not a cache


async def test_a_failed_flight_reaches_the_other_replicas_waiters_through_its_codec(two_replicas) -> None:
    runs = 0

    async def work() -> None:
        nonlocal runs
        runs += 1
        await anyio.sleep(0.3)
        raise LookupError("the upstream is down")

    def encode(error: Exception) -> dict | None:
        return {"message": str(error)} if isinstance(error, LookupError) else None

    errors: list[str] = []
    async with AsyncExitStack() as stack:
        one, two = await two_replicas(stack)

        async def call(cache) -> None:
            try:
                await cache.flight(
                    "g", work, hold=5, encode_error=encode, decode_error=lambda e: LookupError(e["message"])
                )
            except LookupError as error:
                errors.append(str(error))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for index in range(6):
                    group.start_soon(call, (one, two)[index % 2])
    assert runs == 1 and errors == ["the upstream is down"] * 6


async def test_a_flight_whose_holder_died_is_run_again_once_its_hold_expires(redis_url) -> None:
    """A replica SIGKILLed mid-fetch leaves its lock behind: the others wait at most ``hold``."""
    async with AsyncExitStack() as stack:
        state = RedisState(redis_url, prefix="cache-test:")
        await stack.enter_async_context(state.opened())
        cache = server_cache(state)
        # What a dead replica leaves: the lock, held for 0.5 s, and never an outcome.
        await state.client.set(state.key("flight", "h"), "dead", px=500)

        async def work() -> str:
            return "fetched here"

        started = anyio.current_time()
        with anyio.fail_after(5):
            assert await cache.flight("h", work, hold=0.5) == "fetched here"
        assert anyio.current_time() - started >= 0.3  # it did wait for the dead holder's lock first


async def test_a_flight_longer_than_its_lease_keeps_its_lock_by_renewing_it(redis_url) -> None:
    runs = 0

    async def work() -> str:
        nonlocal runs
        runs += 1
        await anyio.sleep(1.0)  # a bit over three leases of 0.3 s
        return "once"

    results: list[str] = []
    async with AsyncExitStack() as stack:
        states = [RedisState(redis_url, prefix="cache-test:") for _ in range(2)]
        for state in states:
            await stack.enter_async_context(state.opened())
        caches = [RedisCache(state, lease=0.3) for state in states]

        async def call(cache: RedisCache) -> None:
            results.append(await cache.flight("long", work, hold=10))

        with anyio.fail_after(10):
            async with anyio.create_task_group() as group:
                for index in range(4):
                    group.start_soon(call, caches[index % 2])
                    await anyio.sleep(0.1)
    assert runs == 1 and results == ["once"] * 4


async def test_a_rate_limit_is_counted_across_replicas_and_its_window_resets(two_replicas) -> None:
    async with AsyncExitStack() as stack:
        one, two = await two_replicas(stack)
        taken = [await (one, two)[i % 2].acquire("forecast", 3, 0.5) for i in range(5)]
        assert taken[:3] == [0.0, 0.0, 0.0]
        assert all(0 < wait <= 0.5 for wait in taken[3:])
        assert await one.acquire("geocoding", 3, 0.5) == 0.0  # each name has its own limit
        await anyio.sleep(max(taken[3:]) + 0.05)
        assert await two.acquire("forecast", 3, 0.5) == 0.0


async def test_breaker_failures_add_up_across_replicas_and_a_success_resets_them(two_replicas) -> None:
    async with AsyncExitStack() as stack:
        one, two = await two_replicas(stack)
        assert await one.breaker_failure("nws", 3, 0.5) == 0.0
        await two.breaker_success("nws")  # the run of failures is broken
        assert await one.breaker_failure("nws", 3, 0.5) == 0.0
        assert await two.breaker_failure("nws", 3, 0.5) == 0.0
        assert await one.breaker_open_for("nws") == 0.0
        assert 0.4 < await two.breaker_failure("nws", 3, 0.5) <= 0.5  # the third in a row opens it
        assert 0 < await one.breaker_open_for("nws") <= 0.5
        await anyio.sleep(0.6)
        assert await one.breaker_open_for("nws") == 0.0
