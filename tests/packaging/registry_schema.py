"""The rules of the MCP Registry's server.json (schema 2025-12-11) that our files rely on, as a JSON Schema.

Why not the official file: it is published at SCHEMA_URL, and the tests may not use the network; a copy of it
is another project's file, which this repository does not carry. So this is our own statement of the rules
our server.json files touch, taken from that schema's definitions: ``ServerDetail`` (name, description,
version required; the name's reverse-DNS pattern; description and title 1 to 100 characters), ``Repository``
(url and source), ``Package`` (registryType, identifier and transport required; a version that is not
``latest``), the stdio transport, and named/positional arguments and environment variables as inputs.
Where our files use a field, its rule is here; fields we do not use are left to the official validator
(``mcp-publisher validate``) at release time.
"""

from __future__ import annotations

from typing import Any

SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

_TEXT = {"type": "string", "minLength": 1}

_INPUT: dict[str, Any] = {
    "description": {"type": "string"},
    "isRequired": {"type": "boolean"},
    "isSecret": {"type": "boolean"},
    "isRepeated": {"type": "boolean"},
    "format": {"enum": ["string", "number", "boolean", "filepath"]},
    "default": {"type": "string"},
    "placeholder": {"type": "string"},
    "value": {"type": "string"},
    "choices": {"type": "array", "items": {"type": "string"}},
}

SERVER_JSON: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["$schema", "name", "description", "version"],
    "properties": {
        "$schema": {"const": SCHEMA_URL},
        "name": {"type": "string", "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$", "minLength": 3, "maxLength": 200},
        "title": {**_TEXT, "maxLength": 100},
        "description": {**_TEXT, "maxLength": 100},
        "version": {**_TEXT, "maxLength": 255, "not": {"pattern": r"^[\^~<>=]|[x*]$"}},
        "websiteUrl": {"type": "string", "format": "uri"},
        "repository": {
            "type": "object",
            "required": ["url", "source"],
            "properties": {
                "url": {"type": "string", "pattern": "^https://"},
                "source": _TEXT,
                "id": {"type": "string"},
                "subfolder": {"type": "string", "pattern": "^[^/.][^\\\\]*[^/]$"},
            },
            "additionalProperties": False,
        },
        "packages": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/package"}},
    },
    "additionalProperties": False,
    "$defs": {
        "package": {
            "type": "object",
            "required": ["registryType", "identifier", "transport"],
            "properties": {
                "registryType": {"enum": ["npm", "pypi", "nuget", "oci", "mcpb"]},
                "registryBaseUrl": {"type": "string", "pattern": "^https://"},
                "identifier": _TEXT,
                "version": {**_TEXT, "not": {"const": "latest"}},
                "runtimeHint": {"type": "string"},
                "transport": {
                    "type": "object",
                    "required": ["type"],
                    "properties": {"type": {"enum": ["stdio", "streamable-http", "sse"]}},
                },
                "packageArguments": {"type": "array", "items": {"$ref": "#/$defs/argument"}},
                "environmentVariables": {"type": "array", "items": {"$ref": "#/$defs/variable"}},
            },
            "additionalProperties": False,
        },
        "argument": {
            "type": "object",
            "required": ["type"],
            "properties": {
                **_INPUT,
                "type": {"enum": ["named", "positional"]},
                "name": {"type": "string"},
                "valueHint": {"type": "string"},
            },
            "additionalProperties": False,
            # A named argument needs its flag; a positional one a valueHint (or a fixed value).
            "if": {"properties": {"type": {"const": "named"}}},
            "then": {"required": ["name"]},
            "else": {"anyOf": [{"required": ["valueHint"]}, {"required": ["value"]}]},
        },
        "variable": {
            "type": "object",
            "required": ["name"],
            "properties": {**_INPUT, "name": {"type": "string", "pattern": "^[A-Z][A-Z0-9_]*$"}},
            "additionalProperties": False,
        },
    },
}
