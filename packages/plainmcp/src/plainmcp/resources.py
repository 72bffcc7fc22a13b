"""Resources: static ones and RFC 6570 templates, and turning a reader's return value into contents."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
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


class Resource:
    __slots__ = (
        "uri",
        "name",
        "reader",
        "title",
        "description",
        "mime_type",
        "size",
        "icons",
        "annotations",
        "meta",
        "extension",
    )

    uri: str
    name: str
    reader: ResourceReader
    title: str | None
    description: str | None
    mime_type: str | None
    size: int | None
    icons: list[dict[str, Any]] | None
    annotations: dict[str, Any] | None
    meta: dict[str, Any] | None
    #: An extension identifier: the resource exists only for clients that declared that extension
    #: (listed, read and subscribed to by them alone; "not found" for the others), like MCP Apps views.
    extension: str | None

    def __init__(
        self,
        uri: str,
        name: str,
        reader: ResourceReader,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        size: int | None = None,
        icons: list[dict[str, Any]] | None = None,
        annotations: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        extension: str | None = None,
    ) -> None:
        self.uri = uri
        self.name = name
        self.reader = reader
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.size = size
        self.icons = icons
        self.annotations = annotations
        self.meta = meta
        self.extension = extension

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.uri,
            self.name,
            self.reader,
            self.title,
            self.description,
            self.mime_type,
            self.size,
            self.icons,
            self.annotations,
            self.meta,
            self.extension,
        ) == (
            other.uri,
            other.name,
            other.reader,
            other.title,
            other.description,
            other.mime_type,
            other.size,
            other.icons,
            other.annotations,
            other.meta,
            other.extension,
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(uri={self.uri!r}, name={self.name!r}, reader={self.reader!r}, "
            f"title={self.title!r}, description={self.description!r}, mime_type={self.mime_type!r}, "
            f"size={self.size!r}, icons={self.icons!r}, annotations={self.annotations!r}, meta={self.meta!r}, "
            f"extension={self.extension!r})"
        )

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


class ResourceTemplate:
    __slots__ = (
        "uri_template",
        "name",
        "reader",
        "title",
        "description",
        "mime_type",
        "icons",
        "annotations",
        "completers",
        "parsed",
    )

    uri_template: str
    name: str
    reader: TemplateReader
    title: str | None
    description: str | None
    mime_type: str | None
    icons: list[dict[str, Any]] | None
    annotations: dict[str, Any] | None
    completers: dict[str, Completer] | None
    parsed: UriTemplate | None

    def __init__(
        self,
        uri_template: str,
        name: str,
        reader: TemplateReader,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        icons: list[dict[str, Any]] | None = None,
        annotations: dict[str, Any] | None = None,
        completers: dict[str, Completer] | None = None,
        parsed: UriTemplate | None = None,  # ignored, as it always was: parsed from uri_template
    ) -> None:
        self.uri_template = uri_template
        self.name = name
        self.reader = reader
        self.title = title
        self.description = description
        self.mime_type = mime_type
        self.icons = icons
        self.annotations = annotations
        self.completers = completers
        self.parsed = UriTemplate(self.uri_template)
        unknown = set(self.completers or ()) - set(self.parsed.variables)
        if unknown:
            raise ValueError(f"template {self.uri_template!r} has no variable {sorted(unknown)}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (
            self.uri_template,
            self.name,
            self.reader,
            self.title,
            self.description,
            self.mime_type,
            self.icons,
            self.annotations,
            self.completers,
            self.parsed,
        ) == (
            other.uri_template,
            other.name,
            other.reader,
            other.title,
            other.description,
            other.mime_type,
            other.icons,
            other.annotations,
            other.completers,
            other.parsed,
        )

    __hash__ = None  # type: ignore[assignment]  # equal by value, and mutable

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(uri_template={self.uri_template!r}, name={self.name!r}, "
            f"reader={self.reader!r}, title={self.title!r}, description={self.description!r}, "
            f"mime_type={self.mime_type!r}, icons={self.icons!r}, annotations={self.annotations!r}, "
            f"completers={self.completers!r}, parsed={self.parsed!r})"
        )

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
