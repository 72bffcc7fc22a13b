"""A hostile upstream against the real server process (issue 15, class 7): bodies that never end,
lie about their length, expand from a few bytes, or drip. Each ends in a clear tool error, within
``--timeout``, with the server's memory bounded (read from /proc) and ``ping`` answered within 1 s
while the attack runs."""

from __future__ import annotations

import anyio
import pytest
from plainmcp import connect_stdio

from tests.proc_status import memory_kib

from .hostile import HostileUpstream
from .support import SERVER_MODULE

pytestmark = pytest.mark.anyio

MiB = 1024 * 1024
#: The server's default cap on a body; an attack that got past it would be held whole.
CAP = 4 * MiB
#: Growth of the server's peak RSS during one attack, at most: the cap, a network chunk, slack.
GROWTH = 48 * MiB
#: The issue's absolute bound for any server under attack.
CEILING = 300 * MiB
PINGS = 6
TOO_LARGE = "The Open-Meteo forecast service sent an answer larger than this server accepts. Try again later."
TOO_SLOW = "The Open-Meteo forecast service did not answer in time (tried once). Try again in a minute."


def memory(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (the peak so far) of a process, in bytes."""
    return {key: kib * 1024 for key, kib in memory_kib(pid).items()}


@pytest.fixture
def hostile():
    with HostileUpstream() as running:
        yield running


async def attack(hostile: HostileUpstream, mode: str, timeout: float = 5.0) -> tuple[dict, int, int]:
    """Ask the real server for a forecast from ``mode``'s upstream while pinging it.

    Returns the tool result, the server's RSS before, and its peak RSS after. Fails if a ping takes
    over 1 s, or the call outlives ``timeout`` by more than the slack a loaded machine needs.
    """
    base = f"{hostile.url}/{mode}"
    command = [
        *SERVER_MODULE,
        "--forecast-url",
        base,
        "--geocoding-url",
        base,
        "--nws-url",
        base,
        "--retries",
        "0",
        "--timeout",
        str(timeout),
        "--log-level",
        "error",
    ]
    result: dict = {}
    async with connect_stdio(command) as client:
        pid = client.process.pid
        before = memory(pid)["VmRSS"]

        async def call() -> None:
            with anyio.fail_after(timeout + 3):
                result.update(await client.call_tool("get_forecast", {"latitude": 1, "longitude": 2}))

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(call)
            for _ in range(PINGS):
                with anyio.fail_after(1):  # the server keeps answering while the attack runs
                    await client.ping()
                await anyio.sleep(0.1)
        peak = memory(pid)["VmHWM"]
    return result, before, peak


def text_of(result: dict) -> str:
    return "\n".join(block["text"] for block in result["content"] if block["type"] == "text")


async def test_endless_body_ends_at_the_cap_with_memory_bounded(hostile):
    result, before, peak = await attack(hostile, "endless")
    assert result["isError"] is True and text_of(result) == TOO_LARGE
    assert hostile.sent("endless") > CAP  # it did send past the cap: the server stopped reading
    assert peak - before < GROWTH and peak < CEILING


async def test_huge_content_length_is_refused_before_the_body(hostile):
    result, before, peak = await attack(hostile, "huge")
    assert result["isError"] is True and text_of(result) == TOO_LARGE
    assert hostile.requests("huge") == 1
    assert peak - before < GROWTH and peak < CEILING


async def test_gzip_bomb_is_cut_at_the_cap_as_it_decodes(hostile):
    result, before, peak = await attack(hostile, "bomb")
    assert result["isError"] is True and text_of(result) == TOO_LARGE
    assert hostile.sent("bomb") < CAP  # what came over the wire was small; it would decode without end
    assert peak - before < GROWTH and peak < CEILING


async def test_dripped_body_ends_at_the_timeout_not_per_read(hostile):
    # A byte every 50 ms keeps any per-read timeout happy for ever; the attempt's deadline ends it.
    result, before, peak = await attack(hostile, "drip", timeout=1.5)
    assert result["isError"] is True and text_of(result) == TOO_SLOW
    assert hostile.sent("drip") > 1  # it was dripping, not silent
    assert peak - before < GROWTH


async def test_dense_body_is_refused_before_it_is_parsed(hostile):
    # [{},{},...] within the cap would be ~100 MiB of Python objects and a tenth of a second of parsing.
    result, before, peak = await attack(hostile, "objects")
    assert result["isError"] is True and text_of(result) == TOO_LARGE
    assert peak - before < GROWTH


async def test_twenty_costliest_accepted_bodies_at_once_stay_under_the_ceiling_and_ping_answers(hostile):
    # The costliest body still parsed, twenty at once (the client's connection limit). Large bodies
    # are parsed in a worker thread one at a time: memory does not add up, and the loop keeps serving.
    base = f"{hostile.url}/heavy"
    command = [
        *SERVER_MODULE,
        "--forecast-url",
        base,
        "--geocoding-url",
        base,
        "--nws-url",
        base,
        "--retries",
        "0",
        "--log-level",
        "error",
    ]
    results: list[dict] = []
    async with connect_stdio(command) as client:

        async def call(latitude: int) -> None:
            results.append(await client.call_tool("get_forecast", {"latitude": latitude, "longitude": 2}))

        async def calls() -> None:
            async with anyio.create_task_group() as calling:
                for latitude in range(20):
                    calling.start_soon(call, latitude)

        with anyio.fail_after(20):
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(calls)
                for _ in range(PINGS):
                    with anyio.fail_after(1):
                        await client.ping()
                    await anyio.sleep(0.1)
        peak = memory(client.process.pid)["VmHWM"]
    assert hostile.requests("heavy") == 20
    assert all(result["isError"] and "could not be read" in text_of(result) for result in results)  # not a forecast
    assert peak < CEILING


async def test_max_response_bytes_option_lowers_the_cap():
    """`--max-response-bytes` reaches the body reader: the stand-in's forecast, answered under the default cap,
    is refused as too large under a 1 KiB one."""
    from plainmcp_weather.standin import StandIn

    texts = []
    with StandIn() as standin:
        urls = ["--forecast-url", standin.url, "--geocoding-url", standin.url, "--nws-url", standin.url]
        for extra in ([], ["--max-response-bytes", "1024"]):
            async with connect_stdio(
                [*SERVER_MODULE, *urls, "--retries", "0", "--log-level", "error", *extra]
            ) as client:
                with anyio.fail_after(10):
                    result = await client.call_tool("get_forecast", {"latitude": 35.68, "longitude": 139.69, "days": 7})
            texts.append((result.get("isError", False), text_of(result)))
    assert texts[0][0] is False, texts[0]
    assert texts[1] == (True, TOO_LARGE)


@pytest.mark.parametrize(
    ("flag", "tool", "arguments", "service"),
    [
        ("--air-quality-url", "get_air_quality", {"latitude": 1, "longitude": 2}, "Open-Meteo air quality"),
        ("--marine-url", "get_marine_forecast", {"latitude": 1, "longitude": 2}, "Open-Meteo marine"),
        (
            "--archive-url",
            "get_historical_weather",
            {"latitude": 1, "longitude": 2, "start_date": "2020-01-01", "end_date": "2020-01-02"},
            "Open-Meteo historical weather",
        ),
        ("--nws-url", "get_forecast", {"latitude": 1, "longitude": 2, "source": "nws"}, "National Weather Service"),
    ],
)
async def test_the_upstreams_added_for_issue_21_are_as_guarded(hostile, flag, tool, arguments, service):
    """An endless body from each new upstream ends at the cap, memory bounded, ping answered."""
    command = [
        *SERVER_MODULE,
        flag,
        f"{hostile.url}/endless",
        "--retries",
        "0",
        "--timeout",
        "5",
        "--log-level",
        "error",
    ]
    async with connect_stdio(command) as client:
        pid = client.process.pid
        before = memory(pid)["VmRSS"]
        result: dict = {}

        async def call() -> None:
            with anyio.fail_after(8):
                result.update(await client.call_tool(tool, arguments))

        async with anyio.create_task_group() as task_group:
            task_group.start_soon(call)
            for _ in range(PINGS):
                with anyio.fail_after(1):
                    await client.ping()
                await anyio.sleep(0.1)
        peak = memory(pid)["VmHWM"]
    assert result["isError"] is True
    assert text_of(result) == f"The {service} service sent an answer larger than this server accepts. Try again later."
    assert peak - before < GROWTH and peak < CEILING
