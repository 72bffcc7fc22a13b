"""The shared-state interfaces (plainmcp.state) behave the same in memory and on a real Redis."""

from __future__ import annotations

import anyio
import pytest
from plainmcp.state import SharedStateUnavailable
from plainmcp.state.keyring import KeyRing, keys_from_environment, parse_key
from plainmcp.state.memory import MemoryState
from plainmcp.state.redis_state import RedisState, check_reachable, redacted

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
def make_state(request):
    """Builds states that share one store: two RedisStates on one Redis, or one MemoryState twice."""
    if request.param == "memory":
        shared = MemoryState()
        return lambda: shared
    url = request.getfixturevalue("redis_url")
    return lambda: RedisState(url, prefix="test:")


async def test_claim_is_won_once_within_its_time(make_state) -> None:
    first, second = make_state(), make_state()
    async with first.opened(), second.opened():
        assert await first.claim("change-1", 0.3) is True
        assert await second.claim("change-1", 0.3) is False
        assert await second.claim("change-2", 0.3) is True
        await anyio.sleep(0.45)
        assert await second.claim("change-1", 0.3) is True


async def test_fanout_reaches_every_subscriber_of_the_topic_only(make_state) -> None:
    publisher, listener = make_state(), make_state()
    async with publisher.opened(), listener.opened():
        async with listener.fanout.subscribe("t") as mine, publisher.fanout.subscribe("other") as theirs:
            got: list[dict] = []

            async def read() -> None:
                async for message in mine:
                    got.append(message)
                    if len(got) == 2:
                        return

            # Published as soon as the block is entered, before anyone reads: the subscription is
            # already in place (a replica serves once its subscriptions exist, and must miss nothing).
            await publisher.fanout.publish("t", {"n": 1})
            await publisher.fanout.publish("other", {"n": 99})
            await publisher.fanout.publish("t", {"n": 2})
            with anyio.fail_after(5):
                await read()
            assert got == [{"n": 1}, {"n": 2}]
            del theirs


async def test_replicas_on_one_redis_share_the_key_ring(redis_url) -> None:
    one, two = RedisState(redis_url, prefix="ring:"), RedisState(redis_url, prefix="ring:")
    async with one.opened(), two.opened():
        assert one.keyring.sealing == two.keyring.sealing
    other = RedisState(redis_url, prefix="elsewhere:")
    async with other.opened():
        assert other.keyring.sealing != one.keyring.sealing


async def test_an_unreachable_redis_is_a_clear_error_not_a_hang() -> None:
    from tests.redis_server import free_port

    state = RedisState(f"redis://127.0.0.1:{free_port()}/0", prefix="x:", keyring=KeyRing.random())
    async with state.opened():
        with anyio.fail_after(5), pytest.raises(SharedStateUnavailable) as caught:
            await state.claim("a", 1)
        assert caught.value.code == -32000
        assert (await state.health())["reachable"] is False
    with pytest.raises(RuntimeError, match="cannot reach Redis at redis://127.0.0.1"):
        check_reachable(state.url, timeout=1)


def test_keys_come_from_the_environment_in_hex_or_base64() -> None:
    hex_key, b64_key = "ab" * 32, "A" * 43
    ring = keys_from_environment({"PLAINMCP_STATE_KEYS": f"{hex_key}, {b64_key}"})
    assert ring is not None and ring.sealing == bytes.fromhex(hex_key) and len(ring.keys) == 2
    assert keys_from_environment({}) is None
    with pytest.raises(ValueError, match="at least 32 bytes") as caught:
        parse_key("c2hvcnQ")
    assert "c2hvcnQ" not in str(caught.value)  # a secret is never echoed
    assert "KeyRing(2 keys)" == repr(ring)


def test_a_redis_url_password_never_reaches_a_log_line() -> None:
    assert redacted("redis://app:s3cret@db:6380/1") == "redis://app:***@db:6380/1"
    assert redacted("redis://db:6379/0") == "redis://db:6379/0"


async def test_a_restarted_redis_is_used_again_without_a_failed_call(tmp_path) -> None:
    from tests.redis_server import RedisServer

    (tmp_path / "r").mkdir()
    redis = RedisServer(tmp_path / "r")
    redis.start()
    try:
        state = RedisState(redis.url, prefix="restart:")
        async with state.opened():
            assert await state.claim("before", 5) is True  # a pooled connection now exists
            await anyio.to_thread.run_sync(redis.stop)
            await anyio.to_thread.run_sync(redis.start)
            # The pooled connection is dead; the first command after the restart still succeeds.
            assert await state.claim("after", 5) is True
            assert state.counters() == {"up": 1.0, "failures": 0.0}
    finally:
        redis.stop()


async def test_a_subscription_made_while_redis_is_down_starts_at_once_and_hears_redis_when_it_returns(
    tmp_path,
) -> None:
    from tests.redis_server import RedisServer

    redis = RedisServer(tmp_path)  # its port, with nothing listening yet
    # A key ring of its own: opening the state then needs no Redis (the shared one is made in Redis).
    state = RedisState(redis.url, prefix="late:", keyring=KeyRing([bytes(32)]), command_timeout=0.5)
    publisher = RedisState(redis.url, prefix="late:")
    try:
        async with state.opened():
            with anyio.fail_after(5):  # the block is entered after one failed attempt, not held until Redis is up
                subscription = state.fanout.subscribe("t")
                messages = await subscription.__aenter__()
            try:
                await anyio.to_thread.run_sync(redis.start)
                got: list[dict] = []

                async def read() -> None:
                    async for message in messages:
                        got.append(message)
                        return

                async with publisher.opened(), anyio.create_task_group() as group:
                    group.start_soon(read)
                    with anyio.fail_after(10):
                        # At most once: what is published before the retry subscribes is missed, so publish until heard.
                        while not got:
                            await publisher.fanout.publish("t", {"n": 1})
                            await anyio.sleep(0.05)
                assert got == [{"n": 1}]
            finally:
                await subscription.__aexit__(None, None, None)
    finally:
        redis.stop()


async def test_a_replica_serves_only_once_its_fanout_subscriptions_are_in_place(redis_url) -> None:
    """Entering the app's lifetime (its ASGI lifespan: the HTTP server accepts after it) means Redis already
    counts this replica among the subscribers of what replicas tell each other (resource updates, legacy
    sessions): a request served at once hears what another replica publishes next."""
    import redis.asyncio
    from plainmcp import Server
    from plainmcp.http.app import MCPApp

    server = Server("readiness", "1.0.0")
    server.share(RedisState(redis_url, prefix="ready:"))
    app = MCPApp(server)
    observer = redis.asyncio.Redis.from_url(redis_url)
    channels = ("ready:fanout:notify", "ready:fanout:legacy")
    try:
        assert dict(await observer.pubsub_numsub(*channels)) == {c.encode(): 0 for c in channels}
        async with app.running():
            assert dict(await observer.pubsub_numsub(*channels)) == {c.encode(): 1 for c in channels}
    finally:
        await observer.aclose()
