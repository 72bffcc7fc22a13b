"""Harness for the HTTP interop tests: a real ``plainmcp-everything`` process serving HTTP on 127.0.0.1,
and the pinned Node tools (conformance suite, Inspector CLI) that drive it.

:func:`running_server` starts ``python -m plainmcp_everything --transport http|sse --port N`` on a free
loopback port, waits (bounded) until ``GET /health`` answers, yields a :class:`ServerProcess`, and stops
the process: SIGTERM, then SIGKILL if it has not exited in time. A process that dies before it is healthy
(for instance because another process took the port between choosing and binding it) is retried on a new
port a few times; its stderr is kept in a temporary file and quoted in every failure message.

:func:`node_tools` finds Node and the tools the way ``tests/interop/test_inspector_cli.py`` does: from
``PLAINMCP_NODE_BIN`` / ``PLAINMCP_INSPECTOR`` / ``PLAINMCP_CONFORMANCE``, else where
``tools/node_tools.py`` installs them. Missing tools fail the test; they never skip it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import httpx
import pytest

from tests.e2e.http_server import free_port, stop_process

ROOT = Path(__file__).resolve().parents[2]
HOST = "127.0.0.1"

#: Bound for the server to answer /health after it was started.
START_TIMEOUT = 20.0
#: Bound for the server to exit after SIGTERM (uvicorn's graceful shutdown is 3 s), and again after SIGKILL.
STOP_TIMEOUT = 10.0
#: How many fresh ports to try when the process dies before it is healthy.
START_ATTEMPTS = 3
#: Node >= 22.19 runs the Inspector v2 and the conformance suite.
MIN_NODE = (22, 19)

HOW_TO_INSTALL = (
    "The pinned Node tools are required (never skipped). Install them with `python3 tools/node_tools.py` "
    "(`python3 dev.py test` does it when CI is set or the cache is missing), or set PLAINMCP_NODE_BIN, "
    "PLAINMCP_INSPECTOR and PLAINMCP_CONFORMANCE."
)


@dataclass
class ServerProcess:
    """A running ``plainmcp-everything`` serving HTTP on ``127.0.0.1:port``."""

    process: subprocess.Popen[bytes]
    port: int
    transport: str
    stderr_file: IO[bytes]

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def url(self, path: str) -> str:
        return f"{self.base_url}{path}"

    @property
    def mcp_url(self) -> str:
        """The Streamable HTTP endpoint (``--transport http`` only)."""
        return self.url("/mcp")

    @property
    def sse_url(self) -> str:
        """The 2024-11-05 HTTP+SSE stream endpoint (both transports)."""
        return self.url("/sse")

    def stderr(self) -> str:
        """Everything the server wrote to stderr so far (its log)."""
        self.stderr_file.flush()
        self.stderr_file.seek(0)
        return self.stderr_file.read().decode("utf-8", "replace")

    def describe(self) -> str:
        state = "running" if self.process.poll() is None else f"exited with {self.process.returncode}"
        tail = "\n".join(self.stderr().splitlines()[-60:])
        return f"server {self.base_url} ({self.transport}), {state}; stderr (last lines):\n{tail}"

    def assert_healthy(self) -> None:
        """The process is still up and ``GET /health`` answers 200 (a crash mid-test fails loudly)."""
        assert self.process.poll() is None, self.describe()
        response = httpx.get(self.url("/health"), timeout=5.0, trust_env=False)
        assert response.status_code == 200, self.describe()
        assert response.json() == {"status": "ok", "server": "plainmcp-everything", "version": "0.1.0"}

    def assert_clean_log(self) -> None:
        """Nothing went wrong inside the server: no ERROR or CRITICAL log line, no traceback."""
        bad = [
            line
            for line in self.stderr().splitlines()
            if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")
        ]
        assert not bad, "the server logged errors:\n" + "\n".join(bad) + f"\n{self.describe()}"

    def stop(self) -> int | None:
        return stop_process(self.process, STOP_TIMEOUT)


def _start(transport: str, port: int, stderr_file: IO[bytes], log_level: str) -> ServerProcess:
    command = [
        sys.executable,
        "-m",
        "plainmcp_everything",
        "--transport",
        transport,
        "--host",
        HOST,
        "--port",
        str(port),
        "--log-level",
        log_level,
    ]
    env = {key: value for key, value in os.environ.items() if not key.startswith("PLAINMCP_EVERYTHING_")}
    process = subprocess.Popen(
        command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr_file
    )
    return ServerProcess(process, port, transport, stderr_file)


def _wait_healthy(server: ServerProcess) -> bool:
    """Poll /health until it answers 200 (True), or the process exits (False); fail past START_TIMEOUT."""
    deadline = time.monotonic() + START_TIMEOUT
    with httpx.Client(timeout=1.0, trust_env=False) as client:
        while time.monotonic() < deadline:
            if server.process.poll() is not None:
                return False
            try:
                if client.get(server.url("/health")).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
    server.stop()
    pytest.fail(f"the server did not answer /health within {START_TIMEOUT}s\n{server.describe()}")


@contextmanager
def running_server(transport: str = "http", *, log_level: str = "info") -> Iterator[ServerProcess]:
    """Run ``plainmcp-everything --transport <transport>`` on a free loopback port for the ``with`` body."""
    assert transport in ("http", "sse"), transport
    with tempfile.TemporaryFile() as stderr_file:
        server = None
        for _ in range(START_ATTEMPTS):
            stderr_file.seek(0)
            stderr_file.truncate()
            candidate = _start(transport, free_port(), stderr_file, log_level)
            if _wait_healthy(candidate):
                server = candidate
                break
            candidate.stop()
        if server is None:
            pytest.fail(f"the server exited before it was healthy, {START_ATTEMPTS} times\n{candidate.describe()}")
        try:
            yield server
        finally:
            server.stop()


# ------------------------------------------------------------------------------------ Node tools


@dataclass(frozen=True)
class NodeTools:
    node_bin: Path
    inspector: Path
    conformance: Path

    def env(self, home: Path) -> dict[str, str]:
        """The tools' environment: the pinned Node first on PATH, a private HOME, no proxy for loopback."""
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(self.node_bin), env.get("PATH", os.defpath)])
        env["HOME"] = str(home)  # the Inspector keeps state in ~/.mcp-inspector
        env["MCP_STORAGE_DIR"] = str(home / "storage")
        env["NO_PROXY"] = env["no_proxy"] = f"{HOST},localhost"
        for name in ("MCP_CATALOG_PATH", "MCP_CLIENT_CONFIG_PATH", "NODE_OPTIONS"):
            env.pop(name, None)
        return env


