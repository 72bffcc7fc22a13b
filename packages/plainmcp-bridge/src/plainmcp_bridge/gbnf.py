"""A grammar-safe JSON Schema as a GBNF grammar (llama.cpp's ``grammar`` request field), compact JSON only.

Why a grammar of our own when llama.cpp converts ``response_format`` itself: its converter allows
whitespace between every token, and a small model fills that room (runs of spaces and newlines until
``max_tokens``; the ``format`` mode biases them out by text). The grammar here admits compact JSON
alone, the required properties first and then the others, each in declared order (as the system prompt
lists them), so there is nothing to pad with and fewer tokens to write.
It covers exactly what :func:`plainmcp_bridge.constrain.grammar_safe` keeps: ``type`` (one or a list),
``enum``, ``const``, ``properties``/``required``, ``additionalProperties``, ``items`` with
``minItems``/``maxItems``, ``anyOf``; anything else is "any JSON value". Bounds (``minimum``...) are left
to the interceptor, which validates every call against the full schema. No I/O.
"""

from __future__ import annotations

import json
from typing import Any

#: The JSON building blocks every grammar starts from (compact: no whitespace anywhere).
BASE = r"""
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ( string ":" value ( "," string ":" value )* )? "}"
array ::= "[" ( value ( "," value )* )? "]"
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1f] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] )
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
boolean ::= "true" | "false"
""".strip()

_TYPES = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean", "null": '"null"'}


def literal(text: str) -> str:
    """``text`` as a GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def json_literal(value: Any) -> str:
    """A JSON value (an enum member, a const) as the literal of its compact JSON text."""
    return literal(json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True))


class _Builder:
    def __init__(self) -> None:
        self.rules: dict[str, str] = {}
        self._named: dict[str, str] = {}

    def rule(self, body: str) -> str:
        """A rule for ``body`` (shared when the same body comes again); its name."""
        if body in self._named:
            return self._named[body]
        name = f"r{len(self.rules)}"
        self.rules[name] = body
        self._named[body] = name
        return name

    def schema(self, schema: Any) -> str:
        """The grammar expression of ``schema``."""
        if not isinstance(schema, dict) or not schema:
            return "value"
        if "const" in schema:
            return json_literal(schema["const"])
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return self.rule(" | ".join(json_literal(item) for item in schema["enum"]))
        if isinstance(schema.get("anyOf"), list) and schema["anyOf"]:
            return self.rule(" | ".join(self.schema(option) for option in schema["anyOf"]))
        kind = schema.get("type")
        if isinstance(kind, list) and kind:
            return self.rule(" | ".join(self.schema({**schema, "type": item}) for item in kind))
        if kind == "object":
            return self.object(schema)
        if kind == "array":
            return self.array(schema)
        return _TYPES.get(str(kind), "value")

    def object(self, schema: dict[str, Any]) -> str:
        properties = schema.get("properties")
        if not isinstance(properties, dict) or not properties:
            extra = schema.get("additionalProperties")
            if extra is False:
                return literal("{}")
            member = f'string ":" {self.schema(extra) if isinstance(extra, dict) else "value"}'
            return self.rule(f'"{{" ( {member} ( "," {member} )* )? "}}"')
        listed = [key for key in schema.get("required") or () if isinstance(key, str)]
        # A required name without a schema of its own may be any value, but it must be there.
        properties = {**properties, **{key: {} for key in listed if key not in properties}}
        required = [key for key in properties if key in set(listed)]
        optional = [key for key in properties if key not in required]
        pairs = {key: self.rule(f'{literal(json.dumps(key))} ":" {self.schema(properties[key])}') for key in properties}
        if required:
            body = ' "," '.join(pairs[key] for key in required)
            body += "".join(f' ( "," {pairs[key]} )?' for key in optional)
            return self.rule(f'"{{" {body} "}}"')
        # No required property: the first one present opens, the later ones may follow in order.
        starts = [
            pairs[key] + "".join(f' ( "," {pairs[later]} )?' for later in optional[index + 1 :])
            for index, key in enumerate(optional)
        ]
        return self.rule('"{" ( ' + " | ".join(f"( {start} )" for start in starts) + ' )? "}"')

    def array(self, schema: dict[str, Any]) -> str:
        item = self.schema(schema.get("items"))
        low: int = schema["minItems"] if isinstance(schema.get("minItems"), int) else 0
        high: int | None = schema["maxItems"] if isinstance(schema.get("maxItems"), int) else None
        if high is not None and high < max(low, 1):
            return literal("[]")
        more = "*" if high is None and low <= 1 else f"{{{max(low - 1, 0)},{'' if high is None else high - 1}}}"
        items = f'{item} ( "," {item} ){more}'
        return self.rule(f'"[" {items} "]"' if low > 0 else f'"[" ( {items} )? "]"')


def to_gbnf(schema: Any) -> str:
    """The GBNF grammar (``root`` rule first) of JSON texts that match ``schema`` (a grammar-safe
    projection; what it does not cover is admitted as any JSON value)."""
    builder = _Builder()
    root = builder.schema(schema)
    lines = [f"root ::= {root}", *(f"{name} ::= {body}" for name, body in builder.rules.items()), BASE]
    return "\n".join(lines) + "\n"
