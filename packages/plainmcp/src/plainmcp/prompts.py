"""Prompts: their definition, argument checks, and turning a handler's return value into a result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from .content import user
from .errors import invalid_params

if TYPE_CHECKING:
    from .resources import Completer

# The first argument is the request's plainmcp.Context. Not named here: the registry sits below
# the context (which names the Server holding these), so naming it would close an import loop.
PromptHandler = Callable[[Any, dict[str, str]], Awaitable[Any]]


class PromptArgument:
    __slots__ = ("name", "description", "required", "title", "complete")

    name: str
    description: str | None
    required: bool
    title: str | None
    #: Candidate values for ``completion/complete``: a list, or an async (ctx, value, args) -> list.
    complete: Completer | None

    def __init__(
        self,
        name: str,
        description: str | None = None,
        required: bool = False,
        title: str | None = None,
        complete: Completer | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.required = required
        self.title = title
        self.complete = complete

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.description, self.required, self.title, self.complete) == (
            other.name,
            other.description,
            other.required,
            other.title,
            other.complete,
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, description={self.description!r}, "
            f"required={self.required!r}, title={self.title!r}, complete={self.complete!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        if self.required:
            entry["required"] = True
        return entry


class Prompt:
    __slots__ = ("name", "handler", "description", "title", "arguments", "icons")

    name: str
    handler: PromptHandler
    description: str | None
    title: str | None
    arguments: Sequence[PromptArgument]
    icons: list[dict[str, Any]] | None

    def __init__(
        self,
        name: str,
        handler: PromptHandler,
        description: str | None = None,
        title: str | None = None,
        arguments: Sequence[PromptArgument] = (),
        icons: list[dict[str, Any]] | None = None,
    ) -> None:
        self.name = name
        self.handler = handler
        self.description = description
        self.title = title
        self.arguments = arguments
        self.icons = icons

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.name, self.handler, self.description, self.title, self.arguments, self.icons) == (
            other.name,
            other.handler,
            other.description,
            other.title,
            other.arguments,
            other.icons,
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, handler={self.handler!r}, "
            f"description={self.description!r}, title={self.title!r}, arguments={self.arguments!r}, "
            f"icons={self.icons!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        if self.arguments:
            entry["arguments"] = [argument.to_dict() for argument in self.arguments]
        if self.icons:
            entry["icons"] = self.icons
        return entry

    def argument(self, name: str) -> PromptArgument | None:
        return next((argument for argument in self.arguments if argument.name == name), None)

    def check_arguments(self, arguments: Any) -> dict[str, str]:
        """The arguments as a dict of strings. Raises MCPError(-32602) naming what is wrong."""
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise invalid_params("Prompt arguments must be an object of strings")
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        if missing:
            raise invalid_params(
                f"Missing required argument{'s' if len(missing) > 1 else ''} for prompt "
                f"{self.name!r}: {', '.join(missing)}",
                {"missing": missing},
            )
        return arguments


def to_prompt_result(prompt: Prompt, value: Any) -> dict[str, Any]:
    """Accepted: a string (one user message), a list of messages, or a full result dict."""
    if isinstance(value, str):
        result: dict[str, Any] = {"messages": [user(value)]}
    elif isinstance(value, list):
        result = {"messages": value}
    elif isinstance(value, dict) and "messages" in value:
        result = dict(value)
    else:
        raise TypeError(f"prompt {prompt.name!r} returned {type(value).__name__}; expected messages")
    if prompt.description is not None:
        result.setdefault("description", prompt.description)
    return result
