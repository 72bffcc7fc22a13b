"""Tools: their definition, argument validation, and turning a handler's return value into a result."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from . import json_codec
from .content import text
from .param_headers import HeaderBinding, header_bindings
from .schema import SchemaValidator

# The first argument is the request's plainmcp.Context. Not named here: the registry sits below
# the context (which names the Server holding these), so naming it would close an import loop.
ToolHandler = Callable[[Any, dict[str, Any]], Awaitable[Any]]

#: SEP-986: 1-128 characters from this set, case-sensitive.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
EMPTY_INPUT_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False}
#: ``Tool.execution.taskSupport``: whether a call may (or must) become a task.
TASK_SUPPORT = ("forbidden", "optional", "required")


class ToolError(Exception):
    """Raise from a tool handler to return an ``isError`` result whose text is this message.

    Use it for failures the model can act on (bad input, not found, upstream down). The message is
    shown to the model verbatim, so it must not carry secrets or host paths.
    """


@dataclass(frozen=True, slots=True)
class ToolAnnotations:
    """Hints for clients about a tool's behaviour (2025-03-26 and later). None means "not said"."""

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    def to_dict(self) -> dict[str, Any]:
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return {key: value for key, value in pairs.items() if value is not None}


@dataclass(slots=True)
class ToolResult:
    """An explicit ``tools/call`` result, for when a plain return value is not enough."""

    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    is_error: bool = False
    meta: dict[str, Any] | None = None


@dataclass(slots=True)
class Tool:
    name: str
    handler: ToolHandler
    description: str | None = None
    title: str | None = None
    input_schema: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_INPUT_SCHEMA))
    output_schema: dict[str, Any] | None = None
    annotations: ToolAnnotations | None = None
    icons: list[dict[str, Any]] | None = None
    meta: dict[str, Any] | None = None
    #: "optional" or "required": the handler may turn the call into a task (``ctx.start_task()``).
    task_support: str = "forbidden"
    input_validator: SchemaValidator = field(init=False)
    output_validator: SchemaValidator | None = field(init=False)
    #: The ``x-mcp-header`` annotations of the input schema (SEP-2243), checked when defined.
    header_bindings: tuple[HeaderBinding, ...] = field(init=False)

    def __post_init__(self) -> None:
        if not TOOL_NAME.match(self.name):
            raise ValueError(f"tool name {self.name!r}: use 1-128 characters from A-Z a-z 0-9 _ . -")
        if self.input_schema.get("type") != "object":
            raise ValueError(f'tool {self.name!r}: inputSchema must have "type": "object"')
        if self.task_support not in TASK_SUPPORT:
            raise ValueError(f"tool {self.name!r}: task_support must be one of {', '.join(TASK_SUPPORT)}")
        self.input_validator = SchemaValidator(self.input_schema)
        self.output_validator = SchemaValidator(self.output_schema) if self.output_schema else None
        try:
            self.header_bindings = header_bindings(self.input_schema)
        except ValueError as error:
            raise ValueError(f"tool {self.name!r}: {error}") from None

    def to_dict(self) -> dict[str, Any]:
        """The entry in ``tools/list``, with every field the newest revision knows."""
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        if self.icons:
            entry["icons"] = self.icons
        entry["inputSchema"] = self.input_schema
        if self.output_schema is not None:
            entry["outputSchema"] = self.output_schema
        if self.annotations is not None:
            entry["annotations"] = self.annotations.to_dict()
        if self.task_support != "forbidden":
            entry["execution"] = {"taskSupport": self.task_support}
        if self.meta:
            entry["_meta"] = self.meta
        return entry

    @property
    def idempotent(self) -> bool:
        hints = self.annotations
        return bool(hints and (hints.idempotent or hints.read_only))


def error_result(message: str) -> dict[str, Any]:
    """An ``isError`` result carrying one text block."""
    return {"content": [text(message)], "isError": True}


def invalid_arguments_result(tool: Tool, problems: list[str]) -> dict[str, Any]:
    lines = "\n".join(f"- {problem}" for problem in problems)
    return error_result(f"Invalid arguments for tool {json.dumps(tool.name)}:\n{lines}")


def to_call_result(tool: Tool, value: Any) -> tuple[dict[str, Any], Any]:
    """Turn a handler's return value into ``(CallToolResult, structured value or None)``.

    Accepted: a :class:`ToolResult`; a string (one text block); a content block or a list of
    blocks and strings; any other JSON value as structured content, mirrored as text.
    """
    structured: Any = None
    if isinstance(value, ToolResult):
        content, structured = list(value.content), value.structured
        result: dict[str, Any] = {"content": content}
        if value.is_error:
            result["isError"] = True
        if value.meta:
            result["_meta"] = value.meta
    elif isinstance(value, str):
        result = {"content": [text(value)]}
    elif isinstance(value, dict) and "type" in value and tool.output_schema is None:
        result = {"content": [value]}
    elif (
        isinstance(value, list)
        and tool.output_schema is None
        and all(isinstance(item, str) or (isinstance(item, dict) and "type" in item) for item in value)
    ):
        result = {"content": [text(item) if isinstance(item, str) else item for item in value]}
    else:
        structured = value
        result = {"content": []}
    if structured is not None:
        result["structuredContent"] = structured
        if not result["content"]:
            # The specification asks for the serialized JSON in a text block too, for older clients.
            result["content"] = [text(json_codec.dumps(structured).decode("utf-8"))]
    return result, structured
