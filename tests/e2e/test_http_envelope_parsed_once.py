"""Over Streamable HTTP a 2026-07-28 request's ``_meta`` envelope is parsed once: the exchange
parses it to check the mirrored headers and hands it on with the call, so the dispatcher does not
parse it again, and still judges the version (-32022) itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import plainmcp.http.stateless
import plainmcp.modern
import pytest
from plainmcp import Server
from plainmcp.envelope import Envelope, parse_envelope
from plainmcp.http.app import MCPApp
from plainmcp.testing import connect_in_memory

from .http_server import MODERN, app_in_thread, dumps, modern_body, modern_headers

pytestmark = pytest.mark.anyio


def echo_server() -> Server:
    server = Server("envelope-test", "0")

    @server.tool()
    async def echo(ctx: Any, args: dict[str, Any]) -> str:
        """The revision the call was served under."""
        return str(ctx.version)

    return server


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every envelope parse, by the exchange or by the dispatcher (the params it parsed)."""
    seen: list[dict[str, Any]] = []

    def counting(params: dict[str, Any]) -> Envelope:
        seen.append(params)
        return parse_envelope(params)

    monkeypatch.setattr(plainmcp.http.stateless, "parse_envelope", counting)
    monkeypatch.setattr(plainmcp.modern, "parse_envelope", counting)
    return seen


@pytest.fixture
def running() -> Iterator[Any]:
    with app_in_thread(MCPApp(echo_server())) as app:
        yield app


def post(running: Any, body: dict[str, Any]) -> httpx.Response:
    with httpx.Client(trust_env=False) as http:
        return http.post(f"{running.base_url}/mcp", content=dumps(body), headers=modern_headers(body))


def test_a_modern_http_call_parses_its_envelope_once(running: Any, parses: list[dict[str, Any]]) -> None:
    body = modern_body(1, "tools/call", {"name": "echo", "arguments": {}})
    response = post(running, body)
    assert response.status_code == 200
    assert response.json()["result"]["content"][0]["text"] == MODERN
    assert len(parses) == 1


def test_the_dispatcher_still_judges_the_version_of_a_parsed_envelope(
    running: Any, parses: list[dict[str, Any]]
) -> None:
    body = modern_body(
        2, "tools/call", {"name": "echo", "arguments": {}}, {"io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    )
    response = post(running, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022 and error["data"]["requested"] == "2099-01-01"
    assert len(parses) == 1


async def test_without_a_transport_envelope_the_dispatcher_parses_it(parses: list[dict[str, Any]]) -> None:
    async with connect_in_memory(echo_server(), protocol_version=MODERN) as client:
        result = await client.call_tool("echo", {})
    assert result["content"][0]["text"] == MODERN
    # No exchange parsed it before: the dispatcher parsed the call's envelope itself, once.
    assert [params.get("name") for params in parses].count("echo") == 1
