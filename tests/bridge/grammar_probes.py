"""JSON Schema constructs on which llama.cpp's converter (llama-server 11434.0.0) and XGrammar 0.2.9 disagree,
or both fail: each with what each engine does with it as sent, as measured here. The bridge's grammar-safe
projection must compile under both for every one (tests/bridge/test_grammar_engines.py for XGrammar,
tests/bridge/test_real_model.py for llama.cpp)."""

from __future__ import annotations

from typing import Any


def _value(**schema: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"v": schema}, "required": ["v"]}


#: name -> (schema, llama.cpp builds a grammar from it, XGrammar compiles it)
PROBES: dict[str, tuple[dict[str, Any], bool, bool]] = {
    # XGrammar's regex converter refuses these; llama.cpp takes them (as it reads them).
    "backreference pattern": (_value(type="string", pattern="^(a)\\1$"), True, False),
    "unicode property pattern": (_value(type="string", pattern="^\\p{L}+$"), True, False),
    # llama.cpp's grammar cannot hold a long minimum repetition, nor fetch a remote $ref; XGrammar compiles
    # the first and ignores the $ref with a warning.
    "minLength 5000": (_value(type="string", minLength=5000), False, True),
    "remote $ref": ({"type": "object", "properties": {"v": {"$ref": "https://example.com/s.json"}}}, False, True),
    # Neither builds a grammar from a schema no value can match.
    "empty enum": (_value(enum=[]), False, False),
    "false subschema": ({"type": "object", "properties": {"v": False}}, False, False),
    # Both take these (XGrammar warns and ignores the lookahead).
    "lookahead pattern": (_value(type="string", pattern="^(?!.*\\.\\.)[^@]+@[^@]+$"), True, True),
    "maxLength 100000": (_value(type="string", maxLength=100000), True, True),
    "format email": (_value(type="string", format="email"), True, True),
    "type list": (_value(type=["string", "null"]), True, True),
    "oneOf objects": (
        _value(
            oneOf=[{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, {"type": "integer"}]
        ),
        True,
        True,
    ),
}
