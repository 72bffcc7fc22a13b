"""JSON-RPC 2.0 messages: parse bytes into message values, serialize message values into bytes.

Sans-I/O and synchronous. A peer's garbage never raises here: :func:`decode` returns an
:class:`Invalid` value carrying the error response to send (or none, for a broken notification,
which is never answered). MCP narrows JSON-RPC in two ways that are enforced here: ids are strings
or integers (never null, never fractional, never booleans), and ``params`` is an object.
"""

from __future__ import annotations

import re
from typing import Any, TypeGuard

from . import json_codec
from .errors import ErrorCode
from .values import Value, set_field

RequestId = str | int

JSONRPC_VERSION = "2.0"
#: Messages one batch may hold: a larger one is refused whole (-32600), before any member is read.
MAX_BATCH = 1000


class Request(Value):
    __slots__ = ("id", "method", "params")
    id: RequestId
    method: str
    params: dict[str, Any] | None

    def __init__(self, id: RequestId, method: str, params: dict[str, Any] | None = None) -> None:
        set_field(self, "id", id)
        set_field(self, "method", method)
        set_field(self, "params", params)

    def to_dict(self) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "id": self.id, "method": self.method}
        if self.params is not None:
            message["params"] = self.params
        return message


class Notification(Value):
    __slots__ = ("method", "params")
    method: str
    params: dict[str, Any] | None

    def __init__(self, method: str, params: dict[str, Any] | None = None) -> None:
        set_field(self, "method", method)
        set_field(self, "params", params)

    def to_dict(self) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION, "method": self.method}
        if self.params is not None:
            message["params"] = self.params
        return message


class Response(Value):
    __slots__ = ("id", "result")
    id: RequestId
    result: Any

    def __init__(self, id: RequestId, result: Any) -> None:
        set_field(self, "id", id)
        set_field(self, "result", result)

    def to_dict(self) -> dict[str, Any]:
        return {"jsonrpc": JSONRPC_VERSION, "id": self.id, "result": self.result}


class ErrorResponse(Value):
    """An error response. ``id`` is None only when the request's id could not be read."""

    __slots__ = ("id", "error")
    id: RequestId | None
    error: dict[str, Any]

    def __init__(self, id: RequestId | None, error: dict[str, Any]) -> None:
        set_field(self, "id", id)
        set_field(self, "error", error)

    @property
    def code(self) -> int:
        return self.error["code"]

    def to_dict(self) -> dict[str, Any]:
        return {"jsonrpc": JSONRPC_VERSION, "id": self.id, "error": self.error}


Message = Request | Notification | Response | ErrorResponse


class Invalid(Value):
    """Input that is not a valid message. ``reply`` is the error response to send, if any."""

    __slots__ = ("reply", "reason")
    reply: ErrorResponse | None
    reason: str

    def __init__(self, reply: ErrorResponse | None, reason: str) -> None:
        set_field(self, "reply", reply)
        set_field(self, "reason", reason)


class Batch(Value):
    """A JSON array of messages, as 2025-03-26 allows. Whether it is accepted is the session's call."""

    __slots__ = ("items",)
    items: tuple[Message | Invalid, ...]

    def __init__(self, items: tuple[Message | Invalid, ...]) -> None:
        set_field(self, "items", items)


Decoded = Message | Batch | Invalid


def error_response(id: RequestId | None, code: int, message: str, data: Any = None) -> ErrorResponse:
    error: dict[str, Any] = {"code": int(code), "message": message}
    if data is not None:
        error["data"] = data
    return ErrorResponse(id, error)


# A \uD800-\uDFFF escape: the only way a lone surrogate gets into parsed text (UTF-8 cannot carry one).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _may_hold_lone_surrogate(data: bytes | str) -> bool:
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    return b"\\u" in raw and _SURROGATE_ESCAPE.search(raw) is not None  # the plain find is the fast path


