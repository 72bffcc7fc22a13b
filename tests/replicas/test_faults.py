"""Faults the way they happen to replicas: Redis missing at start, Redis restarted while serving, a
replica SIGKILLed under load behind HAProxy, workers whose supervisor is SIGKILLed. Real processes, real
signals, every wait bounded."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import anyio
import httpx
import pytest

from tests.e2e.http_server import (
    SSEReader,
    async_client,
    dumps,
    free_port,
    modern_body,
    modern_headers,
    open_stream,
    wait_healthy,
)
from tests.redis_server import RedisServer
from tests.replicas.cluster import cluster, server_command

SIMPLE = {"name": "test_simple_text", "arguments": {}}


def children_of(pid: int) -> list[int]:
    """Live child processes of ``pid``, from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_redis_unreachable_at_start_is_one_line_and_exit_1() -> None:
    dead = f"redis://127.0.0.1:{free_port()}/0"
    done = subprocess.run(
        [*server_command("everything", dead), "--port", "0"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if "INFO" not in line]
    assert lines == [
        f"plainmcp-everything: cannot reach Redis at {dead}: Error 111 connecting to 127.0.0.1:{dead.split(':')[2].split('/')[0]}. Connection refused."
    ]


def test_workers_without_redis_are_refused_in_one_line() -> None:
    done = subprocess.run(
        [*server_command("everything", None), "--port", "0", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "plainmcp-everything: --workers 2 needs --redis URL: workers are replicas and must share state"
    )


def test_workers_are_replaced_when_killed_and_die_with_their_supervisor(redis_url, tmp_path) -> None:
    port = free_port()
    log = (tmp_path / "workers.log").open("wb")
    supervisor = subprocess.Popen(
        [*server_command("everything", redis_url), "--port", str(port), "--workers", "3"], stdout=log, stderr=log
    )
    try:
        deadline = time.monotonic() + 30
        while len(children_of(supervisor.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = children_of(supervisor.pid)
        assert len(workers) == 3
        with httpx.Client(trust_env=False, timeout=10) as client:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                try:
                    if client.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    time.sleep(0.05)
            body = modern_body(1, "tools/call", SIMPLE)
            for _ in range(30):
                assert (
                    client.post(
                        f"http://127.0.0.1:{port}/mcp", content=dumps(body), headers=modern_headers(body)
                    ).status_code
                    == 200
                )
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            now = children_of(supervisor.pid)
            if len(now) == 3 and workers[0] not in now:
                break
            time.sleep(0.05)
        replaced = children_of(supervisor.pid)
        assert len(replaced) == 3 and workers[0] not in replaced
        supervisor.kill()  # SIGKILL: the supervisor cannot tell anyone
        supervisor.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in replaced) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(alive(pid) for pid in replaced), "a worker outlived its supervisor"
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        log.close()


@pytest.mark.anyio
async def test_one_replica_killed_under_load_loses_only_its_calls_in_flight(redis_url, tmp_path) -> None:
    with cluster(tmp_path, redis_url=redis_url, proxy="haproxy") as running:
        outcomes = {"ok": 0, "failed": 0}
        concurrency = 8

        async def caller(index: int) -> None:
            async with async_client() as client:
                for n in range(60):
                    body = modern_body(f"{index}-{n}", "tools/call", SIMPLE)
                    try:
                        response = await client.post(running.url, content=dumps(body), headers=modern_headers(body))
                        good = response.status_code == 200 and response.json()["result"]["resultType"] == "complete"
                    except httpx.HTTPError:
                        good = False
                    outcomes["ok" if good else "failed"] += 1

        async def killer() -> None:
            while outcomes["ok"] < 100:
                await anyio.sleep(0.01)
            await anyio.to_thread.run_sync(running.replicas[1].kill)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                group.start_soon(killer)
                for index in range(concurrency):
                    group.start_soon(caller, index)
        assert outcomes["ok"] + outcomes["failed"] == concurrency * 60
        # At most one call per caller was in flight on the killed replica; everything else succeeded.
        assert outcomes["failed"] <= concurrency, outcomes


@pytest.mark.anyio
async def test_service_recovers_by_itself_when_redis_comes_back(tmp_path) -> None:
    redis = RedisServer(tmp_path / "redis-dir")
    (tmp_path / "redis-dir").mkdir()
    redis.start()
    try:
        with cluster(tmp_path, replicas=2, redis_url=redis.url, proxy="nginx") as running:
            first, second = (r.base_url + "/mcp" for r in running.replicas)
            async with async_client() as client:
                redis.stop(signal.SIGKILL)
                # Without Redis: calls that need no shared state still work, /health says so.
                body = modern_body("s", "tools/call", SIMPLE)
                for url in (first, second):
                    reply = await client.post(url, content=dumps(body), headers=modern_headers(body))
                    assert reply.json()["result"]["resultType"] == "complete"
                health = (await client.get(running.replicas[0].base_url + "/health")).json()
                assert health["status"] == "degraded" and health["sharedState"]["reachable"] is False
                await anyio.to_thread.run_sync(redis.start)
                restarted = time.monotonic()
                # A listener on the first replica hears a change made on the second within 5 s of Redis's return.
                listen_body = modern_body(
                    "L",
                    "subscriptions/listen",
                    {"notifications": {"resourceSubscriptions": ["test://watched-resource"]}},
                )
                async with open_stream(
                    client, "POST", first, content=dumps(listen_body), headers=modern_headers(listen_body)
                ) as listen:
                    reader = SSEReader(listen)
                    assert (await reader.next()).json()["method"] == "notifications/subscriptions/acknowledged"
                    heard = False
                    async with async_client() as other:
                        while not heard and time.monotonic() - restarted < 5:
                            trigger = modern_body(
                                "u", "tools/call", {"name": "test_trigger_resource_update", "arguments": {}}
                            )
                            await other.post(second, content=dumps(trigger), headers=modern_headers(trigger))
                            try:
                                heard = (await reader.next(timeout=0.3)).json()[
                                    "method"
                                ] == "notifications/resources/updated"
                            except TimeoutError:
                                pass
                    assert heard, "no notification crossed replicas within 5 s of Redis's return"
                health = (await client.get(running.replicas[0].base_url + "/health")).json()
                assert health["status"] == "ok"
    finally:
        redis.stop()


@pytest.mark.anyio
async def test_metrics_show_the_shared_store_going_away_and_back(tmp_path) -> None:
    redis = RedisServer(tmp_path / "redis-dir")
    (tmp_path / "redis-dir").mkdir()
    redis.start()
    try:
        with cluster(tmp_path, replicas=1, redis_url=redis.url, proxy="nginx") as running:
            base = running.replicas[0].base_url
            trigger = modern_body("t", "tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
            async with async_client() as client:
                text = (await client.get(base + "/metrics")).text
                assert 'mcp_shared_state_up{kind="redis"} 1' in text
                redis.stop(signal.SIGKILL)
                # A change published while Redis is down still answers (the notification reaches this replica only).
                reply = await client.post(base + "/mcp", content=dumps(trigger), headers=modern_headers(trigger))
                assert reply.json()["result"]["resultType"] == "complete"
                text = (await client.get(base + "/metrics")).text
                assert 'mcp_shared_state_up{kind="redis"} 0' in text
                assert 'mcp_shared_state_failures{kind="redis"} 0' not in text
            assert running.replicas[0].log().count("shared state unavailable") == 1  # once per outage
    finally:
        redis.stop()


@pytest.mark.anyio
async def test_sigterm_to_the_supervisor_ends_listen_streams_with_their_result(redis_url, tmp_path) -> None:
    port = free_port()
    log = (tmp_path / "workers.log").open("wb")
    supervisor = subprocess.Popen(
        [*server_command("everything", redis_url), "--port", str(port), "--workers", "2"], stdout=log, stderr=log
    )
    try:
        await anyio.to_thread.run_sync(
            lambda: wait_healthy(
                f"http://127.0.0.1:{port}", time.monotonic() + 30, alive=lambda: supervisor.poll() is None
            )
        )
        url = f"http://127.0.0.1:{port}/mcp"
        async with async_client() as client:
            body = modern_body("bye", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
            async with open_stream(client, "POST", url, content=dumps(body), headers=modern_headers(body)) as listen:
                reader = SSEReader(listen)
                assert (await reader.next()).json()["method"] == "notifications/subscriptions/acknowledged"
                supervisor.send_signal(signal.SIGTERM)
                events = await reader.rest(timeout=10)
        assert [e.json()["result"]["resultType"] for e in events] == ["complete"]
        assert await anyio.to_thread.run_sync(lambda: supervisor.wait(timeout=15)) == 0
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
        log.close()


@pytest.mark.parametrize("variable", ["PLAINMCP_EVERYTHING_REDIS_URL", "PLAINMCP_REDIS_URL"])
def test_redis_comes_from_the_servers_variable_or_the_shared_one(variable, redis_url, tmp_path) -> None:
    port = free_port()
    log = (tmp_path / "env.log").open("wb")
    command = [*server_command("everything", None), "--port", str(port), "--workers", "2"]
    process = subprocess.Popen(command, stdout=log, stderr=log, env={**os.environ, variable: redis_url})
    try:
        wait_healthy(f"http://127.0.0.1:{port}", time.monotonic() + 30, alive=lambda: process.poll() is None)
        health = httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=5).json()
        assert health["sharedState"]["kind"] == "redis" and health["sharedState"]["reachable"] is True
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=15)
        log.close()
