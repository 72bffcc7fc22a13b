"""Running a README's HTTP server line in a test: on a free port, until it answers ``/health``."""

from __future__ import annotations

import contextlib
import re
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def serving_http(command: str, user: Any) -> Iterator[int]:
    """Run an HTTP server line (its ``--port`` swapped for a free one) until it answers ``/health``; yield the port."""
    port = _free_port()
    command = re.sub(r"--port[ =]\d+", f"--port {port}", command)
    process = subprocess.Popen(
        ["bash", "-c", f"exec {command}"],
        cwd=user.work,
        env=user.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            assert time.monotonic() < deadline, f"{command!r} never answered /health"
            assert process.poll() is None, f"{command!r} exited: {process.stderr.read().decode()[-2000:]}"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as response:
                    if response.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stderr.close()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
