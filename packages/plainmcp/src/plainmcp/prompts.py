"""Prompts: their definition, argument checks, and turning a handler's return value into a result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .content import user
from .errors import invalid_params

if TYPE_CHECKING:
    from .resources import Completer

# The first argument is the request's plainmcp.Context. Not named here: the registry sits below
# the context (which names the Server holding these), so naming it would close an import loop.
PromptHandler = Callable[[Any, dict[str, str]], Awaitable[Any]]


@dataclass(slots=True)
class PromptArgument:
    name: str
    description: str | None = None
    required: bool = False
    title: str | None = None
    #: Candidate values for ``completion/complete``: a list, or an async (ctx, value, args) -> list.
    complete: Completer | None = None

    def to_dict(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            entry["title"] = self.title
        if self.description is not None:
            entry["description"] = self.description
        if self.required:
            entry["required"] = True
        return entry


@dataclass(slots=True)
class Prompt:
    name: str
    handler: PromptHandler
    description: str | None = None
    title: str | None = None
    arguments: Sequence[PromptArgument] = field(default_factory=tuple)
    icons: list[dict[str, Any]] | None = None

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
