"""``plainmcp tap [--log FILE] -- SERVER COMMAND``: a transparent stdio proxy that records the exchange.

Configured in a client in place of the server, it starts the server, passes every byte through
unchanged in both directions, and records each message to a JSON Lines file while printing a compact
live view on stderr.

How it stays transparent: each direction is one thread that reads whatever chunk is available
(``os.read``) and writes it on at once, before looking at it; the chunk is *copied* to a line
splitter that parses complete lines for the log. Nothing is ever re-encoded, so bad JSON, odd
whitespace or ``\\r\\n`` reach the other side exactly as sent. The server's stderr is inherited
(the client sees it as before); the live view is written to the same stderr, one whole line per
write. Signals that ask the proxy to stop (INT, TERM, HUP, QUIT, USR1, USR2) are forwarded to the
server, which runs in a session of its own so a terminal's Ctrl-C reaches it once, not twice; the
proxy exits with the server's exit code, or dies of the server's signal.

Threads rather than an event loop: blocking reads on two pipes are what the job is, and threads
keep the proxy's own start-up cheap (no anyio import) for clients that spawn it often.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from typing import IO, Any

from .run import fail

CHUNK = 65536
#: A line longer than this is logged truncated (it is still forwarded whole).
MAX_LINE = 16 * 1024 * 1024
CLIENT_TO_SERVER = "client->server"
SERVER_TO_CLIENT = "server->client"
ARROWS = {CLIENT_TO_SERVER: ">", SERVER_TO_CLIENT: "<"}
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
#: Exit codes when the server cannot be started, as POSIX shells use them.
NOT_FOUND = 127
NOT_EXECUTABLE = 126


def add_parser(commands: Any) -> None:
    parser = commands.add_parser(
        "tap",
        help="a stdio proxy that records every message between a client and a server",
        description="Start SERVER COMMAND and stand between it and the client that started this process: "
        "every byte passes through unchanged, every message is recorded with a timestamp, direction and "
        "(for answers) latency to a JSON Lines file, and a compact live view goes to stderr.",
        usage="plainmcp tap [--log FILE] [--quiet] -- COMMAND [ARG ...]",
        epilog="in a client's configuration, put plainmcp's absolute path as the command and\n"
        '["tap", "--log", "/tmp/mcp.jsonl", "--", "/abs/path/my-server", "--db", "x.db"] as the args.\n\n'
        'log records: {"ts", "direction": "client->server"|"server->client", "message"} per message\n'
        '("raw" instead of "message" for a line that is not JSON; "latency_ms" and "method" on answers),\n'
        'plus {"ts", "event": "start"|"exit", ...} around each run. The file is appended to.\n\n'
        "exit codes: the server's own; 127 when the command is not found, 126 when it cannot be run,\n"
        "2 for a usage error. When the server dies of a signal, so does the proxy.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--log",
        metavar="FILE",
        default=os.environ.get("PLAINMCP_TAP_LOG"),
        help="JSON Lines file to append to [env: PLAINMCP_TAP_LOG] "
        "(default: a new file under the temporary directory, named on stderr)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no live view on stderr (the log is still written)")
    parser.set_defaults(run=main)


def main(args: argparse.Namespace) -> int:
    command = args.command_tail
    if not command:
        fail("tap: give the server command after --, e.g. plainmcp tap -- my-server --db x.db")
        return 2
    path = args.log or default_log_path(command)
    try:
        log = open(path, "a", encoding="utf-8")
    except OSError as error:
        fail(f"tap: cannot open the log {path}: {error.strerror}")
        return 1
    live = None if args.quiet else sys.stderr
    if live is not None:
        _write_line(live, f"plainmcp tap: logging to {path}  (> client to server, < server to client)")
    return Tap(command, Recorder(log, live)).run()


def default_log_path(command: list[str]) -> str:
    folder = os.path.join(tempfile.gettempdir(), "plainmcp-tap")
    os.makedirs(folder, exist_ok=True)
    name = os.path.basename(command[0]) or "server"
    return os.path.join(folder, f"{name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.jsonl")


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Recorder:
    """Turns the copies of both byte streams into log records and live lines. Thread-safe."""

    def __init__(self, log: IO[str], live: IO[str] | None) -> None:
        self.log = log
        self.live = live
        self._lock = threading.Lock()
        self._pending: dict[str, bytes] = {CLIENT_TO_SERVER: b"", SERVER_TO_CLIENT: b""}
        # bytes of an over-long line dropped so far, and its first 1000 bytes, per direction
        self._oversized: dict[str, int] = {CLIENT_TO_SERVER: 0, SERVER_TO_CLIENT: 0}
        self._heads: dict[str, bytes] = {CLIENT_TO_SERVER: b"", SERVER_TO_CLIENT: b""}
        # (direction the request went, id as JSON) -> (monotonic time, method)
        self._requests: dict[tuple[str, str], tuple[float, str]] = {}

    def feed(self, direction: str, chunk: bytes, now: float) -> None:
        """Take a copy of ``chunk`` as it went in ``direction``; records every complete line."""
        with self._lock:
            data = self._pending[direction] + chunk
            *lines, rest = data.split(b"\n")
            for line in lines:
                if self._oversized[direction]:
                    self._record_oversized(direction, self._oversized[direction] + len(line))
                    self._oversized[direction] = 0
                else:
                    self._line(direction, line, now)
            if len(rest) > MAX_LINE:  # keep memory bounded; the bytes were forwarded anyway
                if not self._oversized[direction]:
                    self._heads[direction] = rest[:1000]
                self._oversized[direction] += len(rest)
                rest = b""
            self._pending[direction] = rest

    def finish(self) -> None:
        """Record what is left without a final newline (a stream that ended mid-line)."""
        with self._lock:
            for direction, rest in self._pending.items():
                if rest.strip():
                    self._line(direction, rest, time.monotonic())
                self._pending[direction] = b""

    def event(self, name: str, **fields: Any) -> None:
        with self._lock:
            self._write({"ts": utc_now(), "event": name, **fields})

    # --------------------------------------------------------------------------------- inside

    def _line(self, direction: str, line: bytes, now: float) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r")
        if not text.strip():
            return
        record: dict[str, Any] = {"ts": utc_now(), "direction": direction}
        try:
            message = json.loads(text)
        except ValueError:
            record["raw"] = text
            self._write(record)
            self._show(f"{ARROWS[direction]} (not JSON) {text[:80]}")
            return
        record["message"] = message
        items = message if isinstance(message, list) and message else [message]
        notes = [self._note(direction, item, now) for item in items]
        if not isinstance(message, list) and notes[0][1] is not None:
            record["method"], record["latency_ms"] = notes[0][1], notes[0][2]
        self._write(record)
        for summary, _, _ in notes:
            self._show(f"{ARROWS[direction]} {summary}")

    def _note(self, direction: str, item: Any, now: float) -> tuple[str, str | None, float | None]:
        """One message's live summary, and for an answer the method and latency of its request."""
        if not isinstance(item, dict):
            return f"(not a JSON-RPC message) {json.dumps(item)[:60]}", None, None
        has_id = "id" in item
        key = json.dumps(item.get("id"))
        if "method" in item:
            method = str(item["method"])
            if not has_id:
                return method + _notification_detail(item), None, None
            self._requests[(direction, key)] = (now, method)
            return f"#{_id(item['id'])} {method}{_request_detail(item)}", None, None
        asked = self._requests.pop((_other(direction), key), None)
        answered, latency = (asked[1], round((now - asked[0]) * 1000, 3)) if asked else (None, None)
        outcome = _outcome(item)
        timing = f" {latency:.1f} ms" if latency is not None else ""
        return f"#{_id(item.get('id'))} {answered or '(unknown request)'}{outcome}{timing}", answered, latency

    def _record_oversized(self, direction: str, size: int) -> None:
        head = self._heads[direction]
        self._write(
            {
                "ts": utc_now(),
                "direction": direction,
                "raw": head.decode("utf-8", "replace"),
                "truncated": True,
                "bytes": size,
            }
        )
        self._show(f"{ARROWS[direction]} (a {size}-byte line, logged truncated)")

    def _write(self, record: dict[str, Any]) -> None:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        # U+2028/U+2029 are line breaks to str.splitlines and to JavaScript: escape them, so every
        # reader sees one record per line.
        self.log.write(text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + "\n")
        self.log.flush()  # so `tail -f` shows each message as it happens

    def _show(self, text: str) -> None:
        if self.live is not None:
            _write_line(self.live, f"tap {time.strftime('%H:%M:%S')} {text}")


