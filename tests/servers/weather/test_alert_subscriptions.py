"""Alerts you can subscribe to (issue 21): ``weather://alerts/{area}``, polled conditionally and only
while someone is subscribed; a change (issued, updated, expired) is ``notifications/resources/updated``.
The real server process against the real stand-in, in both eras."""

from __future__ import annotations

import json

import anyio
import pytest
from plainmcp import MCPError, connect_stdio
from plainmcp_weather.alertwatch import area_of, signature
from plainmcp_weather.config import Config
from plainmcp_weather.standin import StandIn

from .support import QUICK, SERVER_MODULE

pytestmark = pytest.mark.anyio

URI = "weather://alerts/ME"
POLL = "0.2"


def command(standin: StandIn) -> list[str]:
    urls = ("--geocoding-url", standin.url, "--forecast-url", standin.url, "--nws-url", standin.url)
    return [*SERVER_MODULE, *urls, "--alerts-poll", POLL]


async def until(condition, what: str) -> None:
    with anyio.fail_after(QUICK):
        while not condition():
            await anyio.sleep(0.02)


class Updates:
    def __init__(self) -> None:
        self.uris: list[str] = []

    def __call__(self, notification) -> None:
        if notification.method == "notifications/resources/updated":
            self.uris.append(notification.params["uri"])


async def test_legacy_subscription_hears_an_alert_issued_and_expired_then_polling_stops():
    updates = Updates()
    with StandIn() as standin:
        async with connect_stdio(command(standin), protocol_version="2025-11-25", on_notification=updates) as client:
            templates = await client.list_all_resource_templates()
            assert "weather://alerts/{area}" in [template["uriTemplate"] for template in templates]
            await client.subscribe(URI)
            await client.subscribe(URI.lower())  # the same area: polled once, both URIs told
            await until(lambda: standin.count("/alerts/active") >= 3, "three polls")  # baseline, then 304s
            assert updates.uris == []  # nothing changed: nothing said
            before = json.loads((await client.read_resource(URI))["contents"][0]["text"])
            assert before["alerts"] == []  # now cached for --alerts-ttl (5 minutes)
            standin.issue_alerts("ME", ["Winter Storm Warning"])
            await until(lambda: sorted(updates.uris) == [URI, URI.lower()], "the update")
            # The poll that noticed the change replaced the cached list: the read after the notification sees it.
            read = json.loads((await client.read_resource(URI))["contents"][0]["text"])
            assert [alert["event"] for alert in read["alerts"]] == ["Winter Storm Warning"] and read["area"] == "ME"
            standin.issue_alerts("ME", [])  # it expired
            await until(lambda: len(updates.uris) == 4, "the second update")
            await client.unsubscribe(URI)
            await client.unsubscribe(URI.lower())
            await anyio.sleep(0.3)
            polls = standin.count("/alerts/active")
            await anyio.sleep(0.6)  # three poll intervals
            assert standin.count("/alerts/active") == polls  # nobody subscribed: no polling
    conditional = [entry for entry in standin.requests("/alerts/active") if entry["if_none_match"]]
    assert conditional and all(entry["query"] == "area=ME" for entry in standin.requests("/alerts/active"))


async def test_modern_listen_stream_hears_an_alert_issued():
    with StandIn() as standin:
        async with connect_stdio(command(standin), protocol_version="2026-07-28") as client:
            async with client.listen(uris=[URI]) as subscription:
                await until(lambda: standin.count("/alerts/active") >= 2, "a baseline and a 304")
                standin.issue_alerts("ME", ["Blizzard Warning"])
                notification = await subscription.next(timeout=QUICK)
                assert notification.method == "notifications/resources/updated"
                assert notification.params["uri"] == URI
            read = json.loads((await client.read_resource(URI))["contents"][0]["text"])
    assert [alert["event"] for alert in read["alerts"]] == ["Blizzard Warning"]


async def test_nobody_subscribed_means_no_polling_and_a_bad_area_is_invalid_params():
    with StandIn() as standin:
        async with connect_stdio(command(standin)) as client:
            await anyio.sleep(0.6)
            with pytest.raises(MCPError) as refused:
                await client.read_resource("weather://alerts/ZZ")
            florida = json.loads((await client.read_resource("weather://alerts/FL"))["contents"][0]["text"])
        assert standin.count("/alerts/active") == 1  # the one read, never a poll
    assert refused.value.code == -32602 and "not a US state or territory code" in refused.value.message
    assert florida["alerts"][0]["event"] == "Hurricane Warning"


def test_the_nws_itself_is_never_polled_more_than_once_a_minute():
    with pytest.raises(ValueError, match="--alerts-poll must be at least 60 seconds"):
        Config(alerts_poll=30)
    assert Config(alerts_poll=0.5, nws_url="http://127.0.0.1:8765").alerts_poll == 0.5


@pytest.mark.parametrize(
    ("uri", "area"),
    [
        ("weather://alerts/FL", "FL"),
        ("weather://alerts/pr", "PR"),  # a territory, any case
        ("weather://alerts/ZZ", None),
        ("weather://alerts/FLA", None),
        ("weather://alerts/", None),
        ("weather://wmo-codes", None),
    ],
)
def test_only_a_state_or_territory_code_is_an_alerts_area(uri, area):
    assert area_of(uri) == area


def test_a_poll_that_changes_nothing_visible_is_not_a_change():
    """The signature ignores what subscribers cannot act on (the list's own 'updated' time, the order)."""
    first = {"updated": "a", "alerts": [{"event": "A", "expires": "1"}, {"event": "B", "expires": "2"}]}
    again = {"updated": "b", "alerts": [{"event": "B", "expires": "2"}, {"event": "A", "expires": "1"}]}
    later = {"updated": "b", "alerts": [{"event": "B", "expires": "3"}, {"event": "A", "expires": "1"}]}
    assert signature(first) == signature(again) != signature(later)
