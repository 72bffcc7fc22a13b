"""A real ``redis-server`` for the tests, on a free port of 127.0.0.1, with nothing written to disk.

``.ci/run`` installs Debian's ``redis-server`` package; on a developer's machine without it, the tests
that need Redis are skipped with the install line (with ``CI`` set they fail instead: CI must run them).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest


def system_binary(name: str, package: str) -> str:
    """The path of a Debian package's executable (redis-server, nginx, haproxy). Missing: skipped with the
    install line, or failed with ``CI`` set (CI must run what needs it)."""
    found = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None
    )
    if found is None:
        message = f"{name} is not installed (apt-get install -y {package})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def redis_binary() -> str:
    return system_binary("redis-server", "redis-server")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process; :meth:`stop` and :meth:`start` again on the same port (a restart)."""

    def __init__(self, directory: Path, port: int | None = None) -> None:
        self.directory = directory
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            redis_binary(), "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(self.directory), "--protected-mode", "no", "--loglevel", "warning",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as link:
                    link.sendall(b"PING\r\n")
                    if link.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError("redis-server did not start within 10 s")

    def stop(self, sig: int | None = None) -> None:
        """End the server (SIGKILL when ``sig`` says so, else SIGTERM) and wait for it."""
        process, self.process = self.process, None
        if process is None:
            return
        if sig is None:
            process.terminate()
        else:
            process.send_signal(sig)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as link:
            link.sendall(b"FLUSHALL\r\n")
            link.recv(16)
