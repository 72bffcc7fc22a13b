"""The feature methods: ``tools/*``, ``resources/*``, ``prompts/*``, ``completion/complete``.

Each is ``async def method(ctx, params) -> result`` and is era-neutral: the dispatchers
(``legacy.py``, ``modern.py``) decide who may call what, and decorates results the way its
revision wants. Only what differs *inside* a feature between revisions is decided here, from
``ctx.version``: fields a revision does not know are left out, and the resource-not-found code.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from . import apps, protocol
from .context import Context
from .errors import ErrorCode, MCPError, RequestFailed, invalid_params, method_not_found
from .pagination import paginate
from .prompts import to_prompt_result
from .resources import Completer, Resource, to_contents
from .tools import ToolError, error_result, invalid_arguments_result, to_call_result
from .versions import V2025_03_26, V2025_06_18, V2025_11_25, at_least, is_modern

logger = logging.getLogger(__name__)

MethodHandler = Callable[[Context, dict[str, Any]], Awaitable[dict[str, Any]]]

MAX_COMPLETION_VALUES = 100

# Fields of list entries that appeared in a later revision than the oldest, and where.
_NEWER_FIELDS: dict[str, str] = {
    "title": V2025_06_18,
    "outputSchema": V2025_06_18,
    "icons": V2025_11_25,
    "annotations": V2025_03_26,
    "execution": V2025_11_25,
}


def _for_version(entry: dict[str, Any], version: str, fields: tuple[str, ...]) -> dict[str, Any]:
    """``entry`` without the fields ``version`` does not know of."""
    unknown = [f for f in fields if f in entry and not at_least(version, _NEWER_FIELDS[f])]
    if not unknown:
        return entry
    return {key: value for key, value in entry.items() if key not in unknown}


def _string_param(params: dict[str, Any], name: str) -> str:
    value = params.get(name)
    if not isinstance(value, str):
        raise invalid_params(f'"{name}" must be a string')
    return value


def resource_not_found(ctx: Context, uri: str) -> MCPError:
    """-32002 in the legacy revisions; 2026-07-28 makes it -32602 and forbids -32002."""
    code = ErrorCode.INVALID_PARAMS if is_modern(ctx.version) else ErrorCode.RESOURCE_NOT_FOUND
    return MCPError(code, f"Resource not found: {uri}", {"uri": uri})


# -------------------------------------------------------------------------------------------- tools


async def tools_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    server = ctx.server
    tools = [tool for tool in server.tools.values() if not apps.hidden_tool(ctx, tool)]
    page, next_cursor = paginate("tools", tools, params.get("cursor"), server.page_size)
    fields = ("title", "outputSchema", "icons", "annotations", "execution")
    entries = [apps.listed_tool(ctx, _for_version(tool.to_dict(), ctx.version, fields)) for tool in page]
    result: dict[str, Any] = {"tools": entries}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def tools_call(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = _string_param(params, "name")
    tool = ctx.server.tools.get(name)
    if tool is None or apps.hidden_tool(ctx, tool):
        raise invalid_params(f"Unknown tool: {name}", {"name": name})
    arguments = params.get("arguments")
    if arguments is None:
        arguments = {}
    elif not isinstance(arguments, dict):
        raise invalid_params('"arguments" must be an object')
    try:
        problems = tool.input_validator.errors(arguments)
    except RecursionError:  # nested deeper than validation can walk: refused, not an internal error
        raise invalid_params('"arguments" are nested too deeply') from None
    if problems:
        return invalid_arguments_result(tool, problems)
    try:
        value = await tool.handler(ctx, arguments)
    except ToolError as failure:
        return error_result(str(failure))
    except RequestFailed as failure:
        # The client refused or did not answer a request this tool made (sampling, elicitation,
        # roots): a tool failure the model can see, not an error of this tools/call.
        return error_result(f"The tool could not complete: the client answered {failure.message!r}")
    result, structured = to_call_result(tool, value)
    if tool.output_validator is not None and not result.get("isError"):
        problems = ["no structured content"] if structured is None else tool.output_validator.errors(structured)
        if problems:
            logger.error("tool %r broke its outputSchema: %s", name, "; ".join(problems))
            raise MCPError(ErrorCode.INTERNAL_ERROR, "Internal error")
    if "structuredContent" in result and not (
        is_modern(ctx.version) or (at_least(ctx.version, V2025_06_18) and isinstance(structured, dict))
    ):
        # Before 2025-06-18 there is no structured content; until 2026-07-28 it must be an object.
        del result["structuredContent"]  # the text mirror stays
    return result


# ---------------------------------------------------------------------------------------- resources


async def resources_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    server = ctx.server
    listed = list(server.resources.values())
    if server.resource_lister is not None:
        listed.extend(await server.resource_lister(ctx))
    listed = [resource for resource in listed if not _hidden(ctx, resource)]
    page, next_cursor = paginate("resources", listed, params.get("cursor"), server.page_size)
    fields = ("title", "icons")
    result: dict[str, Any] = {"resources": [_for_version(r.to_dict(), ctx.version, fields) for r in page]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def resources_templates_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    server = ctx.server
    page, next_cursor = paginate("templates", server.templates, params.get("cursor"), server.page_size)
    fields = ("title", "icons")
    result: dict[str, Any] = {"resourceTemplates": [_for_version(t.to_dict(), ctx.version, fields) for t in page]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


def _hidden(ctx: Context, resource: Any) -> bool:
    """Whether a resource of an extension this client did not declare (an MCP Apps view) is hidden."""
    extension = getattr(resource, "extension", None)
    return extension is not None and ctx.client_extension(extension) is None


def _find_resource(ctx: Context, uri: str) -> Any:
    try:
        found = ctx.server.find_resource(uri)
    except UnicodeDecodeError:
        raise invalid_params(
            "Invalid params: the URI's percent-escapes do not decode as UTF-8", {"uri": uri[:200]}
        ) from None
    return None if found is not None and _hidden(ctx, found[0]) else found


async def resources_read(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    uri = _string_param(params, "uri")
    found = _find_resource(ctx, uri)
    if found is None:
        raise resource_not_found(ctx, uri)
    entry, variables = found
    if isinstance(entry, Resource):
        value = await entry.reader(ctx, uri)
    else:
        value = await entry.reader(ctx, uri, variables or {})
    if value is None:
        raise resource_not_found(ctx, uri)  # a reader's way to say "no such item"; never empty contents
    return {"contents": to_contents(uri, entry.mime_type, value)}


def subscription_uri(ctx: Context, params: dict[str, Any]) -> str:
    """The URI a ``resources/subscribe`` or ``unsubscribe`` names, checked: it must be a resource
    this server has, on a server that offers subscriptions."""
    if not ctx.server.resource_subscriptions:
        raise method_not_found(protocol.RESOURCES_SUBSCRIBE)
    uri = _string_param(params, "uri")
    if _find_resource(ctx, uri) is None:
        raise resource_not_found(ctx, uri)
    return uri


# ------------------------------------------------------------------------------------------ prompts


async def prompts_list(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    server = ctx.server
    page, next_cursor = paginate("prompts", list(server.prompts.values()), params.get("cursor"), server.page_size)
    fields = ("title", "icons")
    result: dict[str, Any] = {"prompts": [_for_version(p.to_dict(), ctx.version, fields) for p in page]}
    if next_cursor is not None:
        result["nextCursor"] = next_cursor
    return result


async def prompts_get(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    name = _string_param(params, "name")
    prompt = ctx.server.prompts.get(name)
    if prompt is None:
        raise invalid_params(f"Unknown prompt: {name}", {"name": name})
    arguments = prompt.check_arguments(params.get("arguments"))
    return to_prompt_result(prompt, await prompt.handler(ctx, arguments))


# --------------------------------------------------------------------------------------- completion


async def completion_complete(ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
    ref, argument = params.get("ref"), params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise invalid_params('"ref" and "argument" must be objects')
    name, value = argument.get("name"), argument.get("value")
    if not isinstance(name, str) or not isinstance(value, str):
        raise invalid_params('"argument" needs a string "name" and a string "value"')
    context = params.get("context")
    others = context.get("arguments") if isinstance(context, dict) else None
    others = others if isinstance(others, dict) else {}
    completer = _find_completer(ctx, ref, name)
    values = await _complete(ctx, completer, value, others) if completer is not None else []
    completion: dict[str, Any] = {"values": values[:MAX_COMPLETION_VALUES]}
    if len(values) > MAX_COMPLETION_VALUES:
        completion["total"] = len(values)
        completion["hasMore"] = True
    return {"completion": completion}


def _find_completer(ctx: Context, ref: dict[str, Any], argument: str) -> Completer | None:
    kind = ref.get("type")
    if kind == "ref/prompt":
        name = ref.get("name")  # a peer's value: a list or an object would not even hash
        prompt = ctx.server.prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {ref.get('name')}")
        found = prompt.argument(argument)
        if found is None:
            raise invalid_params(f"Prompt {prompt.name!r} has no argument {argument!r}")
        return found.complete
    if kind == "ref/resource":
        uri = ref.get("uri")
        template = next((t for t in ctx.server.templates if t.uri_template == uri), None)
        if template is None:
            if isinstance(uri, str) and uri in ctx.server.resources and not _hidden(ctx, ctx.server.resources[uri]):
                return None  # a static resource has nothing to complete
            raise invalid_params(f"Unknown resource template: {uri}")
        assert template.parsed is not None
        if argument not in template.parsed.variables:
            raise invalid_params(f"Template {uri!r} has no variable {argument!r}")
        return (template.completers or {}).get(argument)
    raise invalid_params('"ref.type" must be "ref/prompt" or "ref/resource"')


async def _complete(ctx: Context, completer: Completer, value: str, others: dict[str, Any]) -> list[str]:
    if callable(completer):
        candidates = await completer(ctx, value, others)
        return [str(candidate) for candidate in candidates]
    prefix = value.casefold()
    return [candidate for candidate in completer if candidate.casefold().startswith(prefix)]


#: The feature methods every era shares, by method name.
FEATURE_METHODS: dict[str, MethodHandler] = {
    protocol.TOOLS_LIST: tools_list,
    protocol.TOOLS_CALL: tools_call,
    protocol.RESOURCES_LIST: resources_list,
    protocol.RESOURCES_TEMPLATES_LIST: resources_templates_list,
    protocol.RESOURCES_READ: resources_read,
    protocol.PROMPTS_LIST: prompts_list,
    protocol.PROMPTS_GET: prompts_get,
    protocol.COMPLETION_COMPLETE: completion_complete,
}

# Which capability each method needs from the server; a method whose capability is absent is
# "not found", as it would be on a server that never implemented it.
METHOD_CAPABILITY: dict[str, str] = {
    protocol.TOOLS_LIST: "tools",
    protocol.TOOLS_CALL: "tools",
    protocol.RESOURCES_LIST: "resources",
    protocol.RESOURCES_TEMPLATES_LIST: "resources",
    protocol.RESOURCES_READ: "resources",
    protocol.RESOURCES_SUBSCRIBE: "resources",
    protocol.RESOURCES_UNSUBSCRIBE: "resources",
    protocol.PROMPTS_LIST: "prompts",
    protocol.PROMPTS_GET: "prompts",
    protocol.COMPLETION_COMPLETE: "completions",
    protocol.LOGGING_SET_LEVEL: "logging",
}