def decode(data: bytes | str) -> Decoded:
    """Parse one line (or HTTP body) into a message, a batch or an :class:`Invalid` value.

    A request whose params hold a lone surrogate (a ``\\ud800`` escape without its pair: not
    Unicode text, and no handler could encode it) is refused with ``-32602``.
    """
    try:
        obj = json_codec.loads(data)
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return Invalid(error_response(None, ErrorCode.PARSE_ERROR, "Parse error"), "not JSON")
    # Paired escapes (emoji from clients that escape non-ASCII) pass the full check below.
    check = _may_hold_lone_surrogate(data)
    if isinstance(obj, list):
        if not obj:
            return Invalid(
                error_response(None, ErrorCode.INVALID_REQUEST, "Invalid Request: empty batch"),
                "empty batch",
            )
        if len(obj) > MAX_BATCH:
            return Invalid(
                error_response(
                    None,
                    ErrorCode.INVALID_REQUEST,
                    f"Invalid Request: a batch holds at most {MAX_BATCH} messages; this one has {len(obj)}",
                ),
                "batch too large",
            )
        return Batch(tuple(classify(item, check) for item in obj))
    return classify(obj, check)


def is_id(value: Any) -> TypeGuard[str | int]:
    """Whether ``value`` can be a request id in MCP: a string or an integer (never a bool)."""
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _invalid(obj: dict[str, Any], reason: str) -> Invalid:
    request_id = obj.get("id")
    return Invalid(
        error_response(
            request_id if is_id(request_id) else None,
            ErrorCode.INVALID_REQUEST,
            f"Invalid Request: {reason}",
        ),
        reason,
    )


def classify(obj: Any, check_surrogates: bool = False) -> Message | Invalid:
    """Turn one parsed JSON value into a message, or an :class:`Invalid` value saying why not
    (``check_surrogates``: look for lone surrogates in a request's params)."""
    if not isinstance(obj, dict):
        return Invalid(
            error_response(None, ErrorCode.INVALID_REQUEST, "Invalid Request: not an object"),
            "not an object",
        )
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        if "method" in obj and "id" not in obj:
            return Invalid(None, 'notification without "jsonrpc": "2.0"')
        return _invalid(obj, 'the "jsonrpc" member must be "2.0"')
    if "method" in obj:
        message = _classify_call(obj)
        if check_surrogates and isinstance(message, Request) and message.params and has_lone_surrogate(message.params):
            return Invalid(
                error_response(
                    message.id,
                    ErrorCode.INVALID_PARAMS,
                    "Invalid params: a string holds a lone surrogate escape (\\ud800-\\udfff without its pair); "
                    "send Unicode text",
                ),
                "lone surrogate",
            )
        return message
    return _classify_response(obj)


def has_lone_surrogate(value: Any) -> bool:
    """Whether a parsed JSON value holds a string (or an object key) with a lone surrogate."""
    pending = [value]
    while pending:  # a loop, not recursion: the value may be nested as deep as the parser allows
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


def _classify_call(obj: dict[str, Any]) -> Message | Invalid:
    method = obj["method"]
    params = obj.get("params")
    is_request = "id" in obj
    if "result" in obj or "error" in obj:
        reason = "a message cannot carry both a method and a result or error"
    elif not isinstance(method, str):
        reason = '"method" must be a string'
    elif "params" in obj and not isinstance(params, dict):
        reason = '"params" must be an object'
    elif is_request and not is_id(obj["id"]):
        reason = '"id" must be a string or an integer'
    elif is_request:
        return Request(obj["id"], method, params)
    else:
        return Notification(method, params)
    if not is_request:
        return Invalid(None, reason)  # a notification is never answered, not even with an error
    return _invalid(obj, reason)


def _classify_response(obj: dict[str, Any]) -> Message | Invalid:
    if "id" not in obj:
        return _invalid(obj, 'a message needs a "method" or an "id"')
    request_id = obj["id"]
    has_result, has_error = "result" in obj, "error" in obj
    if has_result == has_error:
        return _invalid(obj, 'a response needs exactly one of "result" and "error"')
    if has_result:
        if not is_id(request_id):
            return _invalid(obj, '"id" must be a string or an integer')
        return Response(request_id, obj["result"])
    error = obj["error"]
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), int)
        or isinstance(error.get("code"), bool)
        or not isinstance(error.get("message"), str)
    ):
        return _invalid(obj, '"error" must be an object with an integer "code" and a string "message"')
    if request_id is not None and not is_id(request_id):
        return _invalid(obj, '"id" must be a string, an integer or null')
    return ErrorResponse(request_id, error)


def encode(message: Message | list[Message]) -> bytes:
    """Serialize compactly as UTF-8, with no newline inside. Raises ValueError/TypeError on values
    JSON cannot carry (NaN, sets, objects)."""
    return json_codec.dumps([m.to_dict() for m in message] if isinstance(message, list) else message.to_dict())
