"""SEP-2243 custom headers (2026-07-28): tool arguments mirrored as ``Mcp-Param-{Name}`` headers.

A tool's ``inputSchema`` may annotate a property with ``"x-mcp-header": "Region"``. A client calling
the tool over Streamable HTTP then sends the argument's value as ``Mcp-Param-Region`` too, so that
intermediaries can route on it without reading the body; the server checks that header and body
agree (an intermediary may have acted on the header while the server acts on the body).

The rules kept here (the 2026-07-28 Streamable HTTP page, "Custom headers from tool parameters"):

- Only a property reached through a chain of ``properties`` keys counts, and only of type
  ``string``, ``integer`` or ``boolean`` (never ``number``). The name is an HTTP token, unique
  without regard to case. A tool breaking these is refused when it is defined.
- An argument that is absent or null has no header; one that is present MUST have it.
- Values are sent as text (integers in decimal, booleans ``true``/``false``); a value that cannot
  ride as a plain ASCII field value (outside 0x20-0x7E, leading or trailing whitespace, or looking
  like the sentinel itself) is sent as ``=?base64?{UTF-8 bytes in standard Base64}?=``. A value
  carrying the exact sentinel wrapper is decoded before comparing, and an invalid payload is refused;
  anything else is literal.

Sans-I/O: no anyio, no HTTP; the transport passes a header lookup in.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Mapping
from typing import Any

from .errors import ErrorCode, MCPError
from .values import Value, set_field

ANNOTATION = "x-mcp-header"
HEADER_PREFIX = "Mcp-Param-"
SENTINEL_PREFIX = "=?base64?"
SENTINEL_SUFFIX = "?="
#: RFC 9110 token characters: what a header field name may be made of.
TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
HEADER_TYPES = ("string", "integer", "boolean")
#: Integers beyond JavaScript's safe range do not survive every client's JSON; SEP-2243 excludes them.
SAFE_INTEGER = 2**53 - 1


class HeaderBinding(Value):
    """One annotated property: the header it is mirrored in, where it sits in the arguments, its type."""

    __slots__ = ("header", "path", "type")
    header: str  # the full header name, "Mcp-Param-{Name}"
    path: tuple[str, ...]
    type: str

    def __init__(self, header: str, path: tuple[str, ...], type: str) -> None:
        set_field(self, "header", header)
        set_field(self, "path", path)
        set_field(self, "type", type)

    def value_in(self, arguments: Mapping[str, Any]) -> Any:
        """The argument's value, or None when it (or an object on its path) is absent."""
        value: Any = arguments
        for key in self.path:
            if not isinstance(value, Mapping):
                return None
            value = value.get(key)
        return value


def header_bindings(input_schema: Mapping[str, Any]) -> tuple[HeaderBinding, ...]:
    """The ``x-mcp-header`` annotations of a tool's input schema, in schema order.

    Raises:
        ValueError: an annotation the specification forbids (not a token, a duplicate name, a type
            other than string/integer/boolean, or not reached through ``properties`` alone).
    """
    bindings: list[HeaderBinding] = []
    _collect(input_schema, (), bindings)
    seen: set[str] = set()
    for binding in bindings:
        if binding.header.lower() in seen:
            raise ValueError(f"x-mcp-header: {binding.header} is declared twice (names ignore case)")
        seen.add(binding.header.lower())
    return tuple(bindings)


def _collect(schema: Mapping[str, Any], path: tuple[str, ...], out: list[HeaderBinding]) -> None:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return
    for key, subschema in properties.items():
        if not isinstance(subschema, Mapping):
            continue
        where = (*path, key)
        name = subschema.get(ANNOTATION)
        if name is not None:
            if not isinstance(name, str) or not TOKEN.match(name):
                raise ValueError(f"x-mcp-header of {'.'.join(where)}: {name!r} is not an HTTP token")
            kind = subschema.get("type")
            if kind not in HEADER_TYPES:
                raise ValueError(f"x-mcp-header of {'.'.join(where)}: type must be string, integer or boolean")
            out.append(HeaderBinding(HEADER_PREFIX + name, where, kind))
        _collect(subschema, where, out)


def header_text(value: Any) -> str | None:
    """A body value as header text (before encoding), or None for a value no header can carry."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) <= SAFE_INTEGER:
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) <= SAFE_INTEGER:
        return str(int(value))  # 42.0 is the integer 42 in JSON
    if isinstance(value, str):
        return value
    return None


def encode_header_value(value: str) -> str:
    """``value`` as a header field value: itself when plain ASCII, else the Base64 sentinel form."""
    plain = all(0x20 <= ord(char) <= 0x7E for char in value)
    if plain and value == value.strip(" \t") and not is_sentinel(value):
        return value
    return SENTINEL_PREFIX + base64.b64encode(value.encode("utf-8")).decode("ascii") + SENTINEL_SUFFIX


def is_sentinel(value: str) -> bool:
    return len(value) >= len(SENTINEL_PREFIX) + len(SENTINEL_SUFFIX) and (
        value.startswith(SENTINEL_PREFIX) and value.endswith(SENTINEL_SUFFIX)
    )


def decode_header_value(value: str | None) -> str | None:
    """Undo the sentinel encoding; None for an absent header or an invalid Base64 payload."""
    if value is None or not is_sentinel(value):
        return value
    try:
        return base64.b64decode(value[len(SENTINEL_PREFIX) : -len(SENTINEL_SUFFIX)], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def request_headers(bindings: tuple[HeaderBinding, ...], arguments: Mapping[str, Any]) -> dict[str, str]:
    """The ``Mcp-Param-*`` headers a client sends with a call of these arguments."""
    headers: dict[str, str] = {}
    for binding in bindings:
        value = header_text(binding.value_in(arguments))
        if value is not None:
            headers[binding.header] = encode_header_value(value)
    return headers


def check_request_headers(
    bindings: tuple[HeaderBinding, ...], arguments: Mapping[str, Any], lookup: Callable[[str], str | None]
) -> None:
    """Check each annotated argument against its header (``lookup`` reads one header, any case).

    An argument of the wrong type is left to the tool's input validation, which answers it better.

    Raises:
        MCPError: ``-32020`` for a header omitted while its argument is present, an invalid Base64
            payload, or a value that differs from the body's.
    """
    for binding in bindings:
        expected = header_text(binding.value_in(arguments))
        if expected is None:
            continue
        raw = lookup(binding.header)
        if raw is None:
            raise MCPError(
                ErrorCode.HEADER_MISMATCH,
                f"Header mismatch: the {binding.header} header is missing while the argument is present",
            )
        given = decode_header_value(raw.strip(" \t"))
        if given is None:
            raise MCPError(ErrorCode.HEADER_MISMATCH, f"Header mismatch: {binding.header} has an invalid Base64 value")
        if given != expected:
            raise MCPError(
                ErrorCode.HEADER_MISMATCH, f"Header mismatch: {binding.header} does not match the argument's value"
            )
