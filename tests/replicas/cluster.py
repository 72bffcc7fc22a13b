"""A real deployment in miniature: N server processes on 127.0.0.1 sharing one real Redis, behind a real
load balancer (nginx or HAProxy, round-robin, no stickiness), all started and ended by the tests.

The proxy configurations are the ones ``docs/replicas.md`` documents (``deploy/nginx.conf`` and
``deploy/haproxy.cfg``, rendered with this run's ports), so what the tests prove is what operators run.

- nginx retries a request on the next replica only when the connection is refused or fails before the
  request was sent (``proxy_next_upstream error timeout``, without ``non_idempotent``): a POST that
  reached a replica is never sent twice.
- HAProxy does the same with ``retry-on conn-failure`` and ``option redispatch``.

Every wait is bounded; everything is killed at the end, and nothing talks to anything but 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.e2e.http_server import free_port, stop_process, wait_healthy
from tests.redis_server import system_binary

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
STARTUP_SECONDS = 30.0


@dataclass
class Replica:
    number: int
    port: int
    command: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.process = subprocess.Popen(
            [*self.command, "--port", str(self.port)], env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log
        )
        log.close()
        process = self.process
        wait_healthy(self.base_url, time.monotonic() + STARTUP_SECONDS, alive=lambda: process.poll() is None)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """End the replica with ``sig`` (SIGKILL: no goodbye, as a crash or an OOM kill ends it)."""
        assert self.process is not None
        self.process.send_signal(sig)
        self.process.wait(timeout=15)
        self.process = None

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@dataclass
class Proxy:
    kind: str
    port: int
    config_path: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/mcp"

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None


@dataclass
class Cluster:
    replicas: list[Replica]
    proxy: Proxy
    directory: Path
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.proxy.url

    def logs(self) -> str:
        return "\n".join(f"--- replica {r.number}\n{r.log()}" for r in self.replicas)


def server_command(server: str, redis_url: str | None, *extra: str) -> list[str]:
    """``python -m plainmcp_<server> --transport http ...`` with this run's Python (the installed server)."""
    command = [sys.executable, "-m", f"plainmcp_{server}", "--transport", "http", "--log-level", "info", *extra]
    if redis_url is not None:
        command += ["--redis", redis_url]
    return command


def render(template: Path, target: Path, **values: object) -> Path:
    text = template.read_text()
    for name, value in values.items():
        text = text.replace("{{" + name + "}}", str(value))
    target.write_text(text)
    return target


def start_proxy(kind: str, ports: list[int], directory: Path) -> Proxy:
    port = free_port()
    if kind == "nginx":
        binary = system_binary("nginx", "nginx")
        servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=5s;" for p in ports)
        config = render(DEPLOY / "nginx.conf", directory / "nginx.conf", LISTEN=f"127.0.0.1:{port}", UPSTREAMS=servers)
        config.write_text(config.read_text().replace("#TEST-ONLY ", ""))  # pid, logs and temp files in the test's dir
        config.write_text(config.read_text().replace("{{DIR}}", str(directory)))
        command = [
            binary,
            "-c",
            str(config),
            "-p",
            str(directory),
            "-e",
            str(directory / "error.log"),
            "-g",
            "daemon off;",
        ]
    elif kind == "haproxy":
        binary = system_binary("haproxy", "haproxy")
        servers = "\n".join(
            f"    server replica{i} 127.0.0.1:{p} check inter 1s fall 2 rise 1" for i, p in enumerate(ports, 1)
        )
        config = render(
            DEPLOY / "haproxy.cfg", directory / "haproxy.cfg", LISTEN=f"127.0.0.1:{port}", UPSTREAMS=servers
        )
        command = [binary, "-f", str(config), "-db"]
    else:
        raise ValueError(kind)
    log = (directory / f"{kind}.out").open("ab")
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    log.close()
    proxy = Proxy(kind, port, config, process)
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{kind} exited: {(directory / f'{kind}.out').read_text()}")
        try:
            if httpx.get(f"{proxy.base_url}/health", timeout=1.0, trust_env=False).status_code == 200:
                return proxy
        except httpx.HTTPError:
            pass
        time.sleep(0.05)
    proxy.stop()
    raise TimeoutError(f"{kind} did not start")


@contextmanager
def cluster(
    directory: Path,
    *,
    server: str = "everything",
    replicas: int = 3,
    redis_url: str | None,
    proxy: str = "nginx",
    extra_args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
) -> Iterator[Cluster]:
    """Start ``replicas`` processes of ``plainmcp-<server>`` sharing ``redis_url`` and a proxy in front."""
    environment = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    members = [
        Replica(
            i, free_port(), server_command(server, redis_url, *extra_args), environment, directory / f"replica{i}.log"
        )
        for i in range(1, replicas + 1)
    ]
    front: Proxy | None = None
    try:
        for member in members:
            member.start()
        front = start_proxy(proxy, [m.port for m in members], directory)
        yield Cluster(members, front, directory)
    finally:
        if front is not None:
            front.stop()
        for member in members:
            member.stop()
