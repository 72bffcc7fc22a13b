"""A 2026-07-28 tools/call whose name is not a string is invalid params, as in the legacy era, never -32603."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp import ErrorCode, MCPError, Server
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio

TASKS_ENVELOPE = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
}


def server() -> Server:
    built = Server("hostile-names", "1.0.0")

    @built.tool(task_support="optional")
    async def work(ctx: Any, args: dict[str, Any]) -> str:
        """Some work."""
        return "done"

    return built


@pytest.mark.parametrize("name", [["work"], {"work": 1}, 7, None])
async def test_a_name_that_is_not_a_string_is_invalid_params(name: Any) -> None:
    # Regression: the task check looked the name up before it was validated, and a list or an
    # object (unhashable) raised TypeError there: -32603 Internal error for a peer's bad input.
    async with connect_in_memory(server(), protocol_version="2026-07-28") as client:
        with pytest.raises(MCPError) as raised:
            await client.session.request("tools/call", {"name": name, "arguments": {}, **TASKS_ENVELOPE})
    assert raised.value.code == ErrorCode.INVALID_PARAMS
