"""N replicas of one legacy-era test server, in this process, each on its own real uvicorn server.

:func:`replicas` builds the same server definition N times (:func:`build_server`), gives each its own
:class:`~plainmcp.state.redis_state.RedisState` on one Redis (one prefix: they are one deployment),
and serves each ``MCPApp`` with uvicorn on a thread of its own (its own event loop) on a free port
of 127.0.0.1. Tests round-robin their requests over ``[r.url for r in replicas]``; a load balancer
can be put in front of the same ports. Every wait is bounded.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import anyio
from plainmcp import Server
from plainmcp.http.app import MCPApp
from plainmcp.state.redis_state import RedisState

from tests.e2e.http_server import ThreadedApp, app_in_thread

PREFIX = "legacy-test:"
WATCHED = "memo://watched"
#: Ids of the ``slow`` calls that were cancelled, on any replica (they all run in this process).
CANCELLED: list[object] = []


def build_server() -> Server:
    """The server every replica runs: tools that stream, cut their stream, ask the client, change things."""
    server = Server("legacy-replicas", "0.0.1", resource_subscriptions=True)

    @server.tool(input_schema={"type": "object", "properties": {"text": {"type": "string"}}})
    async def echo(ctx: Any, arguments: dict[str, Any]) -> str:
        """Echo the text back."""
        return str(arguments.get("text", ""))

    @server.tool()
    async def chatty(ctx: Any, arguments: dict[str, Any]) -> str:
        """Log at info, then answer."""
        await ctx.info("chatting")
        return "said it"

    @server.tool()
    async def two_logs(ctx: Any, arguments: dict[str, Any]) -> str:
        """Log, log again 0.5 s later, answer."""
        await ctx.info("one")
        await anyio.sleep(0.5)
        await ctx.info("two")
        return "logged twice"

    @server.tool()
    async def cut(ctx: Any, arguments: dict[str, Any]) -> str:
        """Log, end the SSE response early (SSE polling), log again a moment later, answer."""
        await ctx.info("before the cut")
        ctx.close_sse_stream()
        await anyio.sleep(0.5)
        await ctx.info("after the cut")
        return "cut done"

    @server.tool()
    async def ask(ctx: Any, arguments: dict[str, Any]) -> str:
        """Ask the user (elicitation) and tell what they said."""
        answer = await ctx.elicit("Your name?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"{answer.get('action')}: {(answer.get('content') or {}).get('name')}"

    @server.tool()
    async def slow(ctx: Any, arguments: dict[str, Any]) -> str:
        """Take 30 s, unless cancelled (noted in CANCELLED)."""
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            CANCELLED.append(ctx.request_id)
            raise
        return "slept"

    @server.tool(task_support="optional")
    async def brew(ctx: Any, arguments: dict[str, Any]) -> str:
        """Become a task, take 0.3 s, answer."""
        await ctx.start_task()
        await anyio.sleep(0.3)
        return "brewed"

    @server.tool()
    async def change(ctx: Any, arguments: dict[str, Any]) -> str:
        """Announce that the watched resource changed."""
        await ctx.notify_resource_updated(WATCHED)
        return "changed"

    @server.resource(WATCHED, name="watched")
    async def watched(ctx: Any, uri: str) -> str:
        return "watched"

    return server


def shared_app(redis_url: str, **options: Any) -> MCPApp:
    """One replica's app: the test server on shared state in Redis."""
    server = build_server()
    server.share(RedisState(redis_url, prefix=PREFIX, command_timeout=1.0))
    return MCPApp(server, **options)


@contextlib.contextmanager
def replicas(redis_url: str, count: int = 3, **options: Any) -> Iterator[list[ThreadedApp]]:
    """``count`` replicas sharing ``redis_url``, each served on 127.0.0.1 (``options`` go to MCPApp)."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(app_in_thread(shared_app(redis_url, **options))) for _ in range(count)]
