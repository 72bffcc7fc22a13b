"""A raw-bytes stdio harness for one server subprocess: write lines, read lines with a timeout.

Reading happens on background threads (stdout into a queue of lines, stderr into a buffer, so a
chatty server never blocks on a full pipe). Every wait is bounded; :meth:`WireServer.kill` ends the
process and is idempotent.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

DEFAULT_TIMEOUT = 10.0
PARSE_ERROR_LINE = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}'


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_protocol_line(line: bytes) -> dict[str, Any]:
    """Parse one stdout line and check it is a single JSON-RPC 2.0 message; return it."""
    assert b"\n" not in line and line == line.strip(), f"stray whitespace or newline: {line[:200]!r}"
    message = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    assert isinstance(message, dict), f"not a single message: {line[:200]!r}"
    assert message.get("jsonrpc") == "2.0", message
    if "method" in message:
        assert isinstance(message["method"], str), message
        assert "result" not in message and "error" not in message, message
        if "params" in message:
            assert isinstance(message["params"], dict), message
    else:
        assert "id" in message, message
        assert ("result" in message) != ("error" in message), message
        if "error" in message:
            assert isinstance(message["error"]["code"], int) and isinstance(message["error"]["message"], str)
    return message


def dumps(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def initialize_request(request_id: Any = 0, version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "initialize",
        "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "wire", "version": "0"}},
    }


def _read_chunk(stream: Any) -> bytes:
    try:
        return stream.read(65536) or b""
    except (OSError, ValueError):  # closed under us (by kill())
        return b""


class WireServer:
    def __init__(self, command: Sequence[str]) -> None:
        self.process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0
        )
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr = bytearray()
        self.stdout_raw = bytearray()
        self._threads = [
            threading.Thread(target=self._read_stdout, daemon=True),
            threading.Thread(target=self._read_stderr, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        pending = b""
        while chunk := _read_chunk(self.process.stdout):
            self.stdout_raw += chunk
            *complete, pending = (pending + chunk).split(b"\n")
            for line in complete:
                self.lines.put(line)
        if pending:
            self.lines.put(pending)  # an unterminated last line: tests see it and fail
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        while chunk := _read_chunk(self.process.stderr):
            self.stderr += chunk

    # ------------------------------------------------------------------------------- writing

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, obj: Any) -> None:
        self.send_raw(dumps(obj) + b"\n")

    def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def call_tool(self, request_id: Any, name: str, arguments: dict[str, Any] | None = None) -> None:
        self.request(request_id, "tools/call", {"name": name, "arguments": arguments or {}})

    def close_stdin(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()

    # ------------------------------------------------------------------------------- reading

    def read_line(self, timeout: float = DEFAULT_TIMEOUT) -> bytes:
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout} s; stderr: {bytes(self.stderr[-2000:])!r}") from None
        if line is None:
            self.lines.put(None)  # keep reporting EOF
            raise AssertionError(f"stdout closed; stderr: {bytes(self.stderr[-2000:])!r}")
        return line

    def read(self, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        return parse_protocol_line(self.read_line(timeout))

    def read_response(self, request_id: Any, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        """The response for ``request_id``; fails on any other response (notifications are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            message = self.read(max(0.0, deadline - time.monotonic()))
            if "method" in message and "id" not in message:
                continue
            assert message.get("id") == request_id and type(message.get("id")) is type(request_id), message
            return message

    def read_responses(self, count: int, timeout: float = DEFAULT_TIMEOUT) -> dict[Any, dict[str, Any]]:
        """The next ``count`` responses, by id (notifications are skipped)."""
        deadline = time.monotonic() + timeout
        out: dict[Any, dict[str, Any]] = {}
        while len(out) < count:
            message = self.read(max(0.0, deadline - time.monotonic()))
            if "method" in message and "id" not in message:
                continue
            assert message["id"] not in out, f"two responses for id {message['id']!r}"
            out[message["id"]] = message
        return out

    def expect_silence(self, seconds: float) -> None:
        try:
            line = self.lines.get(timeout=seconds)
        except queue.Empty:
            return
        raise AssertionError(f"unexpected output: {line!r}")

    def read_until_eof(self, timeout: float = DEFAULT_TIMEOUT) -> list[bytes]:
        deadline = time.monotonic() + timeout
        out: list[bytes] = []
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"stdout still open after {timeout} s; got {out!r}") from None
            if line is None:
                self.lines.put(None)
                return out
            out.append(line)

    def ping(self, request_id: Any = "ping", timeout: float = DEFAULT_TIMEOUT) -> None:
        """Prove the server still serves: a ping is the very next thing it answers."""
        self.request(request_id, "ping")
        assert self.read_response(request_id, timeout) == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def initialize(self, version: str = "2025-11-25") -> dict[str, Any]:
        self.send(initialize_request("init", version))
        response = self.read_response("init")
        assert response["result"]["protocolVersion"] == version
        self.notify("notifications/initialized")
        return response

    def wait(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        return self.process.wait(timeout=timeout)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        try:
            self.process.wait(timeout=5)
            # The readers see end of file now that the process is gone. Close their descriptors only
            # after they stopped: a reader about to call read() on a descriptor closed under it would
            # read from whatever pipe reuses that number next (the next test's server), stealing its
            # output -- which made an unrelated test time out once in a few hundred runs.
            for thread in self._threads:
                thread.join(timeout=5)
        finally:
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
