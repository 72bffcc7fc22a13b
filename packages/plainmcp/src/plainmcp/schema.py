"""JSON Schema validation, compiled once per schema and loaded lazily.

``jsonschema`` costs tens of milliseconds to import; a stdio server that is spawned to answer
``tools/list`` should not pay that. The validator class is chosen from the schema's ``$schema``
(2020-12 when absent, as 2025-11-25 makes the default) and the schema is checked when first used.

The schemas of most tools use a handful of keywords (an object with typed properties). Those are
also compiled into a plain-Python check that answers "valid" in microseconds, on every call. It is
only ever a shortcut to "valid": when it says no, or meets a keyword it does not know, jsonschema
decides and explains, so the two can never disagree on what is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .schema_messages import describe

Check = Callable[[Any], bool]

# Keywords that only annotate: they never make an instance invalid.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment"}
)
_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    # 2020-12: a number with a zero fractional part is an integer (1.0 is).
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
}


def fast_check(schema: Any) -> Check | None:
    """A quick validity test for simple schemas, or None when the schema needs jsonschema."""
    if schema is True or schema == {}:
        return lambda value: True
    if not isinstance(schema, dict):
        return None
    checks: list[Check] = []
    for keyword, argument in schema.items():
        if (
            keyword in _ANNOTATIONS
            or keyword == "$schema"
            and argument == "https://json-schema.org/draft/2020-12/schema"
        ):
            continue
        check = _keyword_check(keyword, argument, schema)
        if check is None:
            return None
        checks.append(check)
    return _every(checks)


# Checks run on every tool call: plain loops, and no wrapper around a single check (a generator
# expression per keyword cost a tenth of a small stdio tools/call).


def _every(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def every(value: Any) -> bool:
        for check in checks:
            if not check(value):
                return False
        return True

    return every


def _any(checks: list[Check]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def any_of(value: Any) -> bool:
        for check in checks:
            if check(value):
                return True
        return False

    return any_of


def _properties_check(properties: dict[str, Any]) -> Check | None:
    pairs: list[tuple[str, Check]] = []
    for name, sub in properties.items():
        found = fast_check(sub)
        if found is None:
            return None
        pairs.append((name, found))

    def check_properties(v: Any) -> bool:
        if isinstance(v, dict):
            for name, check in pairs:
                if name in v and not check(v[name]):
                    return False
        return True

    return check_properties


def _required_check(required: tuple[str, ...]) -> Check:
    def has_required(v: Any) -> bool:
        if isinstance(v, dict):
            for name in required:
                if name not in v:
                    return False
        return True

    return has_required


def _keyword_check(keyword: str, argument: Any, schema: dict[str, Any]) -> Check | None:
    if keyword == "type":
        names = [argument] if isinstance(argument, str) else argument
        if not isinstance(names, list) or not all(name in _TYPES for name in names):
            return None
        return _any([_TYPES[name] for name in names])
    if keyword == "properties" and isinstance(argument, dict):
        return _properties_check(argument)
    if keyword == "required" and isinstance(argument, list):
        return _required_check(tuple(argument))
    if keyword == "additionalProperties" and argument is False and "patternProperties" not in schema:
        known = frozenset(schema.get("properties", {}))
        return lambda v: not isinstance(v, dict) or known.issuperset(v)
    if keyword == "additionalProperties" and isinstance(argument, dict) and "patternProperties" not in schema:
        extra_check = fast_check(argument)
        if extra_check is None:
            return None
        declared = frozenset(schema.get("properties", {}))
        return lambda v: (
            not isinstance(v, dict) or all(extra_check(item) for key, item in v.items() if key not in declared)
        )
    if (
        keyword == "dependentRequired"
        and isinstance(argument, dict)
        and all(isinstance(names, list) for names in argument.values())
    ):
        return lambda v: (
            not isinstance(v, dict) or all(name in v for key, names in argument.items() if key in v for name in names)
        )
    if keyword == "anyOf" and isinstance(argument, list) and argument:
        # The portable spelling of a value of several types (one type per branch, no type array).
        branches: list[Check] = []
        for sub in argument:
            found = fast_check(sub)
            if found is None:
                return None
            branches.append(found)
        return _any(branches)
    if keyword == "items" and isinstance(argument, dict):
        subcheck = fast_check(argument)
        if subcheck is None:
            return None
        return lambda v: not isinstance(v, list) or all(subcheck(item) for item in v)
    if keyword in ("minLength", "maxLength") and isinstance(argument, int):
        low = keyword == "minLength"
        return lambda v: not isinstance(v, str) or (len(v) >= argument if low else len(v) <= argument)
    if keyword in ("minItems", "maxItems") and isinstance(argument, int):
        low = keyword == "minItems"
        return lambda v: not isinstance(v, list) or (len(v) >= argument if low else len(v) <= argument)
    if keyword in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") and _is_number(argument):
        compare = {
            "minimum": lambda x: x >= argument,
            "maximum": lambda x: x <= argument,
            "exclusiveMinimum": lambda x: x > argument,
            "exclusiveMaximum": lambda x: x < argument,
        }[keyword]
        return lambda v: not _is_number(v) or compare(v)
    if keyword == "enum" and isinstance(argument, list) and all(isinstance(x, str) for x in argument):
        allowed = frozenset(argument)
        return lambda v: isinstance(v, str) and v in allowed
    if keyword == "pattern" and isinstance(argument, str):
        try:
            search = re.compile(argument).search
        except re.error:
            return None
        return lambda v: not isinstance(v, str) or search(v) is not None
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


_MAX_REPORTED_ERRORS = 5


class SchemaValidator:
    """Validates instances against one schema. Compiles on first use, then reuses."""

    __slots__ = ("schema", "_validator", "_fast")

    def __init__(self, schema: dict[str, Any]) -> None:
        if not isinstance(schema, dict):
            raise TypeError("a JSON Schema here must be an object")
        self.schema = schema
        self._validator: Any = None
        self._fast = fast_check(schema)

    def _compiled(self) -> Any:
        if self._validator is None:
            import jsonschema
            from jsonschema.validators import validator_for

            cls = validator_for(self.schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(self.schema)
            self._validator = cls(self.schema, format_checker=cls.FORMAT_CHECKER)
        return self._validator

    def compile(self) -> None:
        """Compile now (and check the schema itself). Raises jsonschema.SchemaError."""
        self._compiled()

    def _found(self, instance: Any) -> list[Any]:
        if self._fast is not None and self._fast(instance):
            return []
        validator = self._compiled()
        return sorted(validator.iter_errors(instance), key=lambda e: (len(e.path), list(map(str, e.path))))

    def errors(self, instance: Any) -> list[str]:
        """Readable problems with ``instance``, most relevant first, values quoted as JSON
        (:mod:`plainmcp.schema_messages`); empty when it is valid."""
        found = self._found(instance)
        messages = [
            f"{_where(error.absolute_path) or '(root)'}: {describe(error)}" for error in found[:_MAX_REPORTED_ERRORS]
        ]
        if len(found) > _MAX_REPORTED_ERRORS:
            messages.append(f"... and {len(found) - _MAX_REPORTED_ERRORS} more")
        return messages

    def field_errors(self, instance: Any, limit: int = 20) -> list[dict[str, str]]:
        """The problems as ``{"field": "a.b[0]", "message": ...}``, most relevant first (at most
        ``limit``); a missing required property is named as the field, ``""`` is the instance."""
        problems = []
        for error in self._found(instance)[:limit]:
            where = _where(error.absolute_path)
            if error.validator == "required" and isinstance(error.validator_value, list):
                missing = next(
                    (p for p in error.validator_value if f"{p!r} is a required property" == error.message), None
                )
                if isinstance(missing, str):
                    where = f"{where}.{missing}" if where else missing
            problems.append({"field": where, "message": describe(error)})
        return problems


def _where(path: Any) -> str:
    """A JSON path as ``a.b[0].c`` (empty for the instance itself)."""
    return "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")
