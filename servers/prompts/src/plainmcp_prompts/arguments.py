"""Argument declarations: a mapping from a file into an :class:`ArgumentSpec`, checked.

Keys: ``name``; ``title``, ``description``; ``required`` (default false); ``default``; ``values``
(the allowed values); ``type`` (string, integer, number, boolean), ``pattern``, ``minimum``,
``maximum`` (:mod:`.typed`). A default and every allowed value must pass the argument's own checks.
Shared by every format that declares arguments (plainmcp front matter, Dotprompt's input schema).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import template, typed
from .frontmatter import FormatError, clip, quote
from .model import ArgumentSpec
from .pattern import PatternError, compile_pattern

Warn = Callable[[int | None, str], None]
#: The file line of a key of the declaration (``line()``: the declaration itself).
Line = Callable[..., int | None]

ARGUMENT_KEYS = {
    "name",
    "title",
    "description",
    "required",
    "default",
    "values",
    "type",
    "pattern",
    "minimum",
    "maximum",
}


def scalar(value: Any) -> str | None:
    """A YAML scalar as the string a client would send (``true``, ``3``), or None for non-scalars."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    return None


def declare(item: Any, line: Line, warn: Warn) -> ArgumentSpec:
    """The argument ``item`` declares (a name, or a mapping of the keys above). ``line(*keys)``
    is the file line of a key of the declaration, for messages. Raises FormatError; calls
    ``warn(line, message)`` for unknown keys."""
    if isinstance(item, str):
        item = {"name": item}
    if not isinstance(item, dict):
        raise FormatError("each argument must be a name or a mapping with a name", line())
    name = item.get("name")
    if not isinstance(name, str) or not template.ARGUMENT_NAME.fullmatch(name):
        raise FormatError(
            f"argument name {quote(name)} must start with a letter or _ and use only A-Z a-z 0-9 _ - (at most 64)",
            line("name"),
        )
    for key in item:
        if key not in ARGUMENT_KEYS:
            warn(line(key), f"unknown key {quote(key)} in argument {name!r} (ignored)")
    for key in ("title", "description"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise FormatError(f"{key} of argument {name!r} must be a string", line(key))
    required = item.get("required", False)
    if not isinstance(required, bool):
        raise FormatError(f"required of argument {name!r} must be true or false", line("required"))
    default = None
    if item.get("default") is not None:
        default = scalar(item["default"])
        if default is None:
            raise FormatError(f"default of argument {name!r} must be a single value", line("default"))
        if required:
            raise FormatError(
                f"argument {name!r} is required and has a default; a default makes it optional", line("default")
            )
    values: tuple[str, ...] = ()
    if "values" in item:
        raw_values = item["values"]
        if not isinstance(raw_values, list) or not raw_values:
            raise FormatError(f"values of argument {name!r} must be a non-empty list", line("values"))
        converted = [scalar(value) for value in raw_values]
        if any(value is None for value in converted):
            raise FormatError(f"values of argument {name!r} must be single values", line("values"))
        values = tuple(dict.fromkeys(value for value in converted if value is not None))
        if default is not None and default not in values:
            raise FormatError(
                f"default {quote(default)} of argument {name!r} is not one of its values ({clip(', '.join(values), 200)})",
                line("default"),
            )
    argument = ArgumentSpec(
        name=name,
        title=item.get("title"),
        description=item.get("description"),
        required=required,
        default=default,
        values=values,
        **_typing(item, name, line),
    )
    for value in (*values, *([default] if default is not None else [])):
        wrong = typed.problem(argument, value)
        if wrong is not None:
            which = "default" if value == default and value not in values else "values"
            raise FormatError(f"{which} of argument {name!r}: {quote(value)} {wrong.split(' (got ')[0]}", line(which))
    return argument


def _typing(item: dict[str, Any], name: str, line: Line) -> dict[str, Any]:
    """The typed part of an argument declaration (``type``, ``pattern``, ``minimum``, ``maximum``),
    checked: a pattern this server cannot match, or bounds on a non-number, are errors."""
    kind = item.get("type", "string")
    if kind not in typed.TYPES:
        raise FormatError(
            f"type of argument {name!r} must be one of {', '.join(typed.TYPES)}, not {quote(kind)}", line("type")
        )
    pattern = item.get("pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            raise FormatError(f"pattern of argument {name!r} must be a string", line("pattern"))
        try:
            compile_pattern(pattern)
        except PatternError as error:
            raise FormatError(f"pattern of argument {name!r}: {error}", line("pattern")) from None
    bounds: dict[str, int | float | None] = {}
    for key in ("minimum", "maximum"):
        bound = item.get(key)
        if bound is not None:
            if kind not in ("integer", "number"):
                raise FormatError(f"{key} of argument {name!r} needs type integer or number", line(key))
            # The magnitude first: an int of a thousand digits cannot even be turned into a float.
            if isinstance(bound, bool) or not isinstance(bound, (int, float)):
                raise FormatError(f"{key} of argument {name!r} must be a number", line(key))
            if abs(bound) >= 10**18 if isinstance(bound, int) else not math.isfinite(bound):
                raise FormatError(f"{key} of argument {name!r} is out of range", line(key))
        bounds[key] = bound
    if bounds["minimum"] is not None and bounds["maximum"] is not None and bounds["minimum"] > bounds["maximum"]:
        raise FormatError(f"minimum of argument {name!r} is above its maximum", line("minimum"))
    return {"type": kind, "pattern": pattern, **bounds}
