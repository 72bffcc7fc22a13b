"""Tools: their definition, argument validation, and turning a handler's return value into a result."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
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


# ToolAnnotations, ToolResult and Tool (like the resource, prompt, input and task records) are
# plain classes, not dataclasses: making a dataclass costs ~0.4 ms at import (it generates and
# compiles its methods), on every server's cold start. Their methods do what @dataclass's did.


class ToolAnnotations:
    """Hints for clients about a tool's behaviour (2025-03-26 and later). None means "not said"."""

    __slots__ = ("title", "read_only", "destructive", "idempotent", "open_world")

    title: str | None
    read_only: bool | None
    destructive: bool | None
    idempotent: bool | None
    open_world: bool | None

    def __init__(
        self,
        title: str | None = None,
        read_only: bool | None = None,
        destructive: bool | None = None,
        idempotent: bool | None = None,
        open_world: bool | None = None,
    ) -> None:
        # Immutable: the fields are set once, here, past __setattr__.
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "read_only", read_only)
        object.__setattr__(self, "destructive", destructive)
        object.__setattr__(self, "idempotent", idempotent)
        object.__setattr__(self, "open_world", open_world)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.title, self.read_only, self.destructive, self.idempotent, self.open_world) == (
            other.title,
            other.read_only,
            other.destructive,
            other.idempotent,
            other.open_world,
        )

    def __hash__(self) -> int:
        return hash((self.title, self.read_only, self.destructive, self.idempotent, self.open_world))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(title={self.title!r}, read_only={self.read_only!r}, "
            f"destructive={self.destructive!r}, idempotent={self.idempotent!r}, open_world={self.open_world!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # copy and pickle would restore the fields with setattr, which refuses.
        return (type(self), (self.title, self.read_only, self.destructive, self.idempotent, self.open_world))

    def to_dict(self) -> dict[str, Any]:
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return {key: value for key, value in pairs.items() if value is not None}


class ToolResult:
    """An explicit ``tools/call`` result, for when a plain return value is not enough."""

    __slots__ = ("content", "structured", "is_error", "meta")

    content: list[dict[str, Any]]
    structured: Any
    is_error: bool
    meta: dict[str, Any] | None

    def __init__(
        self,
        content: list[dict[str, Any]] | None = None,
        structured: Any = None,
        is_error: bool = False,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.content = [] if content is None else content
        self.structured = structured
        self.is_error = is_error
        self.meta = meta

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.content, self.structured, self.is_error, self.meta) == (
            other.content,
            other.structured,
            other.is_error,
            other.meta,
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(content={self.content!r}, structured={self.structured!r}, "
            f"is_error={self.is_error!r}, meta={self.meta!r})"
        )


class Tool:
    __slots__ = (
        "name",
        "handler",
        "description",
        "title",
        "input_schema",
        "output_schema",
        "annotations",
        "icons",
        "meta",
        "task_support",
        "input_validator",
        "output_validator",
        "header_bindings",
    )

    name: str
    handler: ToolHandler
    description: str | None
    title: str | None
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: ToolAnnotations | None
    icons: list[dict[str, Any]] | None
    meta: dict[str, Any] | None
    #: "optional" or "required": the handler may turn the call into a task (``ctx.start_task()``).
    task_support: str
    input_validator: SchemaValidator
    output_validator: SchemaValidator | None
    #: The ``x-mcp-header`` annotations of the input schema (SEP-2243), checked when defined.
    header_bindings: tuple[HeaderBinding, ...]

    def __init__(
        self,
        name: str,
        handler: ToolHandler,
        description: str | None = None,
        title: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[dict[str, Any]] | None = None,
        meta: dict[str, Any] | None = None,
        task_support: str = "forbidden",
    ) -> None:
        self.name = name
        self.handler = handler
        self.description = description
        self.title = title
        self.input_schema = dict(EMPTY_INPUT_SCHEMA) if input_schema is None else input_schema
        self.output_schema = output_schema
        self.annotations = annotations
        self.icons = icons
        self.meta = meta
        self.task_support = task_support
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

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.name,
            self.handler,
            self.description,
            self.title,
            self.input_schema,
            self.output_schema,
            self.annotations,
            self.icons,
            self.meta,
            self.task_support,
            self.input_validator,
            self.output_validator,
            self.header_bindings,
        ) == (
            other.name,
            other.handler,
            other.description,
            other.title,
            other.input_schema,
            other.output_schema,
            other.annotations,
            other.icons,
            other.meta,
            other.task_support,
            other.input_validator,
            other.output_validator,
            other.header_bindings,
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, handler={self.handler!r}, "
            f"description={self.description!r}, title={self.title!r}, input_schema={self.input_schema!r}, "
            f"output_schema={self.output_schema!r}, annotations={self.annotations!r}, icons={self.icons!r}, "
            f"meta={self.meta!r}, task_support={self.task_support!r}, input_validator={self.input_validator!r}, "
            f"output_validator={self.output_validator!r}, header_bindings={self.header_bindings!r})"
        )

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
