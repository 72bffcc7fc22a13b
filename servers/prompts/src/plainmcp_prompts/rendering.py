"""``prompts/get`` for a library prompt: the arguments checked, the template rendered.

Shared by the ``prompts/get`` method and the ``render_prompt`` tool, so both give the same text
and refuse the same arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anyio
from plainmcp import ErrorCode, MCPError

from . import typed
from .completion import History
from .frontmatter import FormatError, clip, quote
from .library import Library
from .model import Embed, PromptSpec
from .pattern import Budget
from .template import MAX_RENDER_BYTES, TooLarge, render

#: Longest argument value accepted (characters).
MAX_VALUE_CHARS = 64 * 1024


def check_values(spec: PromptSpec, arguments: Mapping[str, Any] | None, budget: Budget | None = None) -> dict[str, str]:
    """Every argument's value, defaults applied: the mapping the template is rendered with.

    Raises MCPError(-32602) naming the problem: an argument the prompt does not take, a value that
    is not a string or too long, a required argument missing or empty, a value not among the
    argument's allowed values, or not of its type, range or pattern (:mod:`.typed`), or too costly
    to match against its pattern (all matches of the call share ``budget``). An empty value counts
    as absent (clients often send "" for a field left blank).
    """
    budget = Budget() if budget is None else budget
    given = dict(arguments or {})
    unknown = [name for name in given if spec.argument(name) is None]
    if unknown:
        takes = ", ".join(a.name for a in spec.arguments) or "no arguments"
        raise _invalid(
            f"Prompt {spec.name!r} has no argument {clip(', '.join(map(quote, unknown)), 200)}; "
            f"it takes: {clip(takes, 200)}",
            {"unknown": unknown},
        )
    values: dict[str, str] = {}
    missing: list[str] = []
    for argument in spec.arguments:
        value = given.get(argument.name)
        if value is not None and not isinstance(value, str):
            raise _invalid(f"Argument {argument.name!r} of prompt {spec.name!r} must be a string")
        if value is not None and len(value) > MAX_VALUE_CHARS:
            raise _invalid(
                f"Argument {argument.name!r} of prompt {spec.name!r} is longer than {MAX_VALUE_CHARS} characters"
            )
        if not value:
            if argument.required:
                missing.append(argument.name)
                continue
            value = argument.default or ""
        elif argument.values and value not in argument.values:
            raise _invalid(
                f"Argument {argument.name!r} of prompt {spec.name!r} must be one of: "
                f"{clip(', '.join(argument.values), 200)} (got {quote(value)})",
                {"argument": argument.name, "allowed": list(argument.values)},
            )
        else:
            wrong = typed.problem(argument, value, budget)
            if wrong is not None:
                raise _invalid(
                    f"Argument {argument.name!r} of prompt {spec.name!r} {wrong}", {"argument": argument.name}
                )
            if argument.type == "boolean":
                value = typed.normalize(argument, value)
        values[argument.name] = value
    if missing:
        raise _invalid(
            f"Missing required argument{'s' if len(missing) > 1 else ''} for prompt {spec.name!r}: "
            f"{', '.join(missing)}",
            {"missing": missing},
        )
    return values


async def render_prompt(
    library: Library, history: History, spec: PromptSpec, arguments: Mapping[str, Any] | None
) -> dict[str, Any]:
    """The ``prompts/get`` result for ``spec``. Raises MCPError (-32602 for arguments, and for a
    result that would be larger than MAX_RENDER_BYTES; -32603 for an embedded file that cannot be
    read now: the message names the file as written, never a host path)."""
    if any(argument.pattern is not None for argument in spec.arguments):
        # Matching is bounded (a work budget) but pure Python: off the event loop. A cancelled call
        # is answered at once and stops the thread's matching within a few hundred characters.
        budget = Budget()
        try:
            values = await anyio.to_thread.run_sync(check_values, spec, arguments, budget, abandon_on_cancel=True)
        finally:
            budget.stop()
    else:
        values = check_values(spec, arguments)

    def read(embed: Embed) -> Any:
        try:
            return library.read_embed(spec, embed)
        except FormatError as error:
            raise MCPError(
                ErrorCode.INTERNAL_ERROR, f"Prompt {spec.name!r} cannot be rendered: {error.message}"
            ) from None

    has_embeds = any(isinstance(s, Embed) for message in spec.messages for s in message.segments)
    try:
        if has_embeds:  # file reads leave the event loop
            messages = await anyio.to_thread.run_sync(render, spec.messages, values, read)
        else:
            messages = render(spec.messages, values, read)
    except TooLarge:
        raise _invalid(
            f"Prompt {spec.name!r} rendered with these arguments would be larger than "
            f"{MAX_RENDER_BYTES} bytes once encoded; shorten the arguments"
        ) from None
    history.remember(spec.name, {name: value for name, value in (arguments or {}).items() if value})
    return {"description": spec.description, "messages": messages}


def _invalid(message: str, data: Any = None) -> MCPError:
    return MCPError(ErrorCode.INVALID_PARAMS, message, data)
