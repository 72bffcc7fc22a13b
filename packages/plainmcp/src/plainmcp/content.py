"""Builders for content blocks and prompt messages: plain dicts, spelled as the specification spells them."""

from __future__ import annotations

import base64
from typing import Any


def _with(block: dict[str, Any], **optional: Any) -> dict[str, Any]:
    for key, value in optional.items():
        if value is not None:
            block[key] = value
    return block


def _b64(data: bytes | str) -> str:
    return data if isinstance(data, str) else base64.b64encode(data).decode("ascii")


def text(value: str, *, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """A text content block."""
    return _with({"type": "text", "text": value}, annotations=annotations)


def image(data: bytes | str, mime_type: str, *, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """An image block; ``data`` is raw bytes, or a string already base64-encoded."""
    return _with({"type": "image", "data": _b64(data), "mimeType": mime_type}, annotations=annotations)


def audio(data: bytes | str, mime_type: str, *, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """An audio block (2025-03-26 and later); ``data`` as for :func:`image`."""
    return _with({"type": "audio", "data": _b64(data), "mimeType": mime_type}, annotations=annotations)


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
) -> dict[str, Any]:
    """A link to a resource the client may read (2025-06-18 and later)."""
    return _with(
        {"type": "resource_link", "uri": uri, "name": name},
        title=title,
        description=description,
        mimeType=mime_type,
        size=size,
    )


def text_contents(uri: str, value: str, mime_type: str | None = None) -> dict[str, Any]:
    """One entry of ``resources/read`` contents, as text."""
    return _with({"uri": uri, "text": value}, mimeType=mime_type)


def blob_contents(uri: str, data: bytes | str, mime_type: str | None = None) -> dict[str, Any]:
    """One entry of ``resources/read`` contents, as base64 bytes."""
    return _with({"uri": uri, "blob": _b64(data)}, mimeType=mime_type)


def embedded_resource(contents: dict[str, Any], *, annotations: dict[str, Any] | None = None) -> dict[str, Any]:
    """A resource embedded in a tool result or prompt message."""
    return _with({"type": "resource", "resource": contents}, annotations=annotations)


def message(role: str, content: str | dict[str, Any]) -> dict[str, Any]:
    """A prompt message; a string becomes a text block."""
    if role not in ("user", "assistant"):
        raise ValueError(f"role must be 'user' or 'assistant', not {role!r}")
    return {"role": role, "content": text(content) if isinstance(content, str) else content}


def user(content: str | dict[str, Any]) -> dict[str, Any]:
    return message("user", content)


def assistant(content: str | dict[str, Any]) -> dict[str, Any]:
    return message("assistant", content)
