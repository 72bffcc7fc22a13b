"""The loopback redirect: bound before registration, one callback with the right state, nothing else."""

from __future__ import annotations

import io
import socket

import anyio
import httpx
import pytest
from plainmcp.oauth.loopback import AuthorizationTimeout, LoopbackAuthorizer

AUTH_URL = "https://as.example/authorize?client_id=c&state=s-123&code_challenge=x"


def test_loopback_redirect_uri_is_bound_before_authorize() -> None:
    authorizer = LoopbackAuthorizer(open_browser=False, output=io.StringIO())
    try:
        assert authorizer.redirect_uri == f"http://127.0.0.1:{authorizer.port}/callback"
        probe = socket.create_connection(("127.0.0.1", authorizer.port), timeout=2)  # already listening
        probe.close()
    finally:
        authorizer.close()


async def _browser(port: int, output: io.StringIO, paths: list[str]) -> list[int]:
    while "https://as.example/authorize" not in output.getvalue():  # the URL is printed first
        await anyio.sleep(0.01)
    statuses = []
    async with httpx.AsyncClient(timeout=5) as http:
        for path in paths:
            statuses.append((await http.get(f"http://127.0.0.1:{port}{path}")).status_code)
    return statuses


def test_loopback_returns_the_callback_with_the_right_state_and_ignores_the_rest() -> None:
    output = io.StringIO()
    authorizer = LoopbackAuthorizer(open_browser=False, output=output)
    paths = ["/favicon.ico", "/callback?code=forged&state=other", "/callback?code=the-code&state=s-123&iss=x"]

    async def scenario() -> tuple[dict[str, str], list[int]]:
        statuses: list[int] = []

        async def browse() -> None:
            statuses.extend(await _browser(authorizer.port, output, paths))

        async with anyio.create_task_group() as group:
            group.start_soon(browse)
            params = await authorizer.authorize(AUTH_URL)
        return params, statuses

    params, statuses = anyio.run(scenario)
    assert params == {"code": "the-code", "state": "s-123", "iss": "x"}
    assert statuses == [404, 400, 200]
    assert AUTH_URL in output.getvalue()
    with pytest.raises(OSError):  # the socket is closed once the callback came
        socket.create_connection(("127.0.0.1", authorizer.port), timeout=1)


def test_loopback_a_silent_connection_does_not_hold_up_the_callback() -> None:
    output = io.StringIO()
    authorizer = LoopbackAuthorizer(open_browser=False, output=output)

    async def scenario() -> dict[str, str]:
        async def browse() -> None:
            stuck = await anyio.connect_tcp("127.0.0.1", authorizer.port)  # connects, never sends
            await _browser(authorizer.port, output, ["/callback?code=c&state=s-123"])
            await stuck.aclose()

        async with anyio.create_task_group() as group:
            group.start_soon(browse)
            with anyio.fail_after(5):  # liveness: well within the silent connection's own deadline
                return await authorizer.authorize(AUTH_URL)

    assert anyio.run(scenario)["code"] == "c"


def test_loopback_times_out_and_can_authorize_again_on_the_same_port() -> None:
    output = io.StringIO()
    authorizer = LoopbackAuthorizer(open_browser=False, output=output, timeout=0.3)
    port = authorizer.port
    with pytest.raises(AuthorizationTimeout):
        anyio.run(authorizer.authorize, AUTH_URL)
    authorizer.timeout = 10

    async def again() -> dict[str, str]:
        async with anyio.create_task_group() as group:
            group.start_soon(_browser, port, output, ["/callback?error=access_denied&state=s-123"])
            return await authorizer.authorize(AUTH_URL)

    assert anyio.run(again) == {"error": "access_denied", "state": "s-123"}
    assert authorizer.redirect_uri.endswith(f":{port}/callback")


def test_loopback_is_cancellable() -> None:
    authorizer = LoopbackAuthorizer(open_browser=False, output=io.StringIO())

    async def scenario() -> None:
        with anyio.move_on_after(0.2) as scope:
            await authorizer.authorize(AUTH_URL)
        assert scope.cancelled_caught

    anyio.run(scenario)


def test_loopback_refuses_a_url_without_state() -> None:
    authorizer = LoopbackAuthorizer(open_browser=False, output=io.StringIO())
    with pytest.raises(ValueError, match="state"):
        anyio.run(authorizer.authorize, "https://as.example/authorize?client_id=c")
    authorizer.close()


def test_loopback_without_a_display_never_starts_a_browser(monkeypatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url))
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    authorizer = LoopbackAuthorizer(open_browser=True, output=io.StringIO(), timeout=0.1)
    with pytest.raises(AuthorizationTimeout):
        anyio.run(authorizer.authorize, AUTH_URL)
    assert opened == []
    monkeypatch.setenv("DISPLAY", ":0")
    with pytest.raises(AuthorizationTimeout):
        anyio.run(authorizer.authorize, AUTH_URL)
    assert opened == [AUTH_URL]
