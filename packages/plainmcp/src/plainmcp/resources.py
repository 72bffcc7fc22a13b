"""Resources: static ones and RFC 6570 templates, and turning a reader's return value into contents."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .content import blob_contents, text_contents
from .uri_template import UriTemplate

# The first argument is the request's plainmcp.Context. Not named here: the registry sits below
# the context (which names the Server holding these), so naming it would close an import loop.
ResourceReader = Callable[[Any, str], Awaitable[Any]]
TemplateReader = Callable[[Any, str, dict[str, str]], Awaitable[Any]]
#: Completes one template variable: (ctx, partial value, other variables) -> candidates.
Completer = Callable[[Any, str, dict[str, str]], Awaitable[Sequence[str]]] | Sequence[str]


def _describe(entry: dict[str, Any], **optional: Any) -> dict[str, Any]:
    for key, value in optional.items():
        if value is not None:
            entry[key] = value
    return entry


@dataclass(slots=True)
class Resource:
    uri: str
    name: str
    reader: ResourceReader
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    size: int | None = None
    icons: list[dict[str, Any]] | None = None
    annotations: dict[str, Any] | None = None
    meta: dict[str, Any] | None = None
    #: An extension identifier: the resource exists only for clients that declared that extension
    #: (listed, read and subscribed to by them alone; "not found" for the others), like MCP Apps views.
    extension: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return _describe(
            {"uri": self.uri, "name": self.name},
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            size=self.size,
            icons=self.icons,
            annotations=self.annotations,
            _meta=self.meta,
        )


@dataclass(slots=True)
class ResourceTemplate:
    uri_template: str
    name: str
    reader: TemplateReader
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    icons: list[dict[str, Any]] | None = None
    annotations: dict[str, Any] | None = None
    completers: dict[str, Completer] | None = None
    parsed: UriTemplate | None = None

    def __post_init__(self) -> None:
        self.parsed = UriTemplate(self.uri_template)
        unknown = set(self.completers or ()) - set(self.parsed.variables)
        if unknown:
            raise ValueError(f"template {self.uri_template!r} has no variable {sorted(unknown)}")

    def match(self, uri: str) -> dict[str, str] | None:
        assert self.parsed is not None
        return self.parsed.match(uri)

    def to_dict(self) -> dict[str, Any]:
        return _describe(
            {"uriTemplate": self.uri_template, "name": self.name},
            title=self.title,
            description=self.description,
            mimeType=self.mime_type,
            icons=self.icons,
            annotations=self.annotations,
        )


def to_contents(uri: str, mime_type: str | None, value: Any) -> list[dict[str, Any]]:
    """Turn a reader's return value into ``resources/read`` contents.

    Accepted: ``str`` (text), ``bytes`` (blob), one contents dict, or a list of contents dicts.
    """
    if isinstance(value, str):
        return [text_contents(uri, value, mime_type)]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return [blob_contents(uri, bytes(value), mime_type)]
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return value
    raise TypeError(f"a resource reader returned {type(value).__name__}; expected str, bytes or contents")
