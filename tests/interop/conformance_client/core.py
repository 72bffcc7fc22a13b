"""The suite's client scenarios that are not about authorization or skills.

Each scenario is played the way an application uses the plainmcp client: ``connect_http`` at the
revision the suite runs (``2026-07-28`` starts with ``server/discover``, a legacy revision with
``initialize``), then the public :class:`plainmcp.Client` methods. Nothing here writes a header, a
``_meta`` field or a retry by hand: that is the client's job, and what the suite judges.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from plainmcp import Client, MCPError
from plainmcp.http_client import connect_http

from . import protocol_version

logger = logging.getLogger(__name__)

Scenario = Callable[[str, dict[str, Any]], Awaitable[None]]

#: Seconds any one scenario may take in the client (the suite's own --timeout bounds the process).
SCENARIO_TIMEOUT = 50.0


async def accept_without_content(params: dict[str, Any]) -> dict[str, Any]:
    """An elicitation answer that accepts and fills in nothing (the client applies the defaults)."""
    logger.info("elicitation: %s", params.get("message"))
    return {"action": "accept", "content": {}}


async def accept_confirmed(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "accept", "content": {"confirmed": True}}


def connect(url: str, **options: Any) -> Any:
    """``connect_http`` at the suite's revision, with the given :class:`Client` options."""
    return connect_http(url, protocol_version=protocol_version(), **options)


async def list_and_call_first(url: str, context: dict[str, Any]) -> None:
    """``initialize`` / ``tools_call``: connect, list the tools, call the first with ``a`` and ``b``."""
    async with connect(url) as client:
        tools = await client.list_all_tools()
        if tools:
            result = await client.call_tool(tools[0]["name"], {"a": 2, "b": 3})
            logger.info("%s: %s", tools[0]["name"], result.get("content"))


async def elicitation_defaults(url: str, context: dict[str, Any]) -> None:
    """SEP-1034: the elicitation is accepted with no content; the client fills in the defaults."""
    async with connect(url, elicitation=accept_without_content) as client:
        await client.list_all_tools()
        result = await client.call_tool("test_client_elicitation_defaults", {})
        logger.info("result: %s", result.get("content"))


async def sse_retry(url: str, context: dict[str, Any]) -> None:
    """SEP-1699: the tool's stream closes before its answer; the client resumes it after ``retry``."""
    async with connect(url) as client:
        await client.list_all_tools()
        result = await client.call_tool("test_reconnection", {})
        logger.info("result: %s", result.get("content"))


async def request_metadata(url: str, context: dict[str, Any]) -> None:
    """SEP-2575: every request carries the ``_meta`` envelope and the version header; the first
    request is refused with -32022 and the client retries with a version the server supports."""
    async with connect(url, roots=[], sampling=_no_sampling, elicitation=accept_without_content) as client:
        await client.list_all_tools()


async def _no_sampling(params: dict[str, Any]) -> dict[str, Any]:
    raise MCPError(-1, "this client does not sample")


async def request_state(url: str, context: dict[str, Any]) -> None:
    """SEP-2322: ``requestState`` echoed unchanged, never invented, never carried to another call;
    a result without ``resultType`` is complete."""
    connected: list[Client] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        if "no state" not in str(params.get("message")):
            # Another call while the first waits for this answer: it must carry nothing of it.
            await connected[0].call_tool("test_mrtr_unrelated", {})
        return await accept_confirmed(params)

    async with connect(url, elicitation=answer) as client:
        connected.append(client)
        await client.list_all_tools()
        await client.call_tool("test_mrtr_echo_state", {})
        await client.call_tool("test_mrtr_no_state", {})
        await client.call_tool("test_mrtr_no_result_type", {})


async def standard_headers(url: str, context: dict[str, Any]) -> None:
    """SEP-2243: ``Mcp-Method`` on every POST, ``Mcp-Name`` on calls, reads and gets."""
    async with connect(url) as client:
        for tool in await client.list_all_tools():
            await client.call_tool(tool["name"], {})
        for resource in await client.list_all_resources():
            await client.read_resource(resource["uri"])
        for prompt in await client.list_all_prompts():
            await client.get_prompt(prompt["name"])


async def custom_headers(url: str, context: dict[str, Any]) -> None:
    """SEP-2243: the calls the suite hands over, with their ``x-mcp-header`` arguments mirrored."""
    async with connect(url) as client:
        await client.list_all_tools()
        for call in context.get("toolCalls", []):
            await client.call_tool(call["name"], call.get("arguments", {}))


async def invalid_tool_headers(url: str, context: dict[str, Any]) -> None:
    """SEP-2243: every listed tool is tried; the client refuses those with invalid annotations."""
    async with connect(url) as client:
        for tool in await client.list_all_tools():
            try:
                await client.call_tool(tool["name"], _sample_arguments(tool.get("inputSchema") or {}))
            except MCPError as refused:
                logger.info("%s refused: %s %s", tool["name"], refused.code, refused.message)


def _sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    samples = {"string": "x", "number": 1, "integer": 1, "boolean": True, "object": {}, "array": [], "null": None}
    properties = schema.get("properties") or {}
    return {name: samples.get(spec.get("type"), "x") for name, spec in properties.items() if isinstance(spec, dict)}


async def list_only(url: str, context: dict[str, Any]) -> None:
    """SEP-2106: listing tools whose schemas hold remote ``$ref`` fetches nothing."""
    async with connect(url) as client:
        await client.list_all_tools()


async def schema_preservation(url: str, context: dict[str, Any]) -> None:
    """SEP-1613/2106: the focal tool's ``inputSchema`` is handed back exactly as it was listed."""
    async with connect(url) as client:
        tools = {tool["name"]: tool for tool in await client.list_all_tools()}
        focal = tools["json_schema_2020_12_tool"]
        await client.call_tool("json_schema_echo", {"schema": focal["inputSchema"]})


SCENARIOS: dict[str, Scenario] = {
    "initialize": list_and_call_first,
    "tools_call": list_and_call_first,
    "elicitation-sep1034-client-defaults": elicitation_defaults,
    "sse-retry": sse_retry,
    "request-metadata": request_metadata,
    "sep-2322-client-request-state": request_state,
    "http-standard-headers": standard_headers,
    "http-custom-headers": custom_headers,
    "http-invalid-tool-headers": invalid_tool_headers,
    "json-schema-ref-no-deref": list_only,
    "json-schema-2020-12-preservation": schema_preservation,
}


async def run(scenario: str, url: str, context: dict[str, Any]) -> None:
    """Play ``scenario`` against the scenario server at ``url``; raises when it cannot."""
    play = SCENARIOS.get(scenario)
    if play is None:
        raise SystemExit(f"conformance client: no handler for scenario {scenario!r}")
    with anyio.fail_after(SCENARIO_TIMEOUT):
        await play(url, context)
