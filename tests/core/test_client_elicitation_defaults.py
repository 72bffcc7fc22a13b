"""SEP-1034 on the client side: an accepted form's missing fields get the schema's defaults.

Regression: the client sent the callback's content as it was, so a user who accepted a form
without touching it answered ``{}`` and the server saw none of the values the form showed
(the conformance suite's ``elicitation-sep1034-client-defaults`` failed all five checks).
"""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp import Server
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
        "note": {"type": "string"},
    },
}
DEFAULTS = {"name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}


def eliciting_server(seen: list[dict[str, Any]]) -> Server:
    server = Server("eliciting", "1")

    @server.tool(name="ask")
    async def ask(ctx: Any, args: Any) -> str:
        seen.append(await ctx.elicit("Your details?", SCHEMA))
        return "ok"

    return server


def answering(answer: dict[str, Any]) -> Any:
    async def callback(params: dict[str, Any]) -> dict[str, Any]:
        return answer

    return callback


@pytest.mark.parametrize("version", ["2025-11-25", "2026-07-28"])
async def test_client_elicitation_fills_in_schema_defaults_on_accept(version: str) -> None:
    seen: list[dict[str, Any]] = []
    callback = answering({"action": "accept", "content": {"age": 41}})
    async with connect_in_memory(eliciting_server(seen), protocol_version=version, elicitation=callback) as client:
        await client.call_tool("ask", {})
    # What the user gave wins; a field without a default stays absent.
    assert seen == [{"action": "accept", "content": {**DEFAULTS, "age": 41}}]


async def test_client_elicitation_accept_without_content_gets_every_default() -> None:
    seen: list[dict[str, Any]] = []
    async with connect_in_memory(eliciting_server(seen), elicitation=answering({"action": "accept"})) as client:
        await client.call_tool("ask", {})
    assert seen == [{"action": "accept", "content": DEFAULTS}]


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_client_elicitation_declined_answer_is_left_alone(action: str) -> None:
    seen: list[dict[str, Any]] = []
    async with connect_in_memory(eliciting_server(seen), elicitation=answering({"action": action})) as client:
        await client.call_tool("ask", {})
    assert seen == [{"action": action}]


async def test_client_elicitation_defaults_can_be_turned_off() -> None:
    seen: list[dict[str, Any]] = []
    callback = answering({"action": "accept", "content": {}})
    async with connect_in_memory(eliciting_server(seen), elicitation=callback, elicitation_defaults=False) as client:
        await client.call_tool("ask", {})
    assert seen == [{"action": "accept", "content": {}}]
