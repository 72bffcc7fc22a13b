"""A stand-in model server on 127.0.0.1 that plays scripted turns over both chat APIs (stdlib only).

For tests, the demo and trying the bridge without a GPU. It answers ``POST /api/chat`` (Ollama) and
``POST /v1/chat/completions`` (OpenAI-compatible), streamed or not as the request asks, with the next
reply of its script. A reply is a dict:

- ``{"text": "...", "calls": [{"name": ..., "arguments": ...}]}``: an answer; either part may be absent.
  ``arguments`` go out as given (an object; for the OpenAI API a string is sent verbatim, as small models
  do, and an object is serialised).
- ``"finish": "length"``: the stop reason sent (default ``stop``, or ``tool_calls`` with calls);
  ``"split_calls": true``: Ollama's stream sends each call in a chunk of its own (as Ollama before
  0.12.10 did, without ids).
- ``{"status": 429, "error": "...", "retry_after": "1"}``: an error answer in the API's error shape.
- ``"delay"``: seconds to wait before answering; ``"chunk_delay"``: seconds between streamed chunks.
- ``{"flood": n}``: answer 200 with ``n`` bytes of one endless line (a hostile endpoint);
  :attr:`StandInModel.flood_sent` counts what the client accepted before it hung up.
- ``{"drop": true}``: close the connection without answering; ``"cut_after": n``: stream ``n`` lines
  of the answer, then close the connection.

When the script runs out, the answer is a 400 error saying so (never retried, so a test notices).
Every request body is kept in :attr:`StandInModel.requests`; the tests check the replies against the
official clients' types (``ollama``, ``openai``) so this stand-in cannot drift from the real APIs.

Run it by hand: ``python -m plainmcp_bridge.standin SCRIPT.json [--port N]`` (a JSON list of replies).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODEL = "standin"
#: Characters of text per streamed chunk.
CHUNK = 12


class StandInModel:
    """The server, as a context manager: ``with StandInModel(script) as model: model.url``."""

    def __init__(self, script: list[dict[str, Any]] | None = None, *, port: int = 0) -> None:
        self.script: list[dict[str, Any]] = list(script or [])
        self.requests: list[tuple[str, dict[str, Any]]] = []
        #: Streamed answers the client stopped reading (cancelled) before their end.
        self.disconnects = 0
        self.flood_sent = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), _handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        """The base URL; Ollama's API is under it, the OpenAI-compatible one under ``url + "/v1"``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, *replies: dict[str, Any]) -> None:
        with self._lock:
            self.script.extend(replies)

    def next_reply(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        with self._lock:
            self.requests.append((path, body))
            return self.script.pop(0) if self.script else None

    def __enter__(self) -> StandInModel:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(model: StandInModel) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read stderr
            pass

        def do_POST(self) -> None:
            api = {"/api/chat": "ollama", "/v1/chat/completions": "openai", "/chat/completions": "openai"}.get(
                self.path
            )
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = None
            if api is None or not isinstance(body, dict):
                self._send_json(404 if api is None else 400, {"error": "not found" if api is None else "bad JSON"})
                return
            reply = model.next_reply(self.path, body)
            if reply is None:
                reply = {"status": 400, "error": "the stand-in's script is exhausted"}
            time.sleep(float(reply.get("delay", 0)))
            if reply.get("drop"):
                self.close_connection = True
                self.connection.shutdown(2)
                return
            if "flood" in reply:
                self._flood(int(reply["flood"]))
                return
            if "status" in reply:
                self._send_error(api, reply)
                return
            if body.get("stream", api == "ollama"):  # Ollama streams unless told not to
                self._stream(api, reply)
            else:
                self._send_json(200, whole_answer(api, reply))

        def _flood(self, size: int) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            block = b"x" * 65536
            try:
                for _ in range(size // len(block)):
                    self.wfile.write(block)
                    with model._lock:
                        model.flood_sent += len(block)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _send_error(self, api: str, reply: dict[str, Any]) -> None:
            message = str(reply.get("error", "error"))
            document: dict[str, Any] = (
                {"error": message}
                if api == "ollama"
                else {"error": {"message": message, "type": "server_error", "code": reply["status"]}}
            )
            headers = {"Retry-After": str(reply["retry_after"])} if "retry_after" in reply else {}
            self._send_json(int(reply["status"]), document, headers)

        def _send_json(self, status: int, document: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, api: str, reply: dict[str, Any]) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson" if api == "ollama" else "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            delay = float(reply.get("chunk_delay", 0))
            cut = reply.get("cut_after")
            try:
                for count, line in enumerate(stream_lines(api, reply)):
                    if cut is not None and count >= cut:
                        break
                    self.wfile.write(line.encode())
                    self.wfile.flush()
                    time.sleep(delay)
            except (BrokenPipeError, ConnectionResetError):
                with model._lock:
                    model.disconnects += 1

    return Handler


# ------------------------------------------------------------------------------------ the shapes


def _openai_calls(reply: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": call.get("id", f"call_{index}"),
            "type": "function",
            "function": {"name": call["name"], "arguments": _arguments_text(call.get("arguments", {}))},
        }
        for index, call in enumerate(reply.get("calls") or ())
    ]


def _finish(reply: dict[str, Any]) -> str:
    return str(reply.get("finish") or ("tool_calls" if reply.get("calls") else "stop"))


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def whole_answer(api: str, reply: dict[str, Any]) -> dict[str, Any]:
    """A non-streamed answer in the API's shape."""
    text = reply.get("text", "")
    calls = reply.get("calls") or []
    if api == "ollama":
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [
                {"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in calls
            ]
        return {
            "model": MODEL,
            "created_at": _now(),
            "message": message,
            "done": True,
            "done_reason": reply.get("finish", "stop"),
            **_ollama_counts(text),
        }
    message = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = _openai_calls(reply)
    return {
        "id": "chatcmpl-standin",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(reply)}],
        "usage": {"prompt_tokens": 1, "completion_tokens": max(1, len(text) // 4), "total_tokens": 2},
    }


def stream_lines(api: str, reply: dict[str, Any]) -> Iterator[str]:
    """A streamed answer, line by line (NDJSON for Ollama; SSE events for OpenAI-compatible)."""
    text = reply.get("text", "")
    pieces = [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]
    calls = reply.get("calls") or []
    if api == "ollama":
        for piece in pieces:
            yield (
                json.dumps(
                    {
                        "model": MODEL,
                        "created_at": _now(),
                        "message": {"role": "assistant", "content": piece},
                        "done": False,
                    }
                )
                + "\n"
            )
        tool_calls = [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}} for c in calls]
        for group in [[one] for one in tool_calls] if reply.get("split_calls") else [tool_calls] if calls else []:
            yield (
                json.dumps(
                    {
                        "model": MODEL,
                        "created_at": _now(),
                        "done": False,
                        "message": {"role": "assistant", "content": "", "tool_calls": group},
                    }
                )
                + "\n"
            )
        yield (
            json.dumps(
                {
                    "model": MODEL,
                    "created_at": _now(),
                    "message": {"role": "assistant", "content": ""},
                    "done": True,
                    "done_reason": reply.get("finish", "stop"),
                    **_ollama_counts(text),
                }
            )
            + "\n"
        )
        return

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        chunk = {
            "id": "chatcmpl-standin",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return f"data: {json.dumps(chunk)}\n\n"

    yield event({"role": "assistant", "content": ""})
    for piece in pieces:
        yield event({"content": piece})
    for index, call in enumerate(_openai_calls(reply)):
        arguments = call["function"]["arguments"]
        yield event(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        # The arguments string arrives in fragments, as real servers send it.
        for start in range(0, len(arguments), CHUNK):
            yield event({"tool_calls": [{"index": index, "function": {"arguments": arguments[start : start + CHUNK]}}]})
    yield event({}, _finish(reply))
    yield "data: [DONE]\n\n"


def _ollama_counts(text: str) -> dict[str, int]:
    return {
        "total_duration": 1000,
        "load_duration": 10,
        "prompt_eval_count": 1,
        "prompt_eval_duration": 10,
        "eval_count": max(1, len(text) // 4),
        "eval_duration": 100,
    }


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m plainmcp_bridge.standin", description=__doc__.splitlines()[0])
    parser.add_argument("script", help="a JSON file holding a list of replies")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as file:
        script = json.load(file)
    with StandInModel(script, port=args.port) as model:
        print(model.url, flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
