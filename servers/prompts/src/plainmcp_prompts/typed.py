"""Typed arguments: what a value must look like, beyond being a string.

MCP prompt arguments are bare strings on the wire. A prompt file may declare more of an argument
(``type``, ``pattern``, ``minimum``, ``maximum``, besides ``values``), and the server enforces it: the
same checks refuse a bad ``default`` when the file is read and a bad value when a client sends one.

- ``integer``: optional ``-``, then digits (at most 18, so the number is exact everywhere);
- ``number``: a decimal number, optionally with an exponent (``-1.5``, ``2e3``); no ``inf`` or ``nan``;
- ``boolean``: ``true`` or ``false`` (any case; rendered in lower case);
- ``minimum`` / ``maximum``: inclusive bounds of an integer or a number;
- ``pattern``: the whole value matches (:mod:`.pattern`, in linear time; values longer than
  MAX_PATTERN_VALUE are refused before matching, and the matches of one request share a work
  :class:`~.pattern.Budget`: a value that would need more is refused, not judged).
"""

from __future__ import annotations

import math
import re

from .frontmatter import quote
from .model import ArgumentSpec
from .pattern import Budget, TooComplex, compile_pattern

TYPES = ("string", "integer", "number", "boolean")
#: Longest value matched against a pattern (characters).
MAX_PATTERN_VALUE = 4096

_INTEGER = re.compile(r"-?[0-9]{1,18}")
_NUMBER = re.compile(r"-?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,3})?")


def normalize(argument: ArgumentSpec, value: str) -> str:
    """``value`` as it is rendered: booleans in lower case, anything else unchanged."""
    return value.casefold() if argument.type == "boolean" else value


def problem(argument: ArgumentSpec, value: str, budget: Budget | None = None) -> str | None:
    """What is wrong with ``value`` (a non-empty string) for ``argument``, as the end of a sentence
    that starts with the argument's name ("must be a whole number"), or None if it is fine. The
    allowed values (``values``) are checked by the caller, which names them. Pattern matching takes
    its work from ``budget`` (see :mod:`.pattern`; raises its Stopped when the caller stops it)."""
    if argument.pattern is None and argument.type == "string":  # the common case, on every prompts/get
        return None
    if argument.type == "boolean":
        if value.casefold() not in ("true", "false"):
            return f"must be true or false (got {quote(value)})"
    elif argument.type in ("integer", "number"):
        number = _number(argument.type, value)
        if number is None:
            kind = "a whole number" if argument.type == "integer" else "a number"
            return f"must be {kind} (got {quote(value)})"
        if argument.minimum is not None and number < argument.minimum:
            return f"must be at least {_show(argument.minimum)} (got {quote(value)})"
        if argument.maximum is not None and number > argument.maximum:
            return f"must be at most {_show(argument.maximum)} (got {quote(value)})"
    if argument.pattern is not None:
        if len(value) > MAX_PATTERN_VALUE:
            return f"must be at most {MAX_PATTERN_VALUE} characters long to be checked against its pattern"
        try:
            matched = compile_pattern(argument.pattern).matches(value, budget)
        except TooComplex:
            return "is too long or too varied to be checked against its pattern within this server's limits; shorten it"
        if not matched:
            return f"must match the pattern {quote(argument.pattern)} (got {quote(value)})"
    return None


def describe(argument: ArgumentSpec) -> str | None:
    """The typed part of an argument, in words for a person filling a form ("A whole number from 1
    to 10."), or None for a plain string."""
    parts: list[str] = []
    if argument.type == "boolean":
        parts.append("Either true or false.")
    elif argument.type in ("integer", "number"):
        kind = "A whole number" if argument.type == "integer" else "A number"
        low, high = argument.minimum, argument.maximum
        if low is not None and high is not None:
            parts.append(f"{kind} from {_show(low)} to {_show(high)}.")
        elif low is not None:
            parts.append(f"{kind}, at least {_show(low)}.")
        elif high is not None:
            parts.append(f"{kind}, at most {_show(high)}.")
        else:
            parts.append(f"{kind}.")
    if argument.pattern is not None:
        parts.append(f"Matches {argument.pattern}.")
    return " ".join(parts) or None


def _number(kind: str, value: str) -> int | float | None:
    if kind == "integer":
        return int(value) if _INTEGER.fullmatch(value) else None
    if not _NUMBER.fullmatch(value):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _show(number: int | float) -> str:
    return str(int(number)) if isinstance(number, float) and number.is_integer() else str(number)
