"""Input from the client, the 2026-07-28 way: multi-round-trip requests (SEP-2322, ``input_required``).

Every handler here asks with ``ctx.ask`` under a key the conformance suite names. In 2026-07-28 the
first call answers ``resultType: "input_required"`` with those ``inputRequests`` and a sealed
``requestState``; the client retries with ``inputResponses`` (and the state), and the handler runs
again from the top, this time getting its answers. The core signs the state (a tampered one is
-32602), keeps earlier rounds' answers in it, re-asks for answers that are missing or malformed,
ignores extra ones, and answers -32021 when the client did not declare a capability a request
needs. Under 2025-11-25 and earlier the same handlers send the client ordinary requests instead.
"""

from __future__ import annotations

from typing import Any

from plainmcp import Context, Server, ToolResult, content, inputs

from .tools import compact_json, elicitation_summary, sampled_text, text_result


def _form(field: str, kind: str) -> dict[str, Any]:
    """A requested schema of one required field."""
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


def _ask_model(text: str, max_tokens: int) -> inputs.InputRequest:
    return inputs.sampling([{"role": "user", "content": content.text(text)}], max_tokens)


# The questions, as the conformance suite words them.
ASK_NAME = inputs.elicitation("What is your name?", _form("name", "string"))
ASK_CONFIRM = inputs.elicitation("Please confirm", _form("ok", "boolean"))
ASK_CAPITAL = _ask_model("What is the capital of France?", 100)
ASK_GREETING = _ask_model("Generate a greeting", 50)
ASK_STEP1 = inputs.elicitation("Step 1: What is your name?", _form("name", "string"))
ASK_STEP2 = inputs.elicitation("Step 2: What is your favorite color?", _form("color", "string"))
ASK_CONTEXT = inputs.elicitation("What context should the prompt use?", _form("context", "string"))
ASK_CONTINUE = inputs.elicitation("Continue streaming?", _form("continue", "boolean"))


async def ask_one(ctx: Context, key: str, request: inputs.InputRequest) -> dict[str, Any]:
    """Ask for one input under ``key``; returns the client's answer."""
    return (await ctx.ask({key: request}))[key]


def accepted(answer: dict[str, Any], field: str) -> Any:
    """A field of an accepted elicitation; None when the user declined, cancelled or left it out."""
    fields = answer.get("content") if answer.get("action") == "accept" else None
    return fields.get(field) if isinstance(fields, dict) else None


async def test_missing_capability(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Needs the client's sampling capability: without it the call fails with -32021 (2026-07-28)"""
    result = await ctx.sample([{"role": "user", "content": content.text("Say hello.")}], max_tokens=20)
    return text_result(f"Success: {sampled_text(result)}")


async def test_input_required_result_elicitation(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks the user's name (elicitation, key user_name), then greets them"""
    answer = await ask_one(ctx, "user_name", ASK_NAME)
    name = accepted(answer, "name")
    return text_result(f"Hello, {name}!" if name else f"No name given: {elicitation_summary(answer)}")


async def test_input_required_result_sampling(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks the client's LLM a question (sampling, key capital_question)"""
    answer = await ask_one(ctx, "capital_question", ASK_CAPITAL)
    return text_result(f"Sampling result: {sampled_text(answer)}")


async def test_input_required_result_list_roots(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks for the client's roots (roots/list, key client_roots)"""
    roots = (await ask_one(ctx, "client_roots", inputs.roots()))["roots"]
    return text_result(f"Found {len(roots)} root(s): {', '.join(str(root.get('uri')) for root in roots)}")


async def test_input_required_result_request_state(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks for a confirmation (key confirm) and keeps a round counter in the sealed requestState"""
    ctx.state["round"] = ctx.state.get("round", 0) + 1
    answer = await ask_one(ctx, "confirm", ASK_CONFIRM)
    ok = compact_json(accepted(answer, "ok"))
    return text_result(f"state-ok: requestState validated in round {ctx.state['round']}, ok={ok}")


async def test_input_required_result_multiple_inputs(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks for three inputs in one round (elicitation, sampling and roots)"""
    answers = await ctx.ask({"user_name": ASK_NAME, "greeting": ASK_GREETING, "client_roots": inputs.roots()})
    name = accepted(answers["user_name"], "name")
    greeting = sampled_text(answers["greeting"])
    return text_result(f"Name: {name}; Greeting: {greeting}; Roots: {len(answers['client_roots']['roots'])}")


async def test_input_required_result_multi_round(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks in two rounds (step1: a name, then step2: a colour); each round's requestState differs"""
    # The second question is asked only once the first is answered: two input_required rounds.
    name = accepted(await ask_one(ctx, "step1", ASK_STEP1), "name")
    color = accepted(await ask_one(ctx, "step2", ASK_STEP2), "color")
    return text_result(f"Multi-round complete for {name} who likes {color}")


async def test_input_required_result_tampered_state(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks for a confirmation (key confirm); a retry with an altered requestState is rejected (-32602)"""
    await ask_one(ctx, "confirm", ASK_CONFIRM)
    return text_result("integrity-ok: state verified")


async def test_input_required_result_capabilities(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """MRTR: asks only for the inputs whose capability the client declared (elicitation, sampling, roots)"""
    wanted: dict[str, inputs.InputRequest] = {}
    if ctx.client_supports("elicitation"):
        wanted["elicit_input"] = inputs.elicitation("Elicitation input", _form("value", "string"))
    if ctx.client_supports("sampling"):
        wanted["sample_input"] = _ask_model("Sample request", 50)
    if ctx.client_supports("roots"):
        wanted["roots_input"] = inputs.roots()
    if not wanted:
        return text_result("No supported capabilities declared")
    await ctx.ask(wanted)
    return text_result(f"capabilities-ok: received {','.join(wanted)}")


async def test_streaming_elicitation(ctx: Context, args: dict[str, Any]) -> ToolResult:
    """Reports progress, then asks the user to go on: in 2026-07-28 the question travels as an
    input_required result on the call's own stream, never as a request of the server's"""
    await ctx.report_progress(50, 100, "Waiting for the user")
    answer = await ask_one(ctx, "continue", ASK_CONTINUE)
    await ctx.report_progress(100, 100, "Answer received")
    return text_result(f"Streaming complete: {elicitation_summary(answer)}")


async def test_input_required_result_prompt(ctx: Context, args: dict[str, str]) -> str:
    """MRTR: a prompt that first asks the user for its context (elicitation, key user_context)"""
    answer = await ask_one(ctx, "user_context", ASK_CONTEXT)
    return f"Prompt with context: {accepted(answer, 'context')}"


def register(server: Server) -> None:
    """Register the tools above, then the prompt, in listing order (the name is the handler's)."""
    server.tool()(test_missing_capability)
    server.tool()(test_input_required_result_elicitation)
    server.tool()(test_input_required_result_sampling)
    server.tool()(test_input_required_result_list_roots)
    server.tool()(test_input_required_result_request_state)
    server.tool()(test_input_required_result_multiple_inputs)
    server.tool()(test_input_required_result_multi_round)
    server.tool()(test_input_required_result_tampered_state)
    server.tool()(test_input_required_result_capabilities)
    server.tool()(test_streaming_elicitation)
    server.prompt()(test_input_required_result_prompt)
