"""A prompts server as a real child process over stdio, driven line by line, for attack tests.

Synchronous on purpose: the attacks happen on disk while this side sends requests and times each
answer; the server's stderr is collected by a thread so a warning can be waited for; memory is read
from ``/proc/<pid>/status``.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

LEGACY = "2025-11-25"
#: The longest a request may wait for its answer before the test fails.
ANSWER_TIMEOUT = 10.0


class StdioServer:
    """``command`` started with pipes; :meth:`initialize` first, then :meth:`request`."""

    def __init__(self, command: Sequence[str], **popen: Any) -> None:
        self.process = subprocess.Popen(
            list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen
        )
        self._stderr: list[str] = []
        self._stderr_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_thread.start()
        self._selector = selectors.DefaultSelector()
        assert self.process.stdout is not None
        self._selector.register(self.process.stdout, selectors.EVENT_READ)
        self._buffer = b""
        self._next_id = 0
        #: Notifications received so far (method names), in order.
        self.notifications: list[str] = []

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------------------------ requests

    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "attack-test", "version": "1"}},
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = ANSWER_TIMEOUT) -> Any:
        """The result of ``method``; raises AssertionError on an error answer, TimeoutError if none
        arrives within ``timeout`` seconds."""
        response = self.call(method, params, timeout)
        assert "result" in response, response
        return response["result"]

    def call(
        self, method: str, params: dict[str, Any] | None = None, timeout: float = ANSWER_TIMEOUT
    ) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        deadline = time.monotonic() + timeout
        while True:
            incoming = self._receive(deadline)
            if incoming.get("id") == request_id and "method" not in incoming:
                return incoming
            if "method" in incoming and "id" not in incoming:
                self.notifications.append(incoming["method"])

    def ping_seconds(self, timeout: float = ANSWER_TIMEOUT) -> float:
        """How long a ``ping`` took to be answered."""
        started = time.monotonic()
        self.request("ping", timeout=timeout)
        return time.monotonic() - started

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def _receive(self, deadline: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise TimeoutError(f"no answer in time; stderr:\n{self.stderr[-2000:]}")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError(f"the server closed stdout (exit {self.process.wait()}); stderr:\n{self.stderr[-2000:]}")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    # --------------------------------------------------------------------------------- observation

    @property
    def stderr(self) -> str:
        return "".join(self._stderr)

    def wait_for_stderr(self, text: str, timeout: float = ANSWER_TIMEOUT, *, while_waiting: Any = None) -> None:
        """Wait until ``text`` appears on stderr, calling ``while_waiting()`` in between (bounded)."""
        deadline = time.monotonic() + timeout
        while text not in self.stderr:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{text!r} never appeared on stderr:\n{self.stderr[-2000:]}")
            if while_waiting is not None:
                while_waiting()
            time.sleep(0.05)

    def peak_rss_mib(self) -> float:
        """The process's peak resident memory so far (``VmHWM``), in MiB."""
        with open(f"/proc/{self.process.pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        raise AssertionError("no VmHWM in /proc status")

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self._stderr.append(raw.decode("utf-8", "replace"))

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()  # EOF: the server exits
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        self._selector.close()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self._stderr_thread.join(5)
