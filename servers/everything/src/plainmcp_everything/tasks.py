"""The tasks extension's fixtures (SEP-2663, 2026-07-28), under the names the conformance suite expects.

A tool registered with ``task_support`` becomes a task when its handler awaits ``ctx.start_task()``
and the client declared ``io.modelcontextprotocol/tasks``; for any other client it runs as an
ordinary call (``required`` ones are refused with ``-32021`` by the core). The handler runs again from
the top as the task, so what comes before ``start_task`` must be safe to repeat.
"""

from __future__ import annotations

from typing import Any

import anyio
from plainmcp import Context, ErrorCode, MCPError, Server, ToolError, inputs

from .tools import text_result

#: slow_compute sleeps at most this long (the suite asks for 60 s and cancels it).
MAX_SECONDS = 120
FAILING_SECONDS = 1.0

GREET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Who to greet"}},
    "required": ["name"],
}
SLOW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "seconds": {"type": "number", "minimum": 0, "maximum": MAX_SECONDS, "description": "How long to work"},
        "label": {"type": "string", "description": "A label echoed in the result"},
    },
    "required": ["seconds"],
}
DELETE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"filename": {"type": "string", "description": "The (pretend) file to delete"}},
    "required": ["filename"],
}
CONFIRM: dict[str, Any] = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}
NAME: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
USER_NAME: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "Your name"}},
    "required": ["name"],
}


async def greet(ctx: Context, args: dict[str, Any]) -> Any:
    """Says hello (never a task)"""
    return text_result(f"Hello, {args['name']}!")


async def slow_compute(ctx: Context, args: dict[str, Any]) -> Any:
    """Works for the given number of seconds, as a task when the client takes tasks (0 answers at once)"""
    seconds = args["seconds"]
    if seconds > 0:
        await ctx.start_task()
        await anyio.sleep(seconds)
    return text_result(f"Computed {args.get('label', 'result')} in {seconds} s")


async def failing_job(ctx: Context, args: dict[str, Any]) -> Any:
    """Always a task; ends after about a second with a tool error"""
    await ctx.start_task()
    await anyio.sleep(FAILING_SECONDS)
    raise ToolError("failing_job failed on purpose")


async def protocol_error_job(ctx: Context, args: dict[str, Any]) -> Any:
    """A task that ends in a protocol error (the task fails, with the error inlined)"""
    await ctx.start_task()
    raise MCPError(ErrorCode.INTERNAL_ERROR, "protocol_error_job failed on purpose")


async def confirm_delete(ctx: Context, args: dict[str, Any]) -> Any:
    """A task that asks the user to confirm before it (pretends to) delete a file"""
    await ctx.start_task()
    answer = await ctx.elicit(f"Delete {args['filename']}?", CONFIRM)
    confirmed = answer.get("action") == "accept" and (answer.get("content") or {}).get("confirm") is True
    return text_result(f"Deleted {args['filename']}" if confirmed else f"Kept {args['filename']}")


async def multi_input(ctx: Context, args: dict[str, Any]) -> Any:
    """A task that asks two questions at once"""
    await ctx.start_task()
    answers = await ctx.ask(
        {
            "first": inputs.elicitation("First name?", NAME),
            "second": inputs.elicitation("Second name?", NAME),
        }
    )
    names = [(answers[key].get("content") or {}).get("name") for key in ("first", "second")]
    return text_result(f"Got {names[0]} and {names[1]}")


async def test_tool_with_task(ctx: Context, args: dict[str, Any]) -> Any:
    """Asks for the user's name (input_required), then goes on as a task that greets them"""
    answer = await ctx.elicit("What is your name?", USER_NAME)
    name = (answer.get("content") or {}).get("name", "stranger")
    await ctx.start_task()
    return text_result(f"Hello from the task, {name}!")


def register(server: Server) -> None:
    server.tool(input_schema=GREET_SCHEMA)(greet)
    server.tool(input_schema=SLOW_SCHEMA, task_support="optional")(slow_compute)
    server.tool(task_support="required")(failing_job)
    server.tool(task_support="optional")(protocol_error_job)
    server.tool(input_schema=DELETE_SCHEMA, task_support="optional")(confirm_delete)
    server.tool(task_support="optional")(multi_input)
    server.tool(task_support="required")(test_tool_with_task)
