"""The fast schema check may only ever shortcut to "valid": wherever it accepts, jsonschema must too."""

from __future__ import annotations

import itertools
from typing import Any

import jsonschema
import pytest
from plainmcp.schema import SchemaValidator, fast_check

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"text": {"type": "string", "minLength": 1, "maxLength": 5}},
        "required": ["text"],
    },
    {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10}},
        "additionalProperties": False,
    },
    {"type": "object", "properties": {"x": {"type": "number", "maximum": 1.5, "exclusiveMinimum": -1}}},
    {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 2}},
    },
    {
        "type": "object",
        "properties": {"mode": {"enum": ["fast", "slow"]}, "flag": {"type": "boolean"}, "none": {"type": "null"}},
    },
    {"type": "object", "properties": {"either": {"type": ["string", "integer"]}}, "required": ["either"]},
    {"type": "object", "properties": {"params": {"anyOf": [{"type": "array"}, {"type": "object"}]}}},
    {"type": "object", "properties": {"v": {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]}}},
    {
        "type": "object",
        "properties": {"nested": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}},
    },
    {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "additionalProperties": {"type": ["integer", "null"]},
    },
    {
        "type": "object",
        "properties": {"text": {"type": "string"}, "n": {"type": "integer"}},
        "dependentRequired": {"text": ["n"], "n": ["text"]},
    },
]

VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    1,
    -1,
    1.0,
    1.5,
    9,
    10,
    2**70,
    float("inf"),
    "",
    "a",
    "abcdef",
    "ABC",
    "fast",
    [],
    ["a"],
    ["a", "b", "c"],
    ["A"],
    [1],
    {},
    {"a": 1},
    {"a": "1"},
    {"a": 1.0},
]
KEYS = ["text", "n", "x", "tags", "mode", "flag", "none", "either", "nested", "extra"]


def instances() -> list[Any]:
    found: list[Any] = [None, [], "text", 3, {}]
    for key, value in itertools.product(KEYS, VALUES):
        found.append({key: value})
    for (k1, v1), (k2, v2) in itertools.islice(
        itertools.product(zip(KEYS, VALUES, strict=False), repeat=2), 0, None, 7
    ):
        found.append({k1: v1, k2: v2})
    return found


@pytest.mark.parametrize("schema", SCHEMAS, ids=range(len(SCHEMAS)))
def test_fast_check_never_accepts_what_jsonschema_rejects(schema: dict[str, Any]) -> None:
    check = fast_check(schema)
    assert check is not None, "these schemas are meant to take the fast path"
    validator = jsonschema.Draft202012Validator(schema)
    accepted = 0
    for instance in instances():
        if check(instance):
            accepted += 1
            assert validator.is_valid(instance), (schema, instance)
    assert accepted > 0  # the fast path is really exercised


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}},
        {"type": "object", "allOf": [{"required": ["a"]}]},
        {"$ref": "#/$defs/x", "$defs": {"x": {"type": "object"}}},
        {"type": "object", "patternProperties": {"^x": {"type": "string"}}, "additionalProperties": False},
        {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}},
        {"type": "integer", "multipleOf": 3},
    ],
)
def test_unknown_keywords_fall_back_to_jsonschema(schema: dict[str, Any]) -> None:
    assert fast_check(schema) is None


def test_validator_messages_still_come_from_jsonschema() -> None:
    validator = SchemaValidator(SCHEMAS[0])
    assert validator.errors({"text": "ok"}) == []
    # jsonschema finds the problem; the wording quotes values as JSON (plainmcp.schema_messages).
    assert validator.errors({"text": ""}) == ['text: "" is too short (at least 1 character)']
    assert validator.errors({}) == ['(root): "text" is a required property']


def test_integer_accepts_integral_floats_and_rejects_booleans_as_jsonschema_does() -> None:
    check = fast_check({"type": "integer"})
    assert check is not None
    assert check(1.0) and check(3) and not check(True) and not check(1.5)
