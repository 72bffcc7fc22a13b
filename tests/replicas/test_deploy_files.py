"""The deployment files operators copy (deploy/compose.yaml, deploy/kubernetes.yaml) cannot be run here (no
container engine, no cluster), so what can be checked is checked for real: each replica's exact argument
list starts the installed server against a real Redis and answers /health with the store reachable, and the
compose file's HAProxy configuration passes ``haproxy -c``."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.e2e.http_server import free_port, stop_process, wait_healthy
from tests.redis_server import system_binary
from tests.replicas.cluster import DEPLOY, server_command

SAMPLE_DB = Path(__file__).resolve().parents[2] / "servers/sqlite/src/plainmcp_sqlite/sample/sample.db"


def local(arguments: list[str], redis_url: str, port: int) -> list[str]:
    """A container's arguments with what only exists in the container replaced by this machine's."""
    replaced = {
        "--db": str(SAMPLE_DB),
        "--host": "127.0.0.1",
        "--port": str(port),
        "--redis": redis_url,
    }
    out = []
    for argument in arguments:
        name, _, _value = argument.partition("=")
        out.append(f"{name}={replaced[name]}" if name in replaced else argument)
    return out


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def kubernetes_server_args() -> tuple[list[str], list[dict]]:
    documents = list(yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()))
    (deployment,) = [d for d in documents if d["kind"] == "Deployment" and d["metadata"]["name"] == "plainmcp-sqlite"]
    assert deployment["spec"]["replicas"] == 3
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container["args"], container["env"]


@pytest.mark.parametrize("source", ["compose", "kubernetes"])
def test_each_replica_command_starts_the_server_on_redis(source: str, redis_url: str, tmp_path: Path) -> None:
    if source == "compose":
        service = compose()["services"]["replica1"]
        arguments = service["command"]
        assert service["build"]["dockerfile"] == "servers/sqlite/Dockerfile"
        dockerfile = (DEPLOY.parent / service["build"]["dockerfile"]).read_text()
        # The image must hold the Redis client, or the replica stops at once ("--redis needs the redis package").
        assert any(line.rstrip().endswith(" redis") for line in dockerfile.splitlines() if "pip install" in line)
        token_variable = next(iter(service["environment"]))
    else:
        arguments, env = kubernetes_server_args()
        token_variable = env[0]["name"]
    assert token_variable == "PLAINMCP_SQLITE_AUTH_TOKENS"
    port = free_port()
    command = [*server_command("sqlite", None)[:3], *local(arguments, redis_url, port)]  # python -m plainmcp_sqlite
    log = (tmp_path / "server.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=log, env={"PATH": "/usr/bin:/bin", token_variable: "t" * 32})
    try:
        wait_healthy(f"http://127.0.0.1:{port}", time.monotonic() + 30, alive=lambda: process.poll() is None)
        health = httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=5).json()
        assert health["status"] == "ok" and health["sharedState"] == {
            **health["sharedState"],
            "kind": "redis",
            "reachable": True,
        }
        # The token the deployment names is the one the server asks for.
        assert httpx.post(f"http://127.0.0.1:{port}/mcp", json={}, trust_env=False, timeout=5).status_code == 401
    finally:
        stop_process(process)
        log.close()


def test_the_compose_proxy_configuration_is_valid_haproxy(tmp_path: Path) -> None:
    text = compose()["configs"]["haproxy"]["content"]
    for n in (1, 2, 3):
        text = text.replace(f"replica{n}:8000", f"127.0.0.1:{free_port()}")
    config = tmp_path / "haproxy.cfg"
    config.write_text(text.replace("bind :8000", f"bind 127.0.0.1:{free_port()}"))
    done = subprocess.run(
        [system_binary("haproxy", "haproxy"), "-c", "-f", str(config)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stdout + done.stderr
