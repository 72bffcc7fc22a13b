"""A hostile upstream on 127.0.0.1: real sockets, answers no well-behaved API would send.

The first path segment picks the behaviour, so a base URL such as ``http://127.0.0.1:PORT/endless``
given to the weather server makes every API behind it hostile that way:

- ``endless``: a 200 with no length whose body never ends (JSON-looking text as fast as the socket takes it);
- ``huge``: a 200 declaring a Content-Length of 10 TB, then sending as fast as it can;
- ``drip``: a 200 whose body arrives one byte every 50 ms, for ever;
- ``bomb``: a 200, ``Content-Encoding: gzip``, chunked, an endless gzip stream of zeros (a few kB
  on the wire per decoded MB);
- ``objects``: valid JSON just under the server's 4 MiB cap, as many objects as fit (``[{},{},...]``:
  about 25 bytes of Python per byte once parsed);
- ``heavy``: the costliest JSON the server still parses: one-key objects (184 bytes each in Python),
  as many as its limit on values (``BYTES_PER_VALUE``) allows;
- ``gzip``: a valid small JSON body, gzip-compressed;
- ``cutgzip``: that gzip body without its last 8 bytes (the trailer), as if cut short;
- ``brotli``: a body labelled ``Content-Encoding: br``;
- ``unwell``: a 503 after half a second;
- ``away``: a 302 to ``target`` (another server) with the same path and query;
- ``loop``: a 302 to itself, for ever.

``requests`` counts the requests per behaviour; ``sent`` the body bytes written per behaviour.
Every connection is closed after its answer.
"""

from __future__ import annotations

import gzip
import json
import socketserver
import threading
import zlib
from typing import Any

from plainmcp_weather.body import BYTES_PER_VALUE

HOST = "127.0.0.1"
VALID = {"latitude": 1.0, "longitude": 2.0, "generationtime_ms": 0.1, "note": "gzip ok"}


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        request_line = self.rfile.readline(65536).decode("latin-1")
        while self.rfile.readline(65536) not in (b"\r\n", b"\n", b""):
            pass
        try:
            target = request_line.split()[1]
        except IndexError:
            return
        mode = target.lstrip("/").split("/", 1)[0].split("?", 1)[0]
        self.server.count(mode)
        try:
            getattr(self, f"_{mode}", self._missing)(target)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the client hung up: what a well-capped client does

    def _head(self, status: str, headers: dict[str, str]) -> None:
        lines = [f"HTTP/1.1 {status}", "Connection: close", *(f"{k}: {v}" for k, v in headers.items())]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))

    def _body(self, mode: str, data: bytes) -> None:
        self.wfile.write(data)
        self.server.add_sent(mode, len(data))

    def _flood(self, mode: str) -> None:
        self._body(mode, b'{"latitude": 1.0, "padding": "')
        chunk = b"a" * 65536
        while not self.server.stopping.is_set():
            self._body(mode, chunk)

    def _endless(self, target: str) -> None:
        self._head("200 OK", {"Content-Type": "application/json"})
        self._flood("endless")

    def _huge(self, target: str) -> None:
        self._head("200 OK", {"Content-Type": "application/json", "Content-Length": str(10**13)})
        self._flood("huge")

    def _drip(self, target: str) -> None:
        self._head("200 OK", {"Content-Type": "application/json", "Content-Length": "1000000"})
        self._body("drip", b"{")
        while not self.server.stopping.wait(0.05):
            self._body("drip", b" ")

    def _bomb(self, target: str) -> None:
        self._head(
            "200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip", "Transfer-Encoding": "chunked"}
        )
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip header
        zeros = b"\0" * (1 << 20)
        self._chunk("bomb", compressor.compress(b'{"padding": "'))
        while not self.server.stopping.is_set():
            self._chunk("bomb", compressor.compress(zeros) + compressor.flush(zlib.Z_SYNC_FLUSH))

    def _chunk(self, mode: str, data: bytes) -> None:
        if data:
            self._body(mode, f"{len(data):x}\r\n".encode() + data + b"\r\n")

    def _objects(self, target: str) -> None:
        data = b"[" + b"{}," * ((4 * 1024 * 1024 - 3) // 3) + b"{}]"
        self._head("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(data))})
        self._body("objects", data)

    def _heavy(self, target: str) -> None:
        count = (4 * 1024 * 1024 // BYTES_PER_VALUE) // 3 - 10  # each has three delimiters: { : ,
        data = b"[" + b'{"ab":0},' * count + b'{"ab":0}]'
        self._head("200 OK", {"Content-Type": "application/json", "Content-Length": str(len(data))})
        self._body("heavy", data)

    def _gzip(self, target: str) -> None:
        data = gzip.compress(json.dumps(VALID).encode())
        self._head(
            "200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": str(len(data))}
        )
        self._body("gzip", data)

    def _cutgzip(self, target: str) -> None:
        data = gzip.compress(json.dumps(VALID).encode())[:-8]
        self._head(
            "200 OK", {"Content-Type": "application/json", "Content-Encoding": "gzip", "Content-Length": str(len(data))}
        )
        self._body("cutgzip", data)

    def _brotli(self, target: str) -> None:
        self._head("200 OK", {"Content-Type": "application/json", "Content-Encoding": "br", "Content-Length": "2"})
        self._body("brotli", b"{}")

    def _unwell(self, target: str) -> None:
        self.server.stopping.wait(0.5)
        self._head("503 Service Unavailable", {"Content-Type": "application/json", "Content-Length": "2"})
        self._body("unwell", b"{}")

    def _away(self, target: str) -> None:
        self._head("302 Found", {"Location": self.server.target + target, "Content-Length": "0"})

    def _loop(self, target: str) -> None:
        self._head("302 Found", {"Location": target, "Content-Length": "0"})

    def _missing(self, target: str) -> None:
        self._head("404 Not Found", {"Content-Length": "0"})


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__((HOST, 0), _Handler)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.requests: dict[str, int] = {}
        self.sent: dict[str, int] = {}
        self.target = ""

    def count(self, mode: str) -> None:
        with self.lock:
            self.requests[mode] = self.requests.get(mode, 0) + 1

    def add_sent(self, mode: str, n: int) -> None:
        with self.lock:
            self.sent[mode] = self.sent.get(mode, 0) + n


class HostileUpstream:
    """The server on a thread of this process; a context manager. ``target``: where ``away`` sends."""

    def __init__(self, target: str = "http://127.0.0.1:9") -> None:
        self._server = _Server()
        self._server.target = target
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self._server.server_address[1]}"

    def requests(self, mode: str) -> int:
        with self._server.lock:
            return self._server.requests.get(mode, 0)

    def sent(self, mode: str) -> int:
        with self._server.lock:
            return self._server.sent.get(mode, 0)

    def __enter__(self) -> HostileUpstream:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="hostile-upstream", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._server.stopping.set()  # ends the floods and drips still writing
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
