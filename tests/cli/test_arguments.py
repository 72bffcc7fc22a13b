"""``--arg`` / ``--args``: the tool's input schema decides what a NAME=VALUE becomes."""

from __future__ import annotations

import pytest
from plainmcp.cli.call import convert, parse_arguments
from plainmcp.cli.targets import UsageError

SCHEMA = {
    "type": "object",
    "properties": {
        "zip": {"type": "string"},
        "count": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "unit": {"enum": ["c", "f"]},
        "flag": {"type": ["boolean", "null"]},
    },
}


def test_arguments_string_property_keeps_text_that_looks_like_json() -> None:
    assert parse_arguments(["zip=01234", "unit=c"], None, SCHEMA) == {"zip": "01234", "unit": "c"}


def test_arguments_typed_properties_parse_as_json() -> None:
    parsed = parse_arguments(["count=3", 'tags=["a","b"]', "flag=true"], None, SCHEMA)
    assert parsed == {"count": 3, "tags": ["a", "b"], "flag": True}


def test_arguments_unparsable_value_for_a_typed_property_is_left_for_the_server_to_refuse() -> None:
    assert convert("three", {"type": "integer"}) == "three"


def test_arguments_unknown_property_stays_text() -> None:
    assert parse_arguments(["other=42"], None, SCHEMA) == {"other": "42"}


def test_arguments_colon_equals_forces_json_and_arg_wins_over_args() -> None:
    parsed = parse_arguments(["zip:=12345", "count=9"], '{"count": 1, "keep": true}', SCHEMA)
    assert parsed == {"zip": 12345, "count": 9, "keep": True}


def test_arguments_untyped_keep_every_value_as_text() -> None:
    assert parse_arguments(["n=3", "x:=1"], None, None, typed=False) == {"n": "3", "x:": "1"}


@pytest.mark.parametrize(
    ("pairs", "json_text", "complaint"),
    [
        (["novalue"], None, "expected NAME=VALUE"),
        ([], "{", "not JSON"),
        ([], "[1]", "JSON object"),
        (["x:=nope"], None, "not JSON"),
    ],
)
def test_arguments_malformed_are_usage_errors(pairs, json_text, complaint) -> None:
    with pytest.raises(UsageError, match=complaint):
        parse_arguments(pairs, json_text, SCHEMA)
