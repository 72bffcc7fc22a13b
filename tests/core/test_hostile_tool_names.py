"""A tools/call whose name is not a string is invalid params (-32602) in both eras, with or without a task
asked for, never -32603."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp import ErrorCode, MCPError, Server
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio

MODERN_ENVELOPE = {
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    }
}
HOSTILE_NAMES = [["work"], {"work": 1}, 7, None]


def server() -> Server:
    built = Server("hostile-names", "1.0.0")

    @built.tool(task_support="optional")
    async def work(ctx: Any, args: dict[str, Any]) -> str:
        """Some work."""
        return "done"

    return built


async def refused(version: str, params: dict[str, Any]) -> MCPError:
    async with connect_in_memory(server(), protocol_version=version) as client:
        with pytest.raises(MCPError) as raised:
            await client.session.request("tools/call", params)
    return raised.value


@pytest.mark.parametrize("name", HOSTILE_NAMES)
async def test_modern_a_name_that_is_not_a_string_is_invalid_params(name: Any) -> None:
    # Regression: the task check looked the name up before it was validated, and a list or an
    # object (unhashable) raised TypeError there: -32603 Internal error for a peer's bad input.
    error = await refused("2026-07-28", {"name": name, "arguments": {}, **MODERN_ENVELOPE})
    assert error.code == ErrorCode.INVALID_PARAMS


@pytest.mark.parametrize("task", [False, True], ids=["call", "task"])
@pytest.mark.parametrize("name", HOSTILE_NAMES)
async def test_legacy_a_name_that_is_not_a_string_is_invalid_params(name: Any, task: bool) -> None:
    error = await refused("2025-11-25", {"name": name, "arguments": {}, **({"task": {}} if task else {})})
    assert error.code == ErrorCode.INVALID_PARAMS
