"""docs/replicas.md's command, run as written from the installed server: only the port numbers (the test's
free port, the test's Redis) and the database (the bundled sample) are this machine's."""

from __future__ import annotations

import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.docs.readme import find_block
from tests.e2e.http_server import free_port, stop_process, wait_healthy
from tests.replicas.test_faults import children_of

SAMPLE_DB = Path(__file__).resolve().parents[2] / "servers/sqlite/src/plainmcp_sqlite/sample/sample.db"


def test_the_workers_line_serves_with_three_workers_on_redis(redis_server, redis_url, tmp_path) -> None:
    block = find_block(Path("docs/replicas.md"), "--workers 3")
    (line,) = block.commands()
    port = free_port()
    words = shlex.split(
        line.replace("6379", str(redis_server.port))
        .replace("--port 8000", f"--port {port}")
        .replace("shop.db", str(SAMPLE_DB))
    )
    assert words[0] == "plainmcp-sqlite"
    log = (tmp_path / "log").open("wb")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"}
    process = subprocess.Popen(words, cwd=tmp_path, env=env, stdout=log, stderr=log)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", time.monotonic() + 30, alive=lambda: process.poll() is None)
        health = httpx.get(f"http://127.0.0.1:{port}/health", trust_env=False, timeout=5).json()
        assert health["sharedState"]["kind"] == "redis" and health["sharedState"]["reachable"] is True
        assert len(children_of(process.pid)) == 3
    finally:
        stop_process(process)
        log.close()
