"""completion/complete with a ref whose name or uri is not a string: invalid params (-32602), never -32603."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp import Context, ErrorCode, MCPError, PromptArgument, Server
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio


def server() -> Server:
    built = Server("hostile-refs", "1.0.0")

    async def colours(ctx: Context, value: str, others: dict[str, str]) -> list[str]:
        return [c for c in ("red", "green") if c.startswith(value)]

    @built.prompt(arguments=[PromptArgument("colour", "A colour", complete=colours)])
    async def paint(ctx: Context, args: dict[str, str]) -> str:
        """Paint something."""
        return f"Paint it {args['colour']}"

    @built.resource("notes://index", "index")
    async def index(ctx: Context, uri: str) -> str:
        """The index."""
        return ""

    return built


@pytest.mark.parametrize(
    "ref",
    [
        {"type": "ref/prompt", "name": ["paint"]},
        {"type": "ref/prompt", "name": {"paint": 1}},
        {"type": "ref/resource", "uri": ["notes://index"]},
        {"type": "ref/resource", "uri": {"notes://index": 1}},
    ],
)
async def test_an_unhashable_name_or_uri_is_invalid_params(ref: dict[str, Any]) -> None:
    # Regression: the lookups hashed the peer's value, and a list or an object raised TypeError
    # (-32603 Internal error) instead of naming the unknown prompt or template. Found by mypy.
    async with connect_in_memory(server()) as client:
        with pytest.raises(MCPError) as raised:
            await client.session.request(
                "completion/complete", {"ref": ref, "argument": {"name": "colour", "value": ""}}
            )
    assert raised.value.code == ErrorCode.INVALID_PARAMS


async def test_string_refs_still_complete() -> None:
    async with connect_in_memory(server()) as client:
        result = await client.session.request(
            "completion/complete",
            {"ref": {"type": "ref/prompt", "name": "paint"}, "argument": {"name": "colour", "value": "r"}},
        )
    assert result["completion"]["values"] == ["red"]
