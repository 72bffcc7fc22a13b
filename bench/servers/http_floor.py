"""Benchmark reference, not an MCP server: the HTTP floor of ``http_bench.py``.

    python bench/servers/http_floor.py PORT

A bare ASGI app under the same uvicorn configuration as the other HTTP servers that answers every
JSON-RPC request with a canned JSON response (``initialize`` gets a session id, ``tools/call``
its ``text`` back, a notification 202, DELETE 204), with no MCP logic at all: what uvicorn (on
httptools and uvloop when installed), loopback TCP and the benchmark's client cost per call. No MCP server can be faster than this
with the same HTTP stack.
"""

import json
import sys

from sdk_http import serve  # this directory is on sys.path when run as a script; no SDK code is used

SESSION_ID = b"http-floor-session"


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await receive()
        await send({"type": "lifespan.startup.complete"})
        await receive()
        await send({"type": "lifespan.shutdown.complete"})
        return
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    if scope["method"] != "POST":
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
        return
    request = json.loads(b"".join(chunks))
    if "id" not in request:
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
        return
    if request["method"] == "initialize":
        result = {
            "protocolVersion": request["params"]["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "http-floor", "version": "1.0.0"},
        }
    else:
        result = {"content": [{"type": "text", "text": request["params"]["arguments"]["text"]}]}
    body = json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": result}, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"mcp-session-id", SESSION_ID),
    ]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


if __name__ == "__main__":
    serve(app, int(sys.argv[1]))