def _write_line(stream: IO[str], text: str) -> None:
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass  # nobody reads our stderr any more: the log still has everything


def _other(direction: str) -> str:
    return SERVER_TO_CLIENT if direction == CLIENT_TO_SERVER else CLIENT_TO_SERVER


def _id(value: Any) -> str:
    return json.dumps(value) if not isinstance(value, int) else str(value)


def _params(item: dict[str, Any]) -> dict[str, Any]:
    params = item.get("params")
    return params if isinstance(params, dict) else {}


def _request_detail(item: dict[str, Any]) -> str:
    params = _params(item)
    name = params.get("name") or params.get("uri")
    return f" {name}" if isinstance(name, str) else ""


def _notification_detail(item: dict[str, Any]) -> str:
    params = _params(item)
    if item.get("method") == "notifications/progress":
        return f" {params.get('progress')}/{params.get('total', '?')}"
    if item.get("method") == "notifications/cancelled":
        return f" #{_id(params.get('requestId'))}"
    if isinstance(params.get("uri"), str):
        return f" {params['uri']}"
    return ""


def _outcome(item: dict[str, Any]) -> str:
    error = item.get("error")
    if isinstance(error, dict):
        return f" error {error.get('code')}: {str(error.get('message', ''))[:60]}"
    result = item.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return " isError"
    return ""


