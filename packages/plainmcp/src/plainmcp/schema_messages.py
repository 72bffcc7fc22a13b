"""Validation messages for whoever called: values quoted as JSON, and short.

jsonschema words its messages for Python programmers (``None is not of type 'integer'``). A tool's
caller is a model or a person who sent JSON, so :func:`describe` says the same thing in JSON terms
(``null is not of type "integer"``), and quotes at most :data:`MAX_QUOTE` characters of any value:
a megabyte string that is too long is not worth a megabyte of error.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_QUOTE = 80
MAX_MESSAGE = 400


def quote(value: Any, limit: int = MAX_QUOTE) -> str:
    """``value`` as compact JSON, cut to about ``limit`` characters (``...`` marks the cut)."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]  # before encoding: never encode more than is shown
        return json.dumps(value, ensure_ascii=False)[:-1] + '..."'
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)
    except (ValueError, TypeError):  # circular or too deep: not a JSON value anyway
        text = type(value).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _unexpected(error: Any) -> str:
    """The message of ``additionalProperties: false`` / ``unevaluatedProperties: false``."""
    schema = error.schema if isinstance(error.schema, dict) else {}
    known = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    extras = [
        key
        for key in (error.instance if isinstance(error.instance, dict) else {})
        if key not in known and not any(re.search(pattern, key) for pattern in patterns)
    ]
    names = ", ".join(quote(key) for key in extras[:10]) + (", ..." if len(extras) > 10 else "")
    kind = "Additional" if error.validator == "additionalProperties" else "Unevaluated"
    return f"{kind} properties are not allowed ({names} {'was' if len(extras) == 1 else 'were'} unexpected)"


def _required(error: Any) -> str:
    missing = next(
        (name for name in error.validator_value if f"{name!r} is a required property" == error.message), None
    )
    return f"{quote(missing)} is a required property" if missing is not None else error.message


def describe(error: Any) -> str:
    """The message of one ``jsonschema.ValidationError``, with values as JSON."""
    keyword, argument, instance = error.validator, error.validator_value, error.instance
    value = quote(instance)
    if keyword == "type":
        names = [argument] if isinstance(argument, str) else list(argument)
        return f"{value} is not of type {' or '.join(quote(name) for name in names)}"
    if keyword == "required":
        return _required(error)
    if keyword == "enum":
        return f"{value} is not one of {quote(argument, 200)}"
    if keyword == "const":
        return f"{quote(argument)} was expected"
    limits = {
        "minimum": "is less than the minimum of",
        "maximum": "is greater than the maximum of",
        "exclusiveMinimum": "is less than or equal to the minimum of",
        "exclusiveMaximum": "is greater than or equal to the maximum of",
        "multipleOf": "is not a multiple of",
    }
    if keyword in limits:
        return f"{value} {limits[keyword]} {quote(argument)}"
    sizes = {
        "minLength": ("is too short", "at least", "character", "characters"),
        "maxLength": ("is too long", "at most", "character", "characters"),
        "minItems": ("is too short", "at least", "item", "items"),
        "maxItems": ("is too long", "at most", "item", "items"),
        "minProperties": ("has too few properties", "at least", "property", "properties"),
        "maxProperties": ("has too many properties", "at most", "property", "properties"),
    }
    if keyword in sizes and isinstance(argument, int):
        verdict, bound, one, many = sizes[keyword]
        return f"{value} {verdict} ({bound} {argument} {one if argument == 1 else many})"
    if keyword == "pattern":
        return f"{value} does not match {quote(argument)}"
    if keyword == "format":
        return f"{value} is not a {quote(argument)}"
    if keyword == "uniqueItems":
        return f"{value} has non-unique elements"
    if keyword in ("additionalProperties", "unevaluatedProperties") and argument is False:
        return _unexpected(error)
    return _fallback(error)


def _fallback(error: Any) -> str:
    """Any other keyword: jsonschema's message with the instance's and the keyword's Python reprs
    turned into JSON, cut to :data:`MAX_MESSAGE` characters."""
    message = error.message
    for value in (error.instance, error.validator_value):
        if isinstance(value, (dict, list, str, int, float, bool)) or value is None:
            python = repr(value)
            if len(python) > 1 and python in message:
                message = message.replace(python, quote(value))
    return message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 3] + "..."
