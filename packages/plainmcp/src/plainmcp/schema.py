"""JSON Schema validation, compiled once per schema and loaded lazily.

``jsonschema`` costs tens of milliseconds to import; a stdio server that is spawned to answer
``tools/list`` should not pay that. The validator class is chosen from the schema's ``$schema``
(2020-12 when absent, as 2025-11-25 makes the default) and the schema is checked when first used.
"""

from __future__ import annotations

from typing import Any

_MAX_REPORTED_ERRORS = 5


class SchemaValidator:
    """Validates instances against one schema. Compiles on first use, then reuses."""

    __slots__ = ("schema", "_validator")

    def __init__(self, schema: dict[str, Any]) -> None:
        if not isinstance(schema, dict):
            raise TypeError("a JSON Schema here must be an object")
        self.schema = schema
        self._validator: Any = None

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

    def errors(self, instance: Any) -> list[str]:
        """Readable problems with ``instance``, most relevant first; empty when it is valid."""
        validator = self._compiled()
        found = sorted(validator.iter_errors(instance), key=lambda e: (len(e.path), list(map(str, e.path))))
        messages = []
        for error in found[:_MAX_REPORTED_ERRORS]:
            where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
            messages.append(f"{where.lstrip('.') or '(root)'}: {error.message}")
        if len(found) > _MAX_REPORTED_ERRORS:
            messages.append(f"... and {len(found) - _MAX_REPORTED_ERRORS} more")
        return messages
