"""Issue 25's "done when", bounded: mixed calls per era through a round-robin HAProxy over three real
``plainmcp-everything`` processes sharing a real Redis (its own ``redis-server`` here, so it can be
restarted), with the operations of ``mixed_ops`` (tools, multi-round-trip retries, listen, tasks; legacy
sessions with elicitations, SSE resumption via Last-Event-ID, subscriptions and 2025-11-25 tasks).

- every operation succeeds (0 failures), and every replica served its share;
- a replica SIGKILLed mid-run: only the operations in flight at that moment fail (at most the concurrency),
  every operation started after it succeeds;
- Redis SIGKILLed and started again mid-run: no hang, no 500, stateless calls keep working while it is
  down, and the first fully successful mixed round (every kind of operation) ends within 5 s of Redis's
  return; every operation started 5 s after the return succeeds, whichever replica it reaches.

Counts are bounded (hundreds of calls per era) and every wait is bounded; numbers are printed (-s).
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
import pytest

from tests.e2e.http_server import SSEReader, async_client, rpc
from tests.redis_server import RedisServer
from tests.replicas import mixed_ops
from tests.replicas.cluster import Cluster, cluster
from tests.replicas.mixed_ops import FAILURES, OPERATIONS, WATCHED, Tally, Wire

pytestmark = pytest.mark.anyio

ERAS = ["modern", "legacy"]
CONCURRENCY = 6
LOAD_CALLS = {"modern": 1000, "legacy": 1000}  # the "done when": 1,000 mixed calls per era, 0 failures
KILL_CALLS = 360
REDIS_CALLS = 300
RECOVERY_SECONDS = 5.0
#: How long after Redis's return the load goes on (to see that nothing fails once recovered).
SETTLED = RECOVERY_SECONDS + 1.5
#: A probing round's bound for one answer or one event.
PROBE_SECONDS = 1.0
RUN_SECONDS = 60.0


@dataclass
class Outcome:
    kind: str
    started: float
    ended: float
    error: str | None


@dataclass
class Run:
    outcomes: list[Outcome]
    tally: Tally

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.error is not None]

    def summary(self) -> str:
        kinds: dict[str, list[int]] = {}
        for outcome in self.outcomes:
            counts = kinds.setdefault(outcome.kind, [0, 0])
            counts[outcome.error is not None] += 1
        failed = "; ".join(f"{o.kind}: {o.error}" for o in self.failures()[:6])
        return (
            f"{self.tally.calls} calls, {len(self.outcomes)} operations, {len(self.failures())} failed "
            f"(by kind ok/failed: {kinds}); statuses {self.tally.statuses}; first failures: {failed}"
        )


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory):
    directory = tmp_path_factory.mktemp("mixed-redis")
    server = RedisServer(directory)
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def proxied(own_redis, tmp_path_factory):
    with cluster(tmp_path_factory.mktemp("mixed"), redis_url=own_redis.url, proxy="haproxy") as running:
        yield running


@pytest.fixture
def whole(proxied: Cluster) -> Cluster:
    """The cluster with all three replicas up (a kill test ends one; it is started again here)."""
    for replica in proxied.replicas:
        if replica.process is None or replica.process.poll() is not None:
            replica.start()
    return proxied


async def operation(kind: str, era: str, wire: Wire, other: Wire) -> Outcome:
    started = time.monotonic()
    error = None
    try:
        with anyio.fail_after(30):
            await OPERATIONS[era][kind](wire, other)
    except FAILURES as failure:
        error = f"{type(failure).__name__}: {failure}"
    return Outcome(kind, started, time.monotonic(), error)


async def load(url: str, era: str, calls: int, tally: Tally, concurrency: int = CONCURRENCY, done: Any = None) -> Run:
    """``concurrency`` clients, each going through the operations of ``era`` in turn, until ``calls`` were
    made (or until ``done()``, when given)."""
    kinds = list(OPERATIONS[era])
    finished = done or (lambda: tally.calls >= calls)
    outcomes: list[Outcome] = []

    async def worker(index: int) -> None:
        async with async_client() as client, async_client() as second:
            wire, other = Wire(client, url, tally), Wire(second, url, tally)
            turn = index
            while not finished():
                outcomes.append(await operation(kinds[turn % len(kinds)], era, wire, other))
                turn += 1

    with anyio.fail_after(RUN_SECONDS):
        async with anyio.create_task_group() as group:
            for index in range(concurrency):
                group.start_soon(worker, index)
    return Run(outcomes, tally)


def calls_served(running: Cluster) -> list[float]:
    """Requests each replica answered (every method), from its own /metrics."""
    totals = []
    for replica in running.replicas:
        text = httpx.get(f"{replica.base_url}/metrics", timeout=5, trust_env=False).text
        lines = [line for line in text.splitlines() if line.startswith("mcp_call_total{")]
        totals.append(sum(float(line.rsplit(" ", 1)[1]) for line in lines))
    return totals


@pytest.mark.parametrize("era", ERAS)
async def test_mixed_load_through_the_proxy_has_no_failure(whole, era) -> None:
    before = calls_served(whole)
    run = await load(whole.url, era, LOAD_CALLS[era], Tally())
    served = [after - b for after, b in zip(calls_served(whole), before, strict=True)]
    print(f"\n{era}: {run.summary()}; served per replica {served}")
    assert run.tally.calls >= LOAD_CALLS[era]
    assert {o.kind for o in run.outcomes} == set(OPERATIONS[era])  # every kind ran
    assert run.failures() == [], run.summary()
    assert all(count > 0 for count in served), served  # round-robin: every replica took its share


@pytest.mark.parametrize("era", ERAS)
async def test_mixed_load_loses_only_the_killed_replicas_calls_in_flight(whole, era) -> None:
    tally = Tally()
    victim = whole.replicas[1]
    killed: list[float] = []

    async def killer() -> None:
        while tally.calls < KILL_CALLS // 3:
            await anyio.sleep(0.01)
        killed.append(time.monotonic())
        await anyio.to_thread.run_sync(victim.kill)  # SIGKILL
        killed.append(time.monotonic())

    async with anyio.create_task_group() as group:
        group.start_soon(killer)
        run = await load(whole.url, era, KILL_CALLS, tally)
    assert len(killed) == 2, "the replica was not killed during the run"
    start, end = killed
    in_flight = [o for o in run.outcomes if o.started < end and o.ended > start]
    failed = run.failures()
    print(f"\n{era}, replica killed: {run.summary()}; {len(in_flight)} operations in flight at the kill")
    assert [o for o in failed if o not in in_flight] == [], run.summary()  # nothing else failed
    assert len(failed) <= CONCURRENCY, run.summary()
    assert [o for o in run.outcomes if o.started >= end and o.error] == []
    assert sum(1 for o in run.outcomes if o.started >= end) >= 10  # and the run went on after it


async def full_round(url: str, era: str) -> list[Outcome]:
    """Every kind of operation once, one after the other, on fresh connections; each wait is short (1 s),
    so a round that fails costs little and the recovery is measured to about a second."""
    tally = Tally()
    outcomes = []
    async with async_client(timeout=PROBE_SECONDS) as client, async_client(timeout=PROBE_SECONDS) as second:
        for kind in OPERATIONS[era]:
            wires = Wire(client, url, tally, PROBE_SECONDS), Wire(second, url, tally, PROBE_SECONDS)
            outcomes.append(await operation(kind, era, *wires))
    return outcomes


async def stateless_calls_work(url: str, count: int = 6) -> list[str | None]:
    """2026-07-28 tool calls need no shared state: their outcomes while Redis is down."""
    tally = Tally()
    async with async_client(timeout=5.0) as client, async_client(timeout=5.0) as second:
        return [(await operation("tool", "modern", Wire(client, url, tally), Wire(second, url, tally))).error
                for _ in range(count)]  # fmt: skip


@pytest.mark.parametrize("era", ERAS)
async def test_mixed_load_recovers_within_5_s_of_redis_coming_back(whole, own_redis, era) -> None:
    tally = Tally()
    marks: dict[str, Any] = {}

    async def outage() -> None:
        while tally.calls < REDIS_CALLS // 3:
            await anyio.sleep(0.01)
        own_redis.stop(signal.SIGKILL)
        marks["down"] = time.monotonic()
        await anyio.sleep(0.5)
        marks["stateless"] = await stateless_calls_work(whole.url)
        await anyio.sleep(0.5)
        await anyio.to_thread.run_sync(own_redis.start)
        back = marks["back"] = time.monotonic()
        rounds = 0
        while time.monotonic() - back < 3 * RECOVERY_SECONDS:
            rounds += 1
            outcomes = await full_round(whole.url, era)
            if all(o.error is None for o in outcomes):
                marks["recovered"] = time.monotonic()
                break
            marks.setdefault("failed_rounds", []).append(
                [f"+{o.started - back:.2f} s {o.kind}: {o.error}" for o in outcomes if o.error]
            )
        marks["rounds"] = rounds
        marks["calls_then"] = tally.calls

    def done() -> bool:  # the load goes on past the recovery: REDIS_CALLS more calls and 5 s after the return
        if "calls_then" not in marks:
            return False
        return tally.calls >= marks["calls_then"] + REDIS_CALLS and time.monotonic() > marks["back"] + SETTLED

    async with anyio.create_task_group() as group:
        group.start_soon(outage)
        run = await load(whole.url, era, REDIS_CALLS, tally, concurrency=4, done=done)
    back = marks["back"]
    recovery = marks["recovered"] - back if "recovered" in marks else None
    after = [o for o in run.failures() if o.started >= back]
    last = max((o.started - back for o in after), default=None)
    print(
        f"\n{era}, Redis restarted: {run.summary()}; first fully successful round {recovery} s after Redis's "
        f"return ({marks.get('rounds')} round(s)); {len(after)} operations started after the return failed, "
        f"the last one started {last} s after it; stateless calls while down: {marks.get('stateless')}; "
        f"failed probing rounds: {marks.get('failed_rounds')}"
    )
    assert marks["stateless"] == [None] * 6  # what needs no shared state kept working
    assert tally.timeouts == 0, run.summary()  # no call hung
    assert tally.bodies_500 == [], tally.bodies_500  # errors are JSON-RPC errors or 503, never a 500
    assert recovery is not None, f"no fully successful round within 15 s: {marks.get('failed_rounds')}"
    assert recovery <= RECOVERY_SECONDS, (recovery, marks.get("failed_rounds"))
    # Recovered means recovered everywhere: nothing started 5 s after Redis's return fails, on any replica.
    late = [o for o in after if o.started >= back + RECOVERY_SECONDS]
    assert late == [], [(round(o.started - back, 2), o.kind, o.error) for o in late]


async def test_a_legacy_subscriber_hears_each_of_two_quick_changes_made_on_other_replicas(whole) -> None:
    """Two distinct changes of one resource, made back to back on two replicas: the session's GET stream on
    a third hears both (the load above would not notice one lost: another worker's change makes up for it)."""
    first, holder, third = (f"{r.base_url}/mcp" for r in whole.replicas)
    tally = Tally()
    async with async_client() as client:
        session = await mixed_ops.LegacySession(Wire(client, first, tally)).open()
        subscribed = await session.call(rpc(session.next_id(), "resources/subscribe", {"uri": WATCHED}))
        assert subscribed["result"] == {}
        get = {k: v for k, v in session.headers().items() if k != "Content-Type"}
        stream = Wire(client, holder, tally).stream("GET", None, {**get, "Accept": "text/event-stream"})
        async with stream as response:
            reader = SSEReader(response)
            assert (await reader.next()).data == ""  # primed
            await anyio.sleep(0.3)
            for url in (first, third):  # within a second of each other
                session.wire = Wire(client, url, tally)
                await session.tool(mixed_ops.TRIGGER)
            heard = []
            with anyio.move_on_after(3):
                while len(heard) < 2:
                    event = await reader.next()
                    if event.data:
                        heard.append(event.json()["method"])
        await session.close()
    assert heard == ["notifications/resources/updated"] * 2, f"heard {len(heard)} of 2 changes"
