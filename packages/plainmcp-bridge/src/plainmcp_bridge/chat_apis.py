"""The two chat APIs' shapes: Ollama's native ``/api/chat`` and the OpenAI-compatible ``/v1/chat/completions``.

The bridge keeps its conversation in one neutral form and renders it for the API in use; answers (whole
or streamed) are read back into a :class:`ModelTurn`. The differences that matter:

- Ollama sends a call's ``arguments`` as a JSON object and takes a tool result as ``{"role": "tool",
  "tool_name"}``; it streams newline-delimited JSON, ending with ``"done": true``.
- OpenAI-compatible servers send ``arguments`` as a string holding JSON, give each call an ``id`` that the
  result must name (``tool_call_id``), and stream server-sent events whose ``delta.tool_calls`` fragments
  are joined by ``index`` until ``data: [DONE]``.

Neutral messages: ``{"role": "system"|"user", "content"}``, ``{"role": "assistant", "content",
"calls": [{"id", "name", "arguments"}]}``, ``{"role": "tool", "call_id", "name", "content"}``. No I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .recover import STRING_ARGUMENTS, ProposedCall
from .shapes import mapping

OLLAMA = "ollama"
OPENAI = "openai"
APIS = (OLLAMA, OPENAI)
#: ``--option`` keys that Ollama takes beside ``options``, in the request itself.
OLLAMA_REQUEST_FIELDS = frozenset({"keep_alive", "think"})
#: Longest tool description sent to the model (OpenAI's own limit for a function's description).
MAX_DESCRIPTION = 1024


class ModelError(Exception):
    """The model endpoint failed in a way the user should hear about (the message says how, in one line)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class ModelTurn:
    """One answer of the model: its text, the structured calls as sent, and why it stopped."""

    text: str = ""
    calls: list[ProposedCall] = field(default_factory=list)
    finish: str | None = None


def path_for(api: str) -> str:
    return "/api/chat" if api == OLLAMA else "/chat/completions"


