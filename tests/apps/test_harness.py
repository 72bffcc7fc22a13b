"""The harness itself, against a small real server (probe_server.py): the view is loaded as a host loads
it (AppBridge, sandbox proxy on another origin, the CSP the view declared), gets the tool's input and result,
and its tool calls reach the server through the host's MCP client, as visibility allows; both eras, stdio
and Streamable HTTP."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from plainmcp import ErrorCode

from .harness import ERAS, ROOT

PROBE = [sys.executable, str(Path(__file__).with_name("probe_server.py"))]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def probe_url() -> Iterator[str]:
    port = _free_port()
    process = subprocess.Popen([*PROBE, "--transport", "http", "--port", str(port)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.parametrize("era", ERAS)
def test_harness_view_gets_input_and_result_over_stdio(app_host, era: str) -> None:
    hosted = app_host(PROBE, "show", {"say": "<b>hello</b>"}, era)
    view = hosted.view
    view.locator("body[data-result]").wait_for()
    assert view.locator("#echo").text_content() == "<b>hello</b>"
    assert view.locator("#input").text_content() == '{"say":"<b>hello</b>"}'
    assert view.locator("#echo b").count() == 0
    assert hosted.errors == []
    hosted.screenshot(f"harness-probe-{era}")


@pytest.mark.parametrize("era", ERAS)
def test_harness_view_tool_calls_follow_visibility(app_host, era: str) -> None:
    hosted = app_host(PROBE, "show", {"say": "x"}, era)
    answer = hosted.view.locator("#answer")
    hosted.view.locator("#app-only").click()
    answer.filter(has_text="ok").wait_for()
    assert answer.text_content() == "ok: page 2"  # an app-only tool, through the host to the server
    hosted.view.locator("#model-only").click()
    answer.filter(has_text="refused").wait_for()
    assert "not available to the app" in (answer.text_content() or "")
    assert [call["name"] for call in hosted.record()["calls"]] == ["next_page", "model_only"]


def test_harness_streamable_http_server(app_host, probe_url: str) -> None:
    hosted = app_host(probe_url, "show", {"say": "over http"}, "modern")
    hosted.view.locator("body[data-result]").wait_for()
    assert hosted.view.locator("#echo").text_content() == "over http"


def test_harness_sandbox_is_another_origin_and_blocks_the_network(app_host) -> None:
    hosted = app_host(PROBE, "show", {"say": "x"}, "legacy")
    sandbox = hosted.page.frame_locator("#sandbox")
    host_origin = hosted.page.evaluate("location.origin")
    sandbox_origin = hosted.page.locator("#sandbox").get_attribute("src")
    assert sandbox_origin is not None and not sandbox_origin.startswith(host_origin)
    assert sandbox.locator("iframe").get_attribute("srcdoc") is not None
    # The view declared no csp: the spec's restrictive default (connect-src 'none') refuses a fetch, even to
    # the host page's own origin on 127.0.0.1.
    hosted.view.locator("body").evaluate(
        "(body, target) => { body.dataset.target = target; }", host_origin + "/session"
    )
    hosted.view.locator("#network").click()
    answer = hosted.view.locator("#answer")
    answer.filter(has_text="blocked").wait_for()
    assert answer.text_content() == "blocked: TypeError"


def test_harness_theme_reaches_the_view(app_host) -> None:
    hosted = app_host(PROBE, "show", {"say": "x"}, "modern", theme="dark")
    body = hosted.view.locator("body")
    assert body.get_attribute("data-theme") == "dark"
    hosted.set_theme("light")
    hosted.view.locator("body[data-theme='light']").wait_for()


def test_harness_host_refuses_other_origins_and_hosts(app_host) -> None:
    import httpx

    hosted = app_host(PROBE, "show", {"say": "x"}, "legacy")
    url = hosted.host.url
    call = {"caller": "app", "method": "tools/call", "params": {"name": "next_page"}}
    assert httpx.post(url + "mcp", json=call, headers={"origin": "http://evil.invalid"}).status_code == 403
    port = url.rsplit(":", 1)[1].strip("/")
    assert httpx.get(url, headers={"host": f"evil.invalid:{port}"}).status_code == 421
    allowed = httpx.post(url + "mcp", json=call, headers={"origin": url.rstrip("/")}).json()
    assert allowed["result"]["content"][0]["text"] == "page 2"
    refused = httpx.post(url + "mcp", json={**call, "method": "tools/list"}, headers={"origin": url.rstrip("/")}).json()
    assert refused["error"]["code"] == ErrorCode.METHOD_NOT_FOUND


def test_app_command_names_what_is_missing() -> None:
    unknown = subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", "app", "nothing", "--", *PROBE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (unknown.returncode, unknown.stdout) == (1, "")
    assert "Unknown tool: nothing" in unknown.stderr
    plain = subprocess.run(
        [
            sys.executable,
            "-m",
            "plainmcp.cli",
            "app",
            "echo",
            "--",
            sys.executable,
            str(ROOT / "tests/fixtures/feature_server.py"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert plain.returncode == 2
    assert "names no MCP Apps view" in plain.stderr and "plainmcp call" in plain.stderr
    app_only = subprocess.run(
        [sys.executable, "-m", "plainmcp.cli", "app", "next_page", "--", *PROBE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert app_only.returncode == 2
    assert "only its view calls" in app_only.stderr


def test_app_host_view_csp_follows_the_spec() -> None:
    from plainmcp.cli.app_host import DEFAULT_CSP, view_csp

    assert view_csp(None) == DEFAULT_CSP and "connect-src 'none'" in DEFAULT_CSP
    declared = view_csp({"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://*.cdn.example"]})
    assert "connect-src https://api.example.com;" in declared
    assert "img-src 'self' data: https://*.cdn.example;" in declared
    assert "frame-src 'none'" in declared and "object-src 'none'" in declared and "base-uri 'self'" in declared
    # Anything that is not a plain origin could add a directive or a keyword: dropped.
    hostile = view_csp({"connectDomains": ["https://a.example; script-src *", "'unsafe-eval'", "*"]})
    assert "connect-src 'none';" in hostile and "unsafe-eval" not in hostile and "script-src *" not in hostile