class Tap:
    """The proxy: a server process, two pumps, signals passed on."""

    def __init__(self, command: list[str], recorder: Recorder) -> None:
        self.command = command
        self.recorder = recorder
        self.process: subprocess.Popen[bytes] | None = None

    def run(self) -> int:
        try:
            return self._run()
        finally:
            self.recorder.log.close()

    def _run(self) -> int:
        try:
            self.process = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, start_new_session=True
            )
        except FileNotFoundError:
            fail(f"tap: {self.command[0]}: command not found")
            return NOT_FOUND
        except OSError as error:
            fail(f"tap: cannot run {self.command[0]}: {error.strerror}")
            return NOT_EXECUTABLE
        self.recorder.event("start", command=self.command, pid=self.process.pid)
        previous = self._forward_signals()
        upstream = threading.Thread(target=self._client_to_server, name="tap-upstream", daemon=True)
        downstream = threading.Thread(target=self._server_to_client, name="tap-downstream", daemon=True)
        upstream.start()
        downstream.start()
        returncode = self.process.wait()
        # What the server wrote before exiting is still in the pipe; a grandchild holding the
        # pipe open must not keep us here forever.
        downstream.join(5)
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)
        self.recorder.finish()
        self.recorder.event("exit", returncode=returncode)
        return self._exit_code(returncode)

    def _forward_signals(self) -> dict[str, Any]:
        previous = {}
        for name in FORWARDED_SIGNALS:
            number = getattr(signal, name, None)
            if number is None:
                continue
            previous[name] = signal.signal(number, self._pass_on)
        return previous

    def _pass_on(self, number: int, frame: Any) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(number)

    def _client_to_server(self) -> None:
        assert self.process is not None and self.process.stdin is not None
        destination = self.process.stdin.fileno()
        try:
            while True:
                chunk = _read(0)
                if not chunk:
                    break
                # Recorded before it is passed on: a fast server's answer can reach the other pump
                # before this one returns from the write, and must find its request to pair with.
                self.recorder.feed(CLIENT_TO_SERVER, chunk, time.monotonic())
                if not _write_all(destination, chunk):
                    break  # the server closed its stdin (or exited): nothing more can reach it
        finally:
            # The client's end of input is the server's: the spec's first shutdown signal.
            try:
                self.process.stdin.close()
            except OSError:
                pass

    def _server_to_client(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        source = self.process.stdout.fileno()
        client_gone = False
        while True:
            chunk = _read(source)
            if not chunk:
                return
            now = time.monotonic()
            if not client_gone and not _write_all(1, chunk):
                client_gone = True  # keep draining, so the server is not blocked, and keep logging
            self.recorder.feed(SERVER_TO_CLIENT, chunk, now)

    def _exit_code(self, returncode: int) -> int:
        if returncode >= 0:
            return returncode
        number = -returncode
        # Die of the same signal, so whoever started us sees what they would have seen.
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            signal.signal(number, signal.SIG_DFL)
            os.kill(os.getpid(), number)
        except (OSError, ValueError):
            pass
        return 128 + number


def _read(fd: int) -> bytes:
    """The next chunk available on ``fd``; b"" at the end (or when the descriptor is unusable)."""
    while True:
        try:
            return os.read(fd, CHUNK)
        except BlockingIOError:  # an inherited non-blocking descriptor: wait until readable
            import select

            select.select([fd], [], [])
        except OSError:
            return b""


def _write_all(fd: int, data: bytes) -> bool:
    """Write all of ``data``; False when the reader has gone."""
    view = memoryview(data)
    while view:
        try:
            written = os.write(fd, view)
        except BlockingIOError:
            import select

            select.select([], [fd], [])
            continue
        except OSError:  # BrokenPipeError and friends
            return False
        view = view[written:]
    return True
