"""Constrained calls: the model's whole answer is held to a JSON Schema built from the live tools.

Small models fail by not acting or by acting wrongly, far more than by malformed calls; a model server that
enforces a JSON Schema while it samples (llama.cpp's ``response_format``, Ollama's ``format``, vLLM's
structured outputs) makes every answer one of two shapes:

- ``{"name": <a tool's exact name>, "arguments": <that tool's arguments>}``: a call, or
- ``{"answer": "<text>"}``: an answer in words.

The schema is the union of one branch per tool (``name`` a ``const``, ``arguments`` the tool's
``inputSchema`` made grammar-safe) and the answer branch. The bridge still validates every call against the
tool's *full* schema (the interceptor): the projection only drops what a grammar engine cannot express, so a
value it lets through may still be refused and repaired. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlparse

from .hostile import MAX_DEPTH

OFF, FORMAT, GRAMMAR, DECIDE, TOOL_CHOICE, AUTO = "off", "format", "grammar", "decide", "tool-choice", "auto"
CONSTRAIN_MODES = (AUTO, OFF, FORMAT, GRAMMAR, DECIDE, TOOL_CHOICE)
#: The modes that hold the model's answer to a shape (every one but ``off``).
CONSTRAINED = frozenset({FORMAT, GRAMMAR, DECIDE, TOOL_CHOICE})
#: The modes that ask first which tool (or none), then for that tool's arguments alone.
DECIDING = frozenset({DECIDE, TOOL_CHOICE})
#: What one constrained request may answer: a call or words (the default), words only, the decision
#: (``{"tool": <a name or IN_WORDS>}``), or a call of the one tool it is given.
CALL_OR_ANSWER, ANSWER, CHOICE, CALL = "call_or_answer", "answer", "choice", "call"
#: The decision's "no tool" value: with a space, so no MCP tool name can be it.
IN_WORDS = "answer in words"
#: String keywords llama.cpp's and XGrammar's converters handle badly or not at all: a lookahead
#: ``pattern`` fails the whole grammar, a large ``maxLength`` (``char{0,10000}``) blows it up, ``format``
#: values are partly supported. The server checks them anyway, and so does the interceptor.
_DROPPED = frozenset({"pattern", "format", "patternProperties", "minLength", "maxLength", "$schema", "$id"})
#: Bounds on repetition are kept up to this size (beyond it the grammar grows without helping a model).
MAX_REPEAT = 16
#: Whitespace runs a constrained answer never needs (compact JSON has none of them).
PADDING = (" ", "\n", "\n\n", "\n ", "\n  ", "\n   ", "\n    ", "  ", "   ", "    ", "\t")
#: Keywords kept as they are.
_KEPT = frozenset({"type", "enum", "const", "required", "description", "minimum", "maximum", "default"})


def resolve(mode: str, api: str, base_url: str | None) -> str:
    """The mode in force: ``auto`` means ``format`` against a model server on this machine over the
    OpenAI-compatible API (llama.cpp's server and vLLM enforce ``response_format``), ``off`` elsewhere
    (a hosted API may not take a root ``anyOf``; Ollama's native tool calls are kept)."""
    if mode != AUTO:
        return mode
    host = urlparse(base_url or "http://127.0.0.1").hostname or ""
    local = host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")
    return FORMAT if api == "openai" and local else OFF


def grammar_safe(schema: Any, depth: int = 0) -> Any:
    """``schema`` with what a grammar cannot express dropped: string patterns, formats and lengths,
    repetition bounds past :data:`MAX_REPEAT`, ``$ref``s (made "any value"), nesting past the bridge's
    depth. Types, enums, consts, properties, required, items and ``anyOf``/``oneOf`` branches stay."""
    if not isinstance(schema, dict) or depth > MAX_DEPTH // 2:
        return {}
    if "$ref" in schema:
        return {}
    safe: dict[str, Any] = {key: value for key, value in schema.items() if key in _KEPT}
    if not isinstance(safe.get("enum"), list) or not safe["enum"]:
        # An empty enum admits no value: llama.cpp and XGrammar both refuse to build a grammar from it.
        safe.pop("enum", None)
    if isinstance(safe.get("required"), list):
        safe["required"] = [item for item in safe["required"] if isinstance(item, str)]
    properties = schema.get("properties")
    if isinstance(properties, dict):
        safe["properties"] = {str(key): grammar_safe(value, depth + 1) for key, value in properties.items()}
    additional = schema.get("additionalProperties")
    if additional is False:
        safe["additionalProperties"] = False
    elif isinstance(additional, dict):
        safe["additionalProperties"] = grammar_safe(additional, depth + 1)
    if isinstance(schema.get("items"), dict):
        safe["items"] = grammar_safe(schema["items"], depth + 1)
    for key in ("minItems", "maxItems"):
        value = schema.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_REPEAT:
            safe[key] = value
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            safe["anyOf"] = [grammar_safe(option, depth + 1) for option in schema[key]]
    return safe


def union_schema(tools: Iterable[Mapping[str, Any]], *, answer_only: bool = False) -> dict[str, Any]:
    """The schema of a constrained answer: a call of one of ``tools`` or an answer in words (only the
    answer with ``answer_only``: the model repeated a call whose result it has)."""
    branches: list[dict[str, Any]] = []
    for tool in () if answer_only else tools:
        arguments = grammar_safe(tool.get("inputSchema") or {"type": "object"})
        arguments.setdefault("type", "object")
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"const": str(tool.get("name"))}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    branches.append(
        {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
            "additionalProperties": False,
        }
    )
    return {"anyOf": branches}


def choice_schema(tools: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The decision's schema: ``{"tool": <one of the tools' names, or IN_WORDS>}``."""
    names = [str(tool.get("name")) for tool in tools]
    return {
        "type": "object",
        "properties": {"tool": {"enum": [*names, IN_WORDS]}},
        "required": ["tool"],
        "additionalProperties": False,
    }


def shape_schema(tools: Iterable[Mapping[str, Any]], shape: str) -> dict[str, Any]:
    """The JSON Schema of an answer of ``shape`` (see :data:`CALL_OR_ANSWER` and its siblings)."""
    tools = list(tools)
    if shape == CHOICE:
        return choice_schema(tools)
    union = union_schema(tools, answer_only=shape == ANSWER)
    if shape == CALL:  # the tool branches alone: the decision already chose to call
        return {"anyOf": union["anyOf"][:-1]} if len(union["anyOf"]) > 1 else union
    return union


def request_fields(
    api: str,
    tools: Iterable[Mapping[str, Any]],
    *,
    answer_only: bool = False,
    shape: str | None = None,
    mode: str = FORMAT,
) -> dict[str, Any]:
    """The request fields that send the constraint of ``mode`` for an answer of ``shape``, for ``api``.

    ``format`` and ``decide``: a JSON Schema (``response_format``, Ollama's ``format``). ``grammar``: the
    same schema as a GBNF ``grammar`` (llama.cpp; :mod:`plainmcp_bridge.gbnf`), compact JSON with no
    whitespace to pad with. ``tool-choice``: the call of the decided tool goes as the API's own ``tools``
    with a named ``tool_choice`` (vLLM enforces it with its structured-outputs backend); the decision and
    the answer in words as a JSON Schema."""
    tools = list(tools)
    shape = shape or (ANSWER if answer_only else CALL_OR_ANSWER)
    if mode == TOOL_CHOICE and shape == CALL and api != "ollama" and tools:
        return tool_choice_fields(tools)
    schema = shape_schema(tools, shape)
    if api == "ollama":
        return {"format": schema}
    if mode == GRAMMAR:
        from .gbnf import to_gbnf

        return {"grammar": to_gbnf(schema)}
    return {
        "response_format": {"type": "json_schema", "json_schema": {"name": shape, "schema": schema}},
        # A small model under a JSON grammar pads with whitespace (the grammar allows it between tokens)
        # until max_tokens: 4 of 6 real SmolLM2 turns were cut so. llama.cpp takes biases by text.
        "logit_bias": [[padding, False] for padding in PADDING],
    }


def tool_choice_fields(tools: list[Mapping[str, Any]]) -> dict[str, Any]:
    """The OpenAI-compatible fields that force a call of ``tools[0]``: the tool (grammar-safe
    parameters) and a named ``tool_choice``, the form vLLM documents as held to the parameters' schema
    by structured outputs (``"required"`` when several tools are given)."""
    from .chat_apis import functions

    safe = [{**tool, "inputSchema": grammar_safe(tool.get("inputSchema") or {"type": "object"})} for tool in tools]
    choice: Any = (
        {"type": "function", "function": {"name": str(tools[0].get("name"))}} if len(tools) == 1 else "required"
    )
    return {"tools": functions(safe), "tool_choice": choice}


def answer_text(text: str) -> str:
    """A constrained answer as the interceptor reads it: ``{"answer": ...}`` becomes its text; a call is
    left as its JSON object (the interceptor recovers it as a call written as text); anything else (a
    server that ignored the constraint) is left as it came."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict) and isinstance(value.get("answer"), str) and "name" not in value:
        return value["answer"]
    return text


#: The answer's stand-in in :data:`CALLING_RULE`. Gemma 3 270M wrote it back as its answer in 8 of 44
#: answered questions (bench/bridge_bench.py, 2026-12-02): see :func:`is_placeholder`.
ANSWER_PLACEHOLDER = "<your answer in plain words>"
CALLING_RULE = (
    "Your whole reply is one JSON object. To call a tool, reply "
    '{"name": "<tool name>", "arguments": {<its arguments>}}; the result comes back in the next message. '
    f'To answer the user, reply {{"answer": "{ANSWER_PLACEHOLDER}"}}. '
    "Call a tool whenever the answer depends on data the tools provide."
)
#: Said to a model whose answer was the placeholder (once per question; a second time, the bridge gives up).
PLACEHOLDER_CORRECTION = (
    f'"{ANSWER_PLACEHOLDER}" only shows where the answer goes. Reply {{"answer": ...}} with the answer '
    "itself, from the tool results above."
)


def is_placeholder(text: str) -> bool:
    """Whether an answer says nothing: empty, an ellipsis, or :data:`ANSWER_PLACEHOLDER` copied back,
    whole or in part (with or without its brackets: told once, Gemma wrote "in plain words")."""
    bare = " ".join(text.strip().strip("\"'`<>[]{}().").lower().split())
    stand_in = ANSWER_PLACEHOLDER.strip("<>").lower()
    return bare in ("", "...", "…") or (" " in bare and bare in stand_in)  # two words or more of it


DECISION = "Name the tool to call for the last question."
"""The decision step's question, added after the conversation for that one request (never kept). The
schema offers every tool and :data:`IN_WORDS`. Three phrasings were tried with SmolLM2-135M on 10 of the
repository's questions: the two that named the answer-in-words option in the text had it chosen 10 and 9
times of 10 (0 and 1 right tools); this one, 0 times (2 right tools). After a result, a model that calls
again is stopped by the repeat rule (an answer-only turn follows)."""
