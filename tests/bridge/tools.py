"""Tool listings the bridge tests share: shaped like the repository's servers' tools."""

from __future__ import annotations

FORECAST = {
    "name": "get_forecast",
    "description": "The weather forecast for a city.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, such as Shanghai"},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {"temperature": {"type": "number"}, "conditions": {"type": "string"}},
    },
    "annotations": {"readOnlyHint": True},
}

ROUTE = {
    "name": "plan_route",
    "description": "A route through several stops.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "stops": {
                "type": "array",
                "minItems": 2,
                "items": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}, "mode": {"enum": ["car", "train"]}},
                    "required": ["city"],
                },
            }
        },
        "required": ["stops"],
    },
}

DELETE = {
    "name": "delete_file",
    "description": "Delete a file.",
    "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    "annotations": {"destructiveHint": True},
}

NOW = {"name": "get_time", "description": "The current time.", "inputSchema": {"type": "object", "properties": {}}}

ALL = [FORECAST, ROUTE, DELETE, NOW]
