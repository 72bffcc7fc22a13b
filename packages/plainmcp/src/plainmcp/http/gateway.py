"""A plain JSON-RPC gateway to a server's tools, for runtimes that have no MCP client.

``GET <path>/server-info`` describes the server and its tools (with their input schemas);
``POST <path>/call`` takes ``{"jsonrpc": "2.0", "id": 1, "method": "<tool>", "params": {...}}``
and answers with the tool's structured result (else its text) or a JSON-RPC error. It is a
convenience next to MCP, not a replacement: no progress, logs, sampling or elicitation.

A call runs exactly as an MCP ``tools/call`` does: a 2026-07-28 request with an empty client
capability set, through a connection and session of its own (the same validation, the same one
place where exceptions become errors, the same metrics). So the SEP-2243 ``Mcp-Param-*`` headers
of a tool's annotated arguments are checked as on Streamable HTTP (``-32020``, 400), and arguments
nested past :data:`MAX_DEPTH` levels are an invalid request (400) before anything walks them.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

import anyio

from .. import __version__, protocol
from ..apps import app_only, without_apps
from ..connection import ServerConnection
from ..errors import ErrorCode, MCPError
from ..jsonrpc import Batch, Decoded, ErrorResponse, Invalid, Message, Request, Response, decode
from ..param_headers import check_request_headers
from ..session import Observer, Outbound
from ..versions import V2026_07_28
from .asgi import (
    Receive,
    Scope,
    Send,
    error_payload,
    header,
    read_json_body,
    repeated_header,
    respond,
    respond_json,
    wait_disconnect,
)

if TYPE_CHECKING:
    from ..server import Server
    from ..tools import Tool

logger = logging.getLogger(__name__)

#: A tool that reported a failure, in JSON-RPC's range for implementation-defined server errors.
TOOL_ERROR = ErrorCode.SERVER_ERROR
_CALL_ID = 1
#: Levels of nesting a call's arguments may have: what orjson can encode, and far below where
#: walking them (validation, error messages) would exhaust Python's stack.
MAX_DEPTH = 255


class Gateway:
    """ASGI app for ``<path>/server-info`` and ``<path>/call`` (``path`` is the MCP endpoint's)."""

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        max_body_bytes: int = 4 * 1024 * 1024,
        observer: Observer | None = None,
    ) -> None:
        self.server = server
        base = path.rstrip("/")
        self.info_path = f"{base}/server-info"
        self.call_path = f"{base}/call"
        self.max_body_bytes = max_body_bytes
        self.observer = observer

    def handles(self, path: str) -> bool:
        return path in (self.info_path, self.call_path)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["path"] == self.info_path:
            if scope["method"] != "GET":
                await respond(send, 405, headers=[("allow", "GET")])
                return
            await respond_json(send, 200, self.server_info())
        elif scope["method"] != "POST":
            await respond(send, 405, headers=[("allow", "POST")])
        else:
            await self._call(scope, receive, send)

    def server_info(self) -> dict[str, Any]:
        info = self.server.server_info()
        info.setdefault("description", None)
        # Its callers take up no extension: MCP Apps' app-only tools and view metadata are not theirs.
        info["tools"] = [without_apps(tool.to_dict()) for tool in self.server.tools.values() if not app_only(tool)]
        return info

    async def _call(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_json_body(scope, receive, send, self.max_body_bytes)
        if body is None:
            return
        decoded = decode(body)
        if not isinstance(decoded, Request):
            await respond_json(send, 400, _not_a_request(decoded))
            return
        if _deeper_than(decoded.params, MAX_DEPTH):
            message = f"Invalid Request: arguments nested more than {MAX_DEPTH} levels deep"
            await respond_json(send, 400, error_payload(ErrorCode.INVALID_REQUEST, message, decoded.id))
            return
        tool = self.server.tools.get(decoded.method)
        if tool is not None and app_only(tool):
            tool = None  # as over MCP for a client without the Apps extension: no such tool
        arguments = decoded.params or {}
        error: dict[str, object] | None
        if tool is None:
            error = {"code": int(ErrorCode.METHOD_NOT_FOUND), "message": f"Unknown tool: {decoded.method}"}
        elif (mismatch := _header_mismatch(scope, tool, arguments)) is not None:
            self._observe_refusal(decoded.method, arguments, mismatch.to_dict())
            await respond_json(send, 400, {"jsonrpc": "2.0", "id": decoded.id, "error": mismatch.to_dict()})
            return
        else:
            problems = tool.input_validator.field_errors(arguments)
            error = (
                {
                    "code": int(ErrorCode.INVALID_PARAMS),
                    "message": f"Invalid arguments for tool {json.dumps(tool.name)}",
                    "data": {"errors": problems},
                }
                if problems
                else None
            )
        if error is not None:
            self._observe_refusal(decoded.method, arguments, error)
            await respond_json(send, 200, {"jsonrpc": "2.0", "id": decoded.id, "error": error})
            return
        assert tool is not None
        reply = await self._run(tool.name, arguments, receive)
        if reply is not None:
            await respond_json(send, 200, _answer(decoded.id, reply))

    def _observe_refusal(self, name: str, arguments: dict[str, Any], error: dict[str, Any]) -> None:
        """Count a call refused here (unknown tool, bad arguments) as the call it stands for."""
        if self.observer is not None:
            request = Request(_CALL_ID, protocol.TOOLS_CALL, {"name": name, "arguments": arguments})
            self.observer(request, ErrorResponse(_CALL_ID, error), 0.0)

    async def _run(self, name: str, arguments: dict[str, Any], receive: Receive) -> Message | None:
        """The tool's ``tools/call`` reply; None when the client went away first (then it is cancelled)."""
        input_send, input_receive = anyio.create_memory_object_stream[Decoded](1)
        output_send, output_receive = anyio.create_memory_object_stream[Outbound](16)
        connection = ServerConnection(
            self.server, input_receive, output_send, shutdown_grace=1.0, observer=self.observer
        )
        meta = {
            protocol.META_PROTOCOL_VERSION: V2026_07_28,
            protocol.META_CLIENT_CAPABILITIES: {},
            protocol.META_CLIENT_INFO: {"name": "plainmcp-jsonrpc-gateway", "version": __version__},
        }
        request = Request(_CALL_ID, protocol.TOOLS_CALL, {"name": name, "arguments": arguments, "_meta": meta})
        reply: Message | None = None
        with input_send:
            async with anyio.create_task_group() as task_group:
                task_group.start_soon(connection.run)
                task_group.start_soon(_cancel_on_disconnect, receive, task_group.cancel_scope)
                await input_send.send(request)
                async with output_receive:
                    async for outbound in output_receive:
                        message = outbound.message
                        if isinstance(message, (Response, ErrorResponse)) and message.id == _CALL_ID:
                            reply = message
                            break
                task_group.cancel_scope.cancel()
        return reply


def _header_mismatch(scope: Scope, tool: Tool, arguments: Any) -> MCPError | None:
    """SEP-2243, as Streamable HTTP checks it: each annotated argument against its ``Mcp-Param-*``
    header (sent once, present when the argument is, equal to it)."""
    bindings = tool.header_bindings
    if not bindings or not isinstance(arguments, dict):
        return None
    repeated = repeated_header(scope, [binding.header for binding in bindings])
    if repeated is not None:
        return MCPError(ErrorCode.HEADER_MISMATCH, f"Header mismatch: the {repeated} header was sent more than once")
    try:
        check_request_headers(bindings, arguments, lambda name: header(scope, name))
    except MCPError as mismatch:
        return mismatch
    return None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists and objects more than ``limit`` levels (walked without recursion)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            child
            for item in level
            if isinstance(item, (dict, list))
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return False
    return True


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    await wait_disconnect(receive)
    scope.cancel()


def _not_a_request(decoded: Decoded) -> dict[str, Any]:
    if isinstance(decoded, Invalid) and decoded.reply is not None:
        return decoded.reply.to_dict()
    if isinstance(decoded, Batch):
        return error_payload(ErrorCode.INVALID_REQUEST, "Invalid Request: one call per POST (no batches)")
    return error_payload(
        ErrorCode.INVALID_REQUEST, 'Invalid Request: a call needs an "id" (notifications are not answered)'
    )


def _answer(request_id: Any, reply: Message) -> dict[str, Any]:
    """The gateway's answer for the ``tools/call`` reply: the tool's value, or an error."""
    if isinstance(reply, ErrorResponse):
        return {"jsonrpc": "2.0", "id": request_id, "error": reply.error}
    result = reply.result if isinstance(reply, Response) and isinstance(reply.result, dict) else {}
    listed = result.get("content")
    content: list[Any] = listed if isinstance(listed, list) else []
    texts = [block.get("text") for block in content if isinstance(block, dict) and block.get("type") == "text"]
    if result.get("resultType") == "input_required":
        return error_payload(
            TOOL_ERROR, "This tool needs input from an MCP client (sampling, elicitation or roots)", request_id
        )
    if result.get("isError") is True:
        message = "\n".join(text for text in texts if isinstance(text, str)) or "Tool error"
        return error_payload(TOOL_ERROR, message, request_id, {"content": content})
    if "structuredContent" in result:
        value: Any = result["structuredContent"]
    elif len(texts) == len(content):
        value = "\n".join(text for text in texts if isinstance(text, str))
    else:
        value = content  # images, audio, resources: the content blocks as MCP has them
    return {"jsonrpc": "2.0", "id": request_id, "result": value}