def _installed_paths() -> dict[str, Path]:
    spec = importlib.util.spec_from_file_location("_plainmcp_node_tools", ROOT / "tools" / "node_tools.py")
    assert spec is not None and spec.loader is not None
    node_tools_module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = node_tools_module  # dataclasses look their module up there
    spec.loader.exec_module(node_tools_module)
    return node_tools_module.paths()


def node_tools() -> NodeTools:
    """Node and the tools from the environment, else from .ci-cache/node; fails (never skips) when missing."""
    installed = _installed_paths()
    tools = NodeTools(
        node_bin=Path(os.environ.get("PLAINMCP_NODE_BIN") or installed["node_bin"]),
        inspector=Path(os.environ.get("PLAINMCP_INSPECTOR") or installed["inspector"]),
        conformance=Path(os.environ.get("PLAINMCP_CONFORMANCE") or installed["conformance"]),
    )
    for executable in (tools.inspector, tools.conformance):
        if not os.access(executable, os.X_OK):
            pytest.fail(f"no executable at {executable}. {HOW_TO_INSTALL}", pytrace=False)
    node = tools.node_bin / "node"
    try:
        version = subprocess.run([str(node), "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        pytest.fail(f"cannot run {node}: {error}. {HOW_TO_INSTALL}", pytrace=False)
    numbers = tuple(int(part) for part in version.lstrip("v").split(".")[:2] if part.isdigit())
    if numbers < MIN_NODE:
        pytest.fail(f"{node} is {version!r}; the tools need Node >= 22.19. {HOW_TO_INSTALL}", pytrace=False)
    return tools


@dataclass
class InspectorRun:
    """One run of the Inspector CLI, and the JSON envelope it printed."""

    command: list[str]
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return f"command: {self.command}\nexit code: {self.returncode}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"

    @property
    def result(self) -> Any:
        """The ``result`` of the JSON envelope on stdout."""
        try:
            envelope = json.loads(self.stdout)
        except ValueError:
            pytest.fail(f"the Inspector printed no JSON on stdout\n{self.describe()}")
        assert set(envelope) == {"result"}, self.describe()
        return envelope["result"]

    @property
    def error(self) -> dict[str, Any]:
        """The ``error`` of the JSON envelope on stderr."""
        try:
            envelope = json.loads(self.stderr)
        except ValueError:
            pytest.fail(f"the Inspector printed no JSON error on stderr\n{self.describe()}")
        assert set(envelope) == {"error"}, self.describe()
        return envelope["error"]
