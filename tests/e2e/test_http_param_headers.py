"""SEP-2243 custom headers over real HTTP on 127.0.0.1: the server checks ``Mcp-Param-{Name}`` against
the ``x-mcp-header`` arguments of a 2026-07-28 ``tools/call`` (400 + ``-32020`` when they disagree),
servers without annotations ignore such headers, and ``plainmcp.http_client`` sends them."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import httpx
import pytest
from plainmcp import MCPError, Server, Tool
from plainmcp.http.app import MCPApp
from plainmcp.http_client import connect_http
from plainmcp_everything import Config, build_server

from .http_server import (
    LATEST_LEGACY,
    ThreadedApp,
    alegacy_session,
    app_in_thread,
    async_client,
    base64_header,
    call_body,
    dumps,
    legacy_headers,
    modern_body,
    modern_headers,
    sync_client,
)
from .test_http_client import Recording, serving

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
QUICK = 5.0
CONNECTION = 30.0


@pytest.fixture(scope="module")
def everything() -> Iterator[ThreadedApp]:
    with app_in_thread(MCPApp(build_server(Config()))) as app:
        yield app


def call_region(app: ThreadedApp, region: object, **override: str | None) -> httpx.Response:
    body = modern_body(3, "tools/call", {"name": "test_custom_header", "arguments": {"region": region}})
    with sync_client() as client:
        return client.post(app.url, content=dumps(body), headers=modern_headers(body, **override))


def texts(result: dict) -> list[str]:
    return [block["text"] for block in result["content"] if block["type"] == "text"]


@pytest.mark.parametrize(
    ("region", "header"),
    [
        ("eu-west", "eu-west"),
        ("Zürich", base64_header("Zürich")),
        ("SGVsbG8=", "SGVsbG8="),
        (" padded ", base64_header(" padded ")),
    ],
)
def test_a_matching_param_header_is_accepted(everything, region, header):
    response = call_region(everything, region, Mcp_Param_Region=header)
    assert response.status_code == 200, response.text
    assert texts(response.json()["result"]) == [f"Region: {region}"]


@pytest.mark.parametrize(
    "header",
    [None, "us-east", "EU-WEST", base64_header("us-east"), "=?base64?ZXUtd2VzdA?=", "=?base64?ZXUt!!d2VzdA==?="],
)
def test_a_missing_different_or_undecodable_param_header_is_400_32020(everything, header):
    response = call_region(everything, "eu-west", Mcp_Param_Region=header)
    assert response.status_code == 400
    payload = response.json()
    assert payload["id"] == 3 and payload["error"]["code"] == -32020, payload
    assert (
        payload["error"]["message"].startswith("Header mismatch: ")
        and "Mcp-Param-Region" in payload["error"]["message"]
    )


def test_a_param_header_sent_twice_is_400_32020(everything):
    body = modern_body(4, "tools/call", {"name": "test_custom_header", "arguments": {"region": "eu"}})
    headers = [*modern_headers(body).items(), ("Mcp-Param-Region", "eu"), ("mcp-param-region", "us")]
    with sync_client() as client:
        response = client.post(everything.url, content=dumps(body), headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020


def test_a_wrong_typed_argument_is_a_tool_error_not_a_header_error(everything):
    response = call_region(everything, 7, Mcp_Param_Region="7")
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True


async def test_legacy_calls_carry_no_param_headers_and_are_not_checked(everything):
    async with async_client() as client:
        session = await alegacy_session(client, everything.url)
        body = call_body(2, "test_custom_header", {"region": "eu"})
        response = await client.post(
            everything.url, content=dumps(body), headers=legacy_headers(session, LATEST_LEGACY)
        )
    assert response.status_code == 200
    assert "Region: eu" in response.text


def echo_server() -> Server:
    server = Server("echo", "1.0.0")

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    async def echo(ctx, args):
        """Says the text back."""
        return args["text"]

    return server


def test_a_tool_without_annotations_ignores_param_headers():
    with app_in_thread(MCPApp(echo_server())) as app:
        body = modern_body(1, "tools/call", {"name": "echo", "arguments": {"text": "hi"}})
        with sync_client() as client:
            response = client.post(
                app.url, content=dumps(body), headers=modern_headers(body, Mcp_Param_Text="something else")
            )
    assert response.status_code == 200
    assert texts(response.json()["result"]) == ["hi"]


@pytest.mark.parametrize("region", ["eu-west", "Zürich"])
async def test_the_client_mirrors_annotated_arguments_of_listed_tools(region):
    app = Recording(MCPApp(build_server(Config())))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/mcp", protocol_version=MODERN) as client:
                with anyio.fail_after(QUICK):
                    await client.list_all_tools()
                    result = await client.call_tool("test_custom_header", {"region": region})
                    plain = await client.call_tool("test_simple_text", {})
    assert texts(result) == [f"Region: {region}"]
    assert plain["content"][0]["text"].startswith("This is a simple text")
    calls = [entry for entry in app.mcp() if (entry.json() or {}).get("method") == "tools/call"]
    assert [entry.status for entry in calls] == [200, 200]
    expected = region if region.isascii() else base64_header(region)
    assert calls[0].headers["mcp-param-region"] == expected
    assert not any(name.startswith("mcp-param-") for name in calls[1].headers)


async def test_the_client_sends_no_param_headers_in_the_legacy_era():
    app = Recording(MCPApp(build_server(Config())))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/mcp", protocol_version=LATEST_LEGACY) as client:
                await client.list_all_tools()
                result = await client.call_tool("test_custom_header", {"region": "eu"})
    assert texts(result) == ["Region: eu"]
    assert not any(name.startswith("mcp-param-") for entry in app.mcp() for name in entry.headers)


async def test_the_client_refuses_a_tool_with_invalid_annotations():
    """A server listing a tool whose header annotation breaks the rules (a number): the client must
    not call it. (The Server refuses to define such a tool, so the schema is spoiled after it is.)"""
    server = echo_server()
    spoiled = server.tools["echo"]
    assert isinstance(spoiled, Tool)
    spoiled.input_schema["properties"]["text"] = {"type": "number", "x-mcp-header": "Text"}
    app = Recording(MCPApp(server))
    with serving(app) as base:
        with anyio.fail_after(CONNECTION):
            async with connect_http(f"{base}/mcp", protocol_version=MODERN) as client:
                await client.list_all_tools()
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("echo", {"text": 1})
    assert refused.value.code == -32602
    assert "x-mcp-header" in refused.value.message
    assert not any((entry.json() or {}).get("method") == "tools/call" for entry in app.mcp())
