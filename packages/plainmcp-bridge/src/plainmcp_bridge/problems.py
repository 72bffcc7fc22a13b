"""Turn JSON Schema validation errors into problems a model can fix: the field, what is expected, what was sent.

``jsonschema``'s own messages are written for programmers ("'3' is not of type 'integer'") and quote whole
values; a small model repairs a call far better when each problem names the field's path, the expectation
in plain words and a short quote of what it sent. No I/O.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .hostile import bounded_search

#: Longest quote of a sent value in a message.
MAX_QUOTE = 60

_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a call's arguments. ``path`` is ``days`` or ``stops[1].city``, or
    ``(arguments)`` for the arguments as a whole."""

    path: str
    expected: str
    sent: str

    def __str__(self) -> str:
        return f"{self.path}: expected {self.expected}; sent {self.sent}"


def field_path(parts: Iterable[Any]) -> str:
    """``["stops", 1, "city"]`` -> ``stops[1].city``; the empty path is ``(arguments)``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "(arguments)"


def quote(value: Any, limit: int = MAX_QUOTE) -> str:
    """A short JSON rendering of ``value`` (cut with an ellipsis)."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    except RecursionError:  # a hostile server's default or enum, nested thousands of levels
        text = "(a value nested too deeply to show)"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def kind_of(value: Any) -> str:
    """The JSON type of ``value`` in words (``a string``, ``an integer``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a value"


def sent(value: Any) -> str:
    """What was sent: the quote and its type (``"3" (a string)``)."""
    return f"{quote(value)} ({kind_of(value)})"


def one_of(values: Sequence[Any]) -> str:
    return "one of " + ", ".join(quote(value) for value in values)


def problems_of(error: Any) -> list[Problem]:
    """The problems one ``jsonschema.ValidationError`` stands for (``required`` and
    ``additionalProperties`` errors name several fields at once)."""
    path = list(error.absolute_path)
    keyword = error.validator
    schema = error.schema if isinstance(error.schema, dict) else {}
    value = error.validator_value
    instance = error.instance
    if keyword == "required" and isinstance(instance, dict):
        properties = schema.get("properties") or {}
        return [
            Problem(field_path([*path, name]), f"{_described(properties.get(name))} (required)", "nothing")
            for name in value
            if name not in instance
        ]
    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = list(schema.get("properties") or {})
        extras = [name for name in instance if name not in allowed and not _matches_pattern(name, schema)]
        missing = [name for name in schema.get("required") or () if name not in instance]
        # One unknown field and one missing required field: most likely a synonym of it ("city" for
        # "location"). Said as a hint; the call is never rewritten.
        stands_for = missing[0] if len(extras) == 1 and len(missing) == 1 else None
        return [
            Problem(
                field_path([*path, name]), _no_such_field(name, allowed, instance, stands_for), sent(instance[name])
            )
            for name in extras
        ]
    return [Problem(field_path(path), _expected(keyword, value, schema), sent(instance))]


def _no_such_field(name: str, allowed: list[str], instance: dict[str, Any], stands_for: str | None = None) -> str:
    if not allowed:
        return "no fields here"
    close = [match for match in difflib.get_close_matches(name, allowed, n=1, cutoff=0.5) if match not in instance]
    guess = close[0] if close else stands_for
    hint = f" (did you mean {quote(guess)}?)" if guess else ""
    return f"no such field{hint}; the fields are " + ", ".join(quote(field) for field in allowed)


def _matches_pattern(name: str, schema: dict[str, Any]) -> bool:
    # A pattern that cannot be judged in time counts as matching, as in the interceptor's validator.
    return any(bounded_search(pattern, name) is not False for pattern in (schema.get("patternProperties") or {}))


def _described(schema: Any) -> str:
    """A property's schema in a few words: its type, its allowed values."""
    if not isinstance(schema, dict):
        return "a value"
    if "enum" in schema and isinstance(schema["enum"], list):
        return one_of(schema["enum"])
    if "const" in schema:
        return quote(schema["const"])
    return _type_words(schema.get("type")) or "a value"


def _type_words(type_: Any) -> str | None:
    if isinstance(type_, str):
        return _TYPE_WORDS.get(type_, type_)
    if isinstance(type_, list) and type_:
        return " or ".join(_TYPE_WORDS.get(str(item), str(item)) for item in type_)
    return None


def _expected(keyword: str, value: Any, schema: dict[str, Any]) -> str:
    """What the schema keyword ``keyword`` with argument ``value`` asks for, in plain words."""
    simple = {
        "type": lambda: _type_words(value) or "another type",
        "enum": lambda: one_of(value),
        "const": lambda: quote(value),
        "minimum": lambda: f"a number >= {value}",
        "maximum": lambda: f"a number <= {value}",
        "exclusiveMinimum": lambda: f"a number > {value}",
        "exclusiveMaximum": lambda: f"a number < {value}",
        "multipleOf": lambda: f"a multiple of {value}",
        "minLength": lambda: f"a string of at least {value} characters",
        "maxLength": lambda: f"a string of at most {value} characters",
        "pattern": lambda: f"a string matching the pattern {quote(value)}",
        "format": lambda: f"a string in {value} format",
        "minItems": lambda: f"an array of at least {value} items",
        "maxItems": lambda: f"an array of at most {value} items",
        "uniqueItems": lambda: "an array without repeated items",
        "minProperties": lambda: f"an object with at least {value} fields",
        "maxProperties": lambda: f"an object with at most {value} fields",
        "anyOf": lambda: "a value matching one of the allowed forms",
        "oneOf": lambda: "a value matching exactly one of the allowed forms",
        "not": lambda: "a different value (this one is excluded)",
    }
    words = simple.get(keyword)
    return words() if words is not None else f"a value satisfying {keyword!s} {quote(value)}"
