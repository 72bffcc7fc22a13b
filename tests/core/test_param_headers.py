"""SEP-2243 custom headers, sans-I/O: which annotations count, how values are encoded, and what the
server refuses (``plainmcp.param_headers``)."""

from __future__ import annotations

import pytest
from plainmcp import ErrorCode, MCPError, Server
from plainmcp.param_headers import (
    HeaderBinding,
    check_request_headers,
    decode_header_value,
    encode_header_value,
    header_bindings,
    request_headers,
)

SCHEMA = {
    "type": "object",
    "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "limit": {"type": "integer", "x-mcp-header": "Limit"},
        "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        "plain": {"type": "string"},
        "target": {
            "type": "object",
            "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}},
        },
    },
}
BINDINGS = header_bindings(SCHEMA)


def headers_of(mapping):
    """A case-insensitive lookup over ``mapping``, as an HTTP server reads headers."""
    lowered = {name.lower(): value for name, value in mapping.items()}
    return lambda name: lowered.get(name.lower())


def test_bindings_follow_properties_chains_in_schema_order():
    assert BINDINGS == (
        HeaderBinding("Mcp-Param-Region", ("region",), "string"),
        HeaderBinding("Mcp-Param-Limit", ("limit",), "integer"),
        HeaderBinding("Mcp-Param-Dry-Run", ("dry",), "boolean"),
        HeaderBinding("Mcp-Param-Zone", ("target", "zone"), "string"),
    )


def test_annotations_outside_a_properties_chain_are_not_bindings():
    schema = {
        "type": "object",
        "properties": {"tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}},
        "anyOf": [{"properties": {"other": {"type": "string", "x-mcp-header": "Other"}}}],
    }
    assert header_bindings(schema) == ()


@pytest.mark.parametrize(
    ("prop", "reason"),
    [
        ({"type": "number", "x-mcp-header": "Ratio"}, "type must be"),
        ({"type": "object", "x-mcp-header": "Thing"}, "type must be"),
        ({"type": "string", "x-mcp-header": "Has Space"}, "not an HTTP token"),
        ({"type": "string", "x-mcp-header": "Ré"}, "not an HTTP token"),
        ({"type": "string", "x-mcp-header": "Line\r\nX-Evil: 1"}, "not an HTTP token"),
        ({"type": "string", "x-mcp-header": ""}, "not an HTTP token"),
    ],
)
def test_invalid_annotations_are_refused(prop, reason):
    with pytest.raises(ValueError, match=reason):
        header_bindings({"type": "object", "properties": {"value": prop}})


def test_header_names_must_be_unique_ignoring_case():
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "Region"},
            "b": {"type": "string", "x-mcp-header": "REGION"},
        },
    }
    with pytest.raises(ValueError, match="declared twice"):
        header_bindings(schema)


def test_a_tool_with_an_invalid_annotation_cannot_be_registered():
    server = Server("t", "1")

    async def handler(ctx, args):
        return "x"

    with pytest.raises(ValueError, match="tool 'bad': x-mcp-header of value"):
        server.tool(
            "bad", input_schema={"type": "object", "properties": {"value": {"type": "number", "x-mcp-header": "V"}}}
        )(handler)
    assert "bad" not in server.tools


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("us-west1", "us-west1"),
        ("", ""),
        ("a b", "a b"),
        (" lead", "=?base64?IGxlYWQ=?="),
        ("trail\t", "=?base64?dHJhaWwJ?="),
        ("Grüß", "=?base64?R3LDvMOf?="),
        ("line\nbreak", "=?base64?bGluZQpicmVhaw==?="),
        ("=?base64?SGk=?=", "=?base64?PT9iYXNlNjQ/U0drPT89?="),  # looks like the sentinel: encoded too
    ],
)
def test_values_encode_plain_or_as_the_base64_sentinel(value, encoded):
    assert encode_header_value(value) == encoded
    assert decode_header_value(encoded) == value


@pytest.mark.parametrize("raw", ["=?base64?SGVsbG8?=", "=?base64?SGVs!!!bG8=?=", "=?base64?/w==?="])
def test_invalid_sentinel_payloads_decode_to_none(raw):
    assert decode_header_value(raw) is None


@pytest.mark.parametrize("raw", ["SGVsbG8=", "=?base64?SGVsbG8=", "SGVsbG8=?="])
def test_values_without_the_exact_wrapper_are_literal(raw):
    assert decode_header_value(raw) == raw


def test_request_headers_mirror_present_arguments_only():
    arguments = {"region": "eu", "limit": 42, "dry": False, "plain": "x", "target": {"zone": "Zürich"}}
    assert request_headers(BINDINGS, arguments) == {
        "Mcp-Param-Region": "eu",
        "Mcp-Param-Limit": "42",
        "Mcp-Param-Dry-Run": "false",
        "Mcp-Param-Zone": "=?base64?WsO8cmljaA==?=",
    }
    assert request_headers(BINDINGS, {"region": None, "target": "not an object"}) == {}


def test_matching_headers_pass_whatever_their_case():
    arguments = {"region": "eu", "limit": 42.0, "dry": True, "target": {"zone": "Zürich"}}
    sent = {
        "mcp-param-region": "eu",
        "MCP-PARAM-LIMIT": "42",
        "Mcp-Param-Dry-Run": "true",
        "Mcp-Param-Zone": "=?base64?WsO8cmljaA==?=",
    }
    check_request_headers(BINDINGS, arguments, headers_of(sent))


def test_absent_or_null_arguments_expect_no_header():
    check_request_headers(BINDINGS, {"region": None}, headers_of({}))
    check_request_headers(BINDINGS, {}, headers_of({"Mcp-Param-Region": "stray"}))


@pytest.mark.parametrize(
    ("arguments", "sent", "reason"),
    [
        ({"region": "eu"}, {}, "missing"),
        ({"region": "eu"}, {"Mcp-Param-Region": "us"}, "does not match"),
        ({"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVsbG8?="}, "invalid Base64"),
        ({"region": "Hello"}, {"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, "invalid Base64"),
        ({"limit": 42}, {"Mcp-Param-Limit": "42.0"}, "does not match"),
        ({"dry": True}, {"Mcp-Param-Dry-Run": "True"}, "does not match"),
        ({"target": {"zone": "a"}}, {"Mcp-Param-Zone": "b"}, "does not match"),
    ],
)
def test_mismatches_are_32020(arguments, sent, reason):
    with pytest.raises(MCPError) as caught:
        check_request_headers(BINDINGS, arguments, headers_of(sent))
    assert caught.value.code == ErrorCode.HEADER_MISMATCH
    assert reason in caught.value.message
