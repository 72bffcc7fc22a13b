"""Recover tool calls that a model wrote as text instead of a structured call.

Small local models without native tool support (and some with it) write the call into their answer:
``<tool_call>{...}</tool_call>`` tags (Hermes, Qwen), a fenced JSON block, or a bare JSON object with a
name and arguments. This module finds those and nothing else: prose that merely contains braces is
left alone, and the text around a recovered call is kept for the user. No I/O.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: Text longer than this is not searched (a model's answer; a bound keeps a hostile one cheap).
MAX_TEXT = 64 * 1024
#: How many ``{`` positions a bare-object search tries before it stops.
MAX_STARTS = 64

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCED = re.compile(r"```[ \t]*(?:json|tool_call|tool)?[ \t]*\n(.*?)\n?```", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()
#: Reasoning sections (DeepSeek-R1, Qwen3 and others write them into the content); an unclosed one runs to the end.
_THINKING = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)


#: The ``source`` of a structured call from an API that sends ``arguments`` as a JSON string by design.
STRING_ARGUMENTS = "structured, arguments as JSON text"


@dataclass(frozen=True)
class ProposedCall:
    """One tool call as the model proposed it, before any check.

    ``name`` and ``arguments`` are whatever the model sent (any JSON value, or a string holding
    JSON for ``arguments``); ``id`` is the API's call id when there is one; ``from_text`` says the
    call was recovered from the model's text.
    """

    name: Any
    arguments: Any = None
    id: str | None = None
    from_text: bool = False
    #: The shape it was recovered from ("tags", "fenced block", "JSON object"), for the report.
    source: str = field(default="structured", compare=False)


def recover_calls(text: str) -> tuple[list[ProposedCall], str]:
    """The calls written in ``text``, and the text with those calls taken out.

    Tried in order, the first kind that yields a call wins: ``<tool_call>`` tags (a missing closing
    tag at the end is tolerated: models stop there), fenced blocks, then bare JSON objects. A JSON
    value counts as a call when it is an object with a string ``name`` and an ``arguments`` or
    ``parameters`` member, or an OpenAI-style ``{"function": {...}}`` wrapper of one; a list of
    such objects is several calls. Inside tags, a ``name`` alone is enough (the tags say it is a call).
    ``<think>`` sections are not searched, and are left out of the text returned.
    """
    if not text or len(text) > MAX_TEXT:
        return [], text
    # A reasoning model drafts and discards calls while it thinks: only what it says after counts.
    text = _THINKING.sub("", text)
    for finder in (_tagged, _fenced, _bare):
        calls, rest = finder(text)
        if calls:
            return calls, rest.strip()
    return [], text


def first_call(text: str) -> tuple[ProposedCall | None, str, int]:
    """The first call written in ``text``, the text up to its end (the call included), and how many more
    calls followed.

    What a model writes after its first call is not its to write: it has no result yet, so later calls
    and the "results" around them are made up (a small model goes on with the dialogue it imagines,
    repeating its call). Only the first call runs; the rest of the text is cut. Same search as
    :func:`recover_calls`.
    """
    if not text or len(text) > MAX_TEXT:
        return None, text, 0
    text = _THINKING.sub("", text)
    for finder in (_tagged, _fenced, _bare):
        calls, spans = finder(text, spans_only=True)
        if calls:
            return calls[0], text[: spans[0][1]].strip(), len(calls) - 1
    return None, text, 0


def _tagged(text: str, *, spans_only: bool = False) -> tuple[list[ProposedCall], Any]:
    calls: list[ProposedCall] = []
    spans: list[tuple[int, int]] = []
    for match in _TAGGED.finditer(text):
        value = _loads(match.group(1))
        found = _calls_in(value, "tags", name_alone=True)
        if found:
            calls.extend(found)
            spans.append(match.span())
    return calls, spans if spans_only else _without(text, spans)


def _fenced(text: str, *, spans_only: bool = False) -> tuple[list[ProposedCall], Any]:
    calls: list[ProposedCall] = []
    spans: list[tuple[int, int]] = []
    for match in _FENCED.finditer(text):
        found = _calls_in(_loads(match.group(1)), "fenced block")
        if found:
            calls.extend(found)
            spans.append(match.span())
    return calls, spans if spans_only else _without(text, spans)


def _bare(text: str, *, spans_only: bool = False) -> tuple[list[ProposedCall], Any]:
    calls: list[ProposedCall] = []
    spans: list[tuple[int, int]] = []
    position = 0
    for _ in range(MAX_STARTS):
        start = _next_start(text, position)
        if start < 0:
            break
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        found = _calls_in(value, "JSON object")
        if found:
            calls.extend(found)
            spans.append((start, end))
        # A JSON value that is not a call is data: what is nested in it is data too.
        position = end
    return calls, spans if spans_only else _without(text, spans)


def _next_start(text: str, position: int) -> int:
    braces = [index for index in (text.find("{", position), text.find("[", position)) if index >= 0]
    return min(braces) if braces else -1


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _calls_in(value: Any, source: str, *, name_alone: bool = False) -> list[ProposedCall]:
    items = value if isinstance(value, list) else [value]
    calls = [_call_from(item, source, name_alone) for item in items]
    # A list counts only when every member is a call: otherwise it is data, not calls.
    if not items or any(call is None for call in calls):
        return []
    return [call for call in calls if call is not None]


def _call_from(item: Any, source: str, name_alone: bool) -> ProposedCall | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str):
        return None
    for key in ("arguments", "parameters"):
        if key in item:
            return ProposedCall(name=name, arguments=item[key], from_text=True, source=source)
    if name_alone:
        return ProposedCall(name=name, arguments=None, from_text=True, source=source)
    return None


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return text