def request_body(
    api: str,
    model: str,
    messages: Iterable[Mapping[str, Any]],
    tools: Iterable[Mapping[str, Any]],
    *,
    stream: bool,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The request for one turn. Tools go out with their ``inputSchema`` verbatim as ``parameters``, their
    descriptions cut at :data:`MAX_DESCRIPTION` characters (a server's text is not ours to flood the context)."""
    rendered = [render_message(api, message) for message in messages]
    body: dict[str, Any] = {"model": model, "messages": rendered, "stream": stream}
    if listed := functions(tools):
        body["tools"] = listed
    if api == OLLAMA:
        # keep_alive and think are fields of the request itself; the rest are the model's options.
        model_options = {key: value for key, value in (options or {}).items() if key not in OLLAMA_REQUEST_FIELDS}
        body.update({key: value for key, value in (options or {}).items() if key in OLLAMA_REQUEST_FIELDS})
        if model_options:
            body["options"] = model_options
    else:
        body.update(options or {})  # temperature, max_tokens...: top-level fields in this API
    return body


def functions(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """MCP tool listings as the APIs' ``tools`` (the same shape in both)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool["name"],
                "description": str(tool.get("description") or "")[:MAX_DESCRIPTION],
                "parameters": tool.get("inputSchema") or {"type": "object"},
            },
        }
        for tool in tools
    ]


def render_message(api: str, message: Mapping[str, Any]) -> dict[str, Any]:
    role = message["role"]
    if role == "assistant" and message.get("calls"):
        calls = message["calls"]
        if api == OLLAMA:
            return {
                "role": "assistant",
                "content": message.get("content") or "",
                "tool_calls": [
                    {"function": {"name": str(call["name"]), "arguments": _as_object(call["arguments"])}}
                    for call in calls
                ],
            }
        return {
            "role": "assistant",
            "content": message.get("content") or None,
            "tool_calls": [
                {
                    "id": call["id"],
                    "type": "function",
                    "function": {"name": str(call["name"]), "arguments": _as_text(call["arguments"])},
                }
                for call in calls
            ],
        }
    if role == "tool":
        if api == OLLAMA:
            return {"role": "tool", "content": message["content"], "tool_name": message["name"]}
        return {"role": "tool", "content": message["content"], "tool_call_id": message["call_id"]}
    return {"role": role, "content": message.get("content") or ""}


def _as_object(arguments: Any) -> dict[str, Any]:
    # Ollama only takes an object here: a string the model sent is replayed parsed, or empty (the repair
    # message that follows says what was wrong with it).
    if isinstance(arguments, dict):
        return arguments
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments)
        except (ValueError, RecursionError):
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


def _as_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments if arguments is not None else {})


def error_text(api: str, body: bytes) -> str:
    """The message of an error answer (``{"error": "..."}`` or ``{"error": {"message"}}``), cut short."""
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        document = None
    error = document.get("error") if isinstance(document, dict) else None
    if isinstance(error, dict):
        error = error.get("message")
    text = error if isinstance(error, str) else body.decode("utf-8", "replace")
    text = " ".join(text.split())
    return text[:300] + ("..." if len(text) > 300 else "")


# ----------------------------------------------------------------------------------- whole answers


def read_answer(api: str, document: Any) -> ModelTurn:
    """A non-streamed answer. Raises ModelError when it is not the API's shape."""
    if not isinstance(document, dict):
        raise ModelError("the model's answer is not a JSON object")
    if "error" in document:
        raise ModelError(error_text(api, json.dumps(document).encode()))
    if api == OLLAMA:
        message = document.get("message")
        finish = document.get("done_reason")
    else:
        choices = document.get("choices")
        first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        message = first.get("message") if first else None
        finish = first.get("finish_reason") if first else None
    if not isinstance(message, dict):
        raise ModelError("the model's answer has no message")
    content = message.get("content")
    return ModelTurn(content if isinstance(content, str) else "", _calls(api, message.get("tool_calls")), finish)


def _calls(api: str, tool_calls: Any, first: int = 0) -> list[ProposedCall]:
    """The calls of one message (or one streamed chunk). A call without an id is numbered from ``first``:
    Ollama (before 0.12.10, and servers imitating it) streams calls in chunks of their own without ids,
    and each call's answer is matched to it by id."""
    calls: list[ProposedCall] = []
    source = STRING_ARGUMENTS if api == OPENAI else "structured"
    for item in tool_calls if isinstance(tool_calls, list) else []:
        if not isinstance(item, dict):
            continue
        function = mapping(item.get("function"))
        number = first + len(calls)
        call_id = item.get("id") if isinstance(item.get("id"), str) and item.get("id") else f"call_{number}"
        calls.append(ProposedCall(function.get("name"), function.get("arguments"), id=call_id, source=source))
    taken = {call.id for call in calls}
    if len(taken) < len(calls):  # the same id twice in one answer: each call keeps one of its own
        calls = [
            ProposedCall(call.name, call.arguments, id=f"{call.id}_{index}", source=call.source)
            for index, call in enumerate(calls)
        ]
    return calls


# -------------------------------------------------------------------------------------- streaming


class StreamReader:
    """Reads a streamed answer line by line (NDJSON for Ollama, SSE for OpenAI-compatible).

    ``on_text`` gets each content fragment as it arrives. :attr:`done` turns True at the end marker;
    :meth:`turn` gives the whole answer. Raises ModelError for an error event or a line that is not JSON.
    """

    def __init__(self, api: str, on_text: Callable[[str], Any] | None = None) -> None:
        self.api = api
        self.on_text = on_text
        self.done = False
        self._text: list[str] = []
        self._calls: list[ProposedCall] = []
        self._fragments: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        #: True once any content reached ``on_text`` (then a failed answer cannot be retried).
        self.started = False

    def feed(self, line: str) -> None:
        if self.done:
            return
        if self.api == OLLAMA:
            if line.strip():
                self._ollama(_json_line(line))
            return
        if not line.startswith("data:"):
            return  # comments, event names, blank separators
        payload = line[5:].strip()
        if payload == "[DONE]":
            self.done = True
            return
        self._openai(_json_line(payload))

    def _emit(self, text: Any) -> None:
        if isinstance(text, str) and text:
            self._text.append(text)
            self.started = True
            if self.on_text is not None:
                self.on_text(text)

    def _ollama(self, chunk: dict[str, Any]) -> None:
        if chunk.get("error"):
            raise ModelError(error_text(OLLAMA, json.dumps(chunk).encode()))
        message = mapping(chunk.get("message"))
        self._emit(message.get("content"))
        self._calls.extend(_calls(OLLAMA, message.get("tool_calls"), first=len(self._calls)))
        if chunk.get("done") is True:
            self._finish = chunk.get("done_reason")
            self.done = True

    def _openai(self, chunk: dict[str, Any]) -> None:
        if chunk.get("error"):
            raise ModelError(error_text(OPENAI, json.dumps(chunk).encode()))
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            return  # a usage-only chunk
        delta = mapping(choices[0].get("delta"))
        self._emit(delta.get("content"))
        for fragment in delta.get("tool_calls") or ():
            if isinstance(fragment, dict):
                self._join(fragment)
        if choices[0].get("finish_reason"):
            self._finish = choices[0]["finish_reason"]

    def _join(self, fragment: dict[str, Any]) -> None:
        index = fragment.get("index", len(self._fragments))
        call = self._fragments.setdefault(
            index if isinstance(index, int) else 0, {"id": None, "name": "", "arguments": ""}
        )
        if isinstance(fragment.get("id"), str):
            call["id"] = fragment["id"]
        function = mapping(fragment.get("function"))
        if isinstance(function.get("name"), str):
            call["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            call["arguments"] += function["arguments"]

    def turn(self) -> ModelTurn:
        calls = list(self._calls)
        for index in sorted(self._fragments):
            call = self._fragments[index]
            calls.append(
                ProposedCall(call["name"], call["arguments"], id=call["id"] or f"call_{index}", source=STRING_ARGUMENTS)
            )
        return ModelTurn("".join(self._text), calls, self._finish)


def _json_line(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # nested past the parser's depth: not JSON we take
        raise ModelError("the model endpoint sent a line that is not JSON") from None
    if not isinstance(value, dict):
        raise ModelError("the model endpoint sent a line that is not a JSON object")
    return value
