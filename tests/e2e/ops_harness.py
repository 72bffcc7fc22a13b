"""Harness for the authentication and operability tests: a small server of our own, served in a
thread (``MCPApp`` options under test) or as a real process (the shared command line), TLS
material, JWT keys and a JWKS server on 127.0.0.1, and a Prometheus text parser.

Every wait is bounded; nothing talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio
import httpx
from plainmcp import Server, ToolError

from .http_server import HOST, STARTUP_SECONDS, STOP_SECONDS, TIMEOUT, app_in_thread, free_port, stop_process

SERVER_NAME = "plainmcp-test-http"
SERVER_VERSION = "9.9.9"
SERVER_DESCRIPTION = "A server for the HTTP tests"

ADD_INPUT = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
    "additionalProperties": False,
}
ADD_OUTPUT = {"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]}
TEXT_INPUT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
SIZE_INPUT = {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0}}, "required": ["size"]}


@dataclass
class Probe:
    """What the test server's tools tell the test thread (they run on the server's thread)."""

    slow_started: threading.Event = field(default_factory=threading.Event)
    slow_cancelled: threading.Event = field(default_factory=threading.Event)
    flood_cancelled: threading.Event = field(default_factory=threading.Event)
    flood_sent: int = 0


def build_server(probe: Probe | None = None) -> Server:
    probe = probe if probe is not None else Probe()
    server = Server(SERVER_NAME, SERVER_VERSION, description=SERVER_DESCRIPTION)

    @server.tool(input_schema=ADD_INPUT, output_schema=ADD_OUTPUT)
    async def add(ctx, args):
        """Add two integers."""
        return {"sum": args["a"] + args["b"]}

    @server.tool(input_schema=TEXT_INPUT)
    async def echo(ctx, args):
        """Say the text back."""
        return args["text"]

    @server.tool()
    async def fail(ctx, args):
        """Always fails the way a tool reports failures."""
        raise ToolError("the upstream is down")

    @server.tool(input_schema=SIZE_INPUT)
    async def big(ctx, args):
        """Return a text of the given size."""
        return "x" * args["size"]

    @server.tool()
    async def slow(ctx, args):
        """Report progress, then wait (until cancelled)."""
        probe.slow_started.set()
        try:
            await ctx.report_progress(1, 2, "started")
            await anyio.sleep(60)
        finally:
            probe.slow_cancelled.set()
        return "done"

    @server.tool()
    async def flood(ctx, args):
        """Report progress with large messages, as fast as the client takes them."""
        try:
            for step in range(1, 1_000_000):
                await ctx.report_progress(step, None, "x" * 2000)
                probe.flood_sent = step
        finally:
            probe.flood_cancelled.set()
        return "done"

    return server


# --------------------------------------------------------------------------- in-thread serving


#: Serving an ``MCPApp`` on a thread is the transport tests' own harness.
serve_app = app_in_thread


# -------------------------------------------------------------------------- process serving


@dataclass
class Process:
    process: subprocess.Popen[bytes]
    port: int
    stderr_path: str
    scheme: str

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{HOST}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    def stderr(self) -> str:
        return Path(self.stderr_path).read_text(encoding="utf-8", errors="replace")

    def json_lines(self) -> list[dict[str, Any]]:
        """Every stderr line, parsed (the test fails on a line that is not JSON)."""
        return [json.loads(line) for line in self.stderr().splitlines() if line.strip()]

    def stop(self) -> int | None:
        return stop_process(self.process)


def everything_command(port: int, *args: str) -> list[str]:
    return [sys.executable, "-m", "plainmcp_everything", "--transport", "http", "--port", str(port), *args]


@contextlib.contextmanager
def server_process(
    *args: str, env: dict[str, str] | None = None, verify: Any = True, tls: bool = False
) -> Iterator[Process]:
    """``plainmcp-everything --transport http`` with ``args``; stderr kept apart from stdout."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="plainmcp-ops-", suffix=".log", delete=False)
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    process = subprocess.Popen(
        everything_command(port, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env=full_env,
    )
    served = Process(process, port, log.name, "https" if tls else "http")
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the server exited during startup:\n{served.stderr()}")
            try:
                with httpx.Client(verify=verify, trust_env=False, timeout=1.0) as client:
                    if client.get(f"{served.base_url}/health").status_code == 200:
                        break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                served.stop()
                raise TimeoutError(f"the server did not answer /health in time:\n{served.stderr()}")
            time.sleep(0.05)
        yield served
    finally:
        served.stop()
        log.close()
        with contextlib.suppress(OSError):
            os.unlink(log.name)


def run_to_exit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the server with options that must make it exit at once (configuration errors)."""
    return subprocess.run(
        everything_command(free_port(), *args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        env={**os.environ, **(env or {})},
    )


def client(**kwargs: Any) -> httpx.Client:
    kwargs.setdefault("timeout", httpx.Timeout(TIMEOUT))
    kwargs.setdefault("trust_env", False)
    return httpx.Client(**kwargs)


def wait_until(predicate: Any, seconds: float = TIMEOUT, message: str = "condition") -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"{message}: not reached within {seconds} s")
        time.sleep(0.02)


# ------------------------------------------------------------------------------------- keys


def rsa_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def ec_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def public_pem(private_key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return private_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost, and its key, as PEM files in ``directory``."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.x509.oid import NameOID

    key = ec_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "plainmcp test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address(HOST))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = directory / "cert.pem", directory / "key.pem"
    certfile.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return certfile, keyfile


def trusting(certfile: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(certfile))


class JWKSServer:
    """A JWKS document served on 127.0.0.1, replaceable, with a count of the fetches."""

    def __init__(self) -> None:
        self.keys: list[dict[str, Any]] = []
        self.fetches = 0
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.fetches += 1
                body = json.dumps({"keys": outer.keys}).encode()
                self.send_response(outer.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer((HOST, 0), Handler)
        self.url = f"http://{HOST}:{self._server.server_address[1]}/jwks.json"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> JWKSServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(STOP_SECONDS)


def jwk(private_key: Any, kid: str) -> dict[str, Any]:
    from cryptography.hazmat.primitives.asymmetric import rsa
    from jwt.algorithms import ECAlgorithm, RSAAlgorithm

    algorithm = RSAAlgorithm if isinstance(private_key, rsa.RSAPrivateKey) else ECAlgorithm
    entry = algorithm.to_jwk(private_key.public_key(), as_dict=True)
    entry.update({"kid": kid, "use": "sig"})
    return entry


# ---------------------------------------------------------------------------------- metrics

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


@dataclass
class Exposition:
    types: dict[str, str]
    helps: dict[str, str]
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float]

    def value(self, metric: str, /, **labels: str) -> float:
        return self.samples.get((metric, frozenset(labels.items())), 0.0)

    def series(self, name: str) -> dict[frozenset[tuple[str, str]], float]:
        return {labels: value for (sample, labels), value in self.samples.items() if sample == name}


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n"}.get(m.group(1), m.group(1)), value)


def parse_exposition(text: str) -> Exposition:
    """Parse the text format strictly: every line is a HELP, a TYPE or a well-formed sample."""
    types: dict[str, str] = {}
    helps: dict[str, str] = {}
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            assert kind in ("counter", "gauge", "histogram"), line
            types[name] = kind
        elif line.startswith("# HELP "):
            _, _, name, text_ = line.split(" ", 3)
            helps[name] = text_
        else:
            match = _SAMPLE.match(line)
            assert match is not None, f"not a sample line: {line!r}"
            name, _, label_text, value = match.groups()
            labels = frozenset((key, _unescape(val)) for key, val in _LABEL.findall(label_text or ""))
            assert (name, labels) not in samples, f"duplicate sample {line!r}"
            samples[(name, labels)] = float(value)
    return Exposition(types, helps, samples)
