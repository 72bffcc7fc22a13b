"""Regression: a client's error answer to a server -> client request leaked out as the error of the
tools/call that made it (found by the SDK interop tests: a sampling refusal with code -1 came back
as the tools/call's own error, so a client could be told its call was an "invalid request")."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp import MCPError, Server
from plainmcp.testing import connect_in_memory

from tests.fixtures.feature_server import build_server

pytestmark = pytest.mark.anyio


async def _refuse(params: dict[str, Any]) -> dict[str, Any]:
    raise MCPError(-32600, "User rejected sampling")


async def test_refused_sampling_is_a_tool_error_result_not_a_protocol_error() -> None:
    async with connect_in_memory(build_server(), sampling=_refuse) as client:
        result = await client.call_tool("ask_model", {"prompt": "x"})
    assert result == {
        "content": [
            {"type": "text", "text": "The tool could not complete: the client answered 'User rejected sampling'"}
        ],
        "isError": True,
    }


async def test_refused_request_inside_a_prompt_is_a_generic_internal_error() -> None:
    server = Server("s", "1")

    @server.prompt()
    async def needs_model(ctx: Any, args: Any) -> str:
        await ctx.sample([], max_tokens=5)
        return "never"

    async with connect_in_memory(server, sampling=_refuse) as client:
        with pytest.raises(MCPError) as raised:
            await client.get_prompt("needs_model")
    assert (raised.value.code, raised.value.message) == (-32603, "Internal error")
