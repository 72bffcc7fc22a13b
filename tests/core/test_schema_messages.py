"""Validation messages quote values as JSON, the way the caller wrote them (plainmcp.schema_messages):
``null is not of type "integer"``, never ``None is not of type 'integer'``; and no value is quoted
unbounded."""

from __future__ import annotations

from typing import Any

import pytest
from plainmcp import Server
from plainmcp.schema import SchemaValidator
from plainmcp.schema_messages import MAX_QUOTE, quote
from plainmcp.testing import connect_in_memory

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("schema", "instance", "message"),
    [
        ({"type": "integer"}, None, '(root): null is not of type "integer"'),
        ({"type": "string"}, True, '(root): true is not of type "string"'),
        ({"type": ["string", "null"]}, 1.5, '(root): 1.5 is not of type "string" or "null"'),
        ({"type": "object", "required": ["city"]}, {}, '(root): "city" is a required property'),
        ({"enum": ["c", "f"]}, "k", '(root): "k" is not one of ["c", "f"]'),
        ({"const": None}, 0, "(root): null was expected"),
        ({"minimum": 1}, 0, "(root): 0 is less than the minimum of 1"),
        ({"exclusiveMaximum": 1.5}, 2, "(root): 2 is greater than or equal to the maximum of 1.5"),
        ({"multipleOf": 3}, 4, "(root): 4 is not a multiple of 3"),
        ({"minLength": 2}, "a", '(root): "a" is too short (at least 2 characters)'),
        ({"maxItems": 1}, [None, False], "(root): [null, false] is too long (at most 1 item)"),
        ({"minProperties": 1}, {}, "(root): {} has too few properties (at least 1 property)"),
        ({"pattern": "^[a-z]+$"}, "Ab", '(root): "Ab" does not match "^[a-z]+$"'),
        ({"format": "email"}, "nope", '(root): "nope" is not a "email"'),
        ({"uniqueItems": True}, [1, 1], "(root): [1, 1] has non-unique elements"),
        (
            {"type": "object", "properties": {"a": {}}, "additionalProperties": False},
            {"a": 1, "b": None, "c": 2},
            '(root): Additional properties are not allowed ("b", "c" were unexpected)',
        ),
        (
            {"type": "object", "patternProperties": {"^x": {}}, "additionalProperties": False},
            {"xa": 1, "y": 2},
            '(root): Additional properties are not allowed ("y" was unexpected)',
        ),
        (
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            None,
            "(root): null is not valid under any of the given schemas",
        ),
        ({"not": {"type": "null"}}, None, '(root): null should not be valid under {"type": "null"}'),
        (
            {"type": "object", "properties": {"days": {"type": "array", "items": {"type": "integer"}}}},
            {"days": [1, None]},
            'days[1]: null is not of type "integer"',
        ),
    ],
)
def test_messages_quote_values_as_json(schema: dict[str, Any], instance: Any, message: str) -> None:
    assert SchemaValidator(schema).errors(instance) == [message]


def test_field_errors_use_the_same_words() -> None:
    validator = SchemaValidator({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n", "q"]})
    assert validator.field_errors({"n": None}) == [
        {"field": "q", "message": '"q" is a required property'},
        {"field": "n", "message": 'null is not of type "integer"'},
    ]


def test_a_huge_value_is_quoted_cut() -> None:
    (message,) = SchemaValidator({"type": "integer"}).errors("x" * 5_000_000)
    assert len(message) < 2 * MAX_QUOTE + 40
    assert message.startswith('(root): "xxxx') and '..." is not of type "integer"' in message


def test_quote_is_compact_json_cut_to_its_limit() -> None:
    assert quote({"a": [1, None, True]}) == '{"a": [1, null, true]}'
    assert quote("é\n") == '"é\\n"'
    assert len(quote(list(range(1000)))) == MAX_QUOTE and quote(list(range(1000))).endswith("...")


async def test_a_tool_argument_error_reaches_the_client_in_json_terms() -> None:
    server = Server("plainmcp-test", "1.0")

    @server.tool(input_schema={"type": "object", "properties": {"days": {"type": "integer"}}, "required": ["days"]})
    async def forecast(ctx: Any, args: dict[str, Any]) -> str:
        """A forecast."""
        return "sunny"

    async with connect_in_memory(server) as client:
        result = await client.call_tool("forecast", {"days": None})
    text = result["content"][0]["text"]
    assert result["isError"] is True
    assert 'days: null is not of type "integer"' in text and "None" not in text
