"""The client: retries only what is safe to repeat, and closes a stdio server as the spec says."""

from __future__ import annotations

import sys
import time
from typing import Any

import anyio
import pytest
from plainmcp import ErrorCode, MCPError, Server, ToolAnnotations, connect_stdio
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio


def flaky_server() -> tuple[Server, dict[str, int]]:
    """Tools whose first call hangs; later calls answer at once. Counts calls per tool."""
    calls: dict[str, int] = {}
    server = Server("flaky", "1")

    def register(name: str, annotations: ToolAnnotations | None) -> None:
        @server.tool(name=name, annotations=annotations)
        async def handler(ctx: Any, args: Any) -> str:
            calls[name] = calls.get(name, 0) + 1
            if calls[name] == 1:
                await anyio.sleep(30)
            return f"{name} {calls[name]}"

    register("lookup", ToolAnnotations(read_only=True))
    register("upsert", ToolAnnotations(idempotent=True))
    register("charge_card", None)
    return server, calls


async def test_idempotent_tools_are_retried_after_timeout() -> None:
    server, calls = flaky_server()
    async with connect_in_memory(server, request_timeout=0.2, backoff=0.01) as client:
        await client.list_all_tools()
        assert (await client.call_tool("lookup"))["content"][0]["text"] == "lookup 2"
        assert (await client.call_tool("upsert"))["content"][0]["text"] == "upsert 2"
    assert calls == {"lookup": 2, "upsert": 2}


async def test_non_idempotent_tool_is_never_retried() -> None:
    server, calls = flaky_server()
    async with connect_in_memory(server, request_timeout=0.2, backoff=0.01) as client:
        await client.list_all_tools()
        with pytest.raises(MCPError) as raised:
            await client.call_tool("charge_card")
        assert raised.value.code == ErrorCode.REQUEST_TIMEOUT
        await client.ping()
    assert calls == {"charge_card": 1}


async def test_retries_are_bounded() -> None:
    server = Server("stuck", "1")
    attempts = []

    @server.resource("test://slow", "slow")
    async def slow(ctx: Any, uri: str) -> str:
        attempts.append(time.monotonic())
        await anyio.sleep(30)
        return "never"

    async with connect_in_memory(server, request_timeout=0.1, retries=2, backoff=0.01) as client:
        with pytest.raises(MCPError):
            await client.read_resource("test://slow")
    assert len(attempts) == 3


async def test_connect_stdio_initializes_and_stops_the_process(feature_server_command: list[str]) -> None:
    with anyio.fail_after(20):
        async with connect_stdio(feature_server_command) as client:
            assert client.server_info["name"] == "feature-server"
            assert (await client.call_tool("echo", {"text": "héllo ✓"}))["content"][0]["text"] == "héllo ✓"
            assert client.process.returncode is None
    # End of input was enough: the server exited by itself, cleanly.
    assert client.process.returncode == 0


async def test_connect_stdio_escalates_to_sigterm_when_server_ignores_eof(tmp_path: Any) -> None:
    # A "server" that answers initialize and then ignores end of input: it must be stopped anyway.
    script = tmp_path / "stubborn.py"
    script.write_text(
        "import sys, json, time\n"
        "line = sys.stdin.readline()\n"
        "req = json.loads(line)\n"
        "print(json.dumps({'jsonrpc': '2.0', 'id': req['id'], 'result': {'protocolVersion': '2025-11-25',"
        " 'capabilities': {}, 'serverInfo': {'name': 's', 'version': '1'}}}), flush=True)\n"
        "while True:\n    time.sleep(1)\n"
    )
    with anyio.fail_after(20):
        async with connect_stdio([sys.executable, str(script)], close_grace=0.3) as client:
            assert client.server_info == {"name": "s", "version": "1"}
    # End of input was ignored; SIGTERM (default action) ended it.
    assert client.process.returncode == -15


async def test_auto_probe_falls_back_after_probe_timeout_when_discover_is_never_answered() -> None:
    """A legacy server that drops unknown methods before ``initialize`` must not hold the probe for the
    whole request timeout (30 s): the probe gives up after ``probe_timeout`` and initializes."""
    from plainmcp.client import open_client
    from plainmcp.jsonrpc import Request, Response
    from plainmcp.session import Outbound
    from plainmcp.testing import memory_pair

    seen: list[str] = []

    async def silent_legacy_peer(read: Any, write: Any) -> None:
        async for item in read:
            if isinstance(item, Request):
                seen.append(item.method)
                if item.method == "initialize":
                    result = {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "serverInfo": {"name": "old", "version": "1"},
                    }
                    await write.send(Outbound(Response(item.id, result)))

    async with memory_pair() as ((server_read, server_write), (client_read, client_write)):
        async with anyio.create_task_group() as task_group:
            task_group.start_soon(silent_legacy_peer, server_read, server_write)
            with anyio.fail_after(5):
                async with open_client(
                    client_read, client_write, protocol_version="auto", probe_timeout=0.2, request_timeout=30
                ) as client:
                    assert client.protocol_version == "2025-11-25"
                    assert client.server_info["name"] == "old"
            task_group.cancel_scope.cancel()
    assert seen == ["server/discover", "initialize"]  # the probe was sent once, not retried


async def test_client_says_which_transport_it_is_on() -> None:
    async with connect_in_memory(Server("t", "0")) as client:
        assert client.transport == "memory"


async def test_connect_stdio_takes_a_larger_message_limit(feature_server_command: list[str]) -> None:
    """An answer over the default 4 MiB line limit reaches a client that raised its limit."""
    big = "x" * (5 * 1024 * 1024)
    server = [*feature_server_command, "--max-message-bytes", str(16 * 1024 * 1024)]
    async with connect_stdio(server, max_message_bytes=16 * 1024 * 1024, request_timeout=10, retries=0) as client:
        result = await client.call_tool("echo", {"text": big})
        assert result["content"][0]["text"] == big
