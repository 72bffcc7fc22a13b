"""The official TypeScript SDK client (``@modelcontextprotocol/client``, v2) as a foreign client of the replicas.

``session.mjs`` drives one whole session and prints what it saw as one JSON line; :func:`run_session` runs it
with a pinned Node and a pinned SDK, installed (once) under ``.ci-cache/node/ts-client`` by ``tools/npm_prefix.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))
import npm_prefix  # noqa: E402  (tools/ is not a package)

SCRIPT = Path(__file__).with_name("session.mjs")
#: v2 of the TypeScript SDK: the client package (v1's single ``@modelcontextprotocol/sdk`` 1.x speaks no
#: 2026-07-28), and the official tasks client that plugs into it (the SDK itself refuses ``resultType: "task"``).
PACKAGES = {"@modelcontextprotocol/client": "2.4.0", "@modelcontextprotocol/ext-tasks": "0.2.2"}


def _node() -> str:
    return str(npm_prefix.node())


def ensure_installed() -> Path:
    """The prefix with the pinned SDK packages (installed once; see tools/npm_prefix.py)."""
    return Path(npm_prefix.ensure_prefix("ts-client", PACKAGES))


def run_session(era: str, url: str, timeout: float = 60.0) -> dict[str, Any]:
    """Run ``session.mjs`` for ``era`` ("legacy" or "modern") against ``url``; its JSON report."""
    prefix = ensure_installed()
    modules = prefix / "node_modules" / "@modelcontextprotocol"
    env = {
        **os.environ,
        "PLAINMCP_TS_SDK": str(modules / "client" / "dist" / "index.mjs"),
        "PLAINMCP_TS_TASKS": str(modules / "ext-tasks" / "dist" / "client" / "index.js"),
    }
    done = subprocess.run(
        [_node(), str(SCRIPT), era, url], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise AssertionError(f"session.mjs {era} exited {done.returncode}\n{done.stdout}\n{done.stderr}")
    report: dict[str, Any] = json.loads(lines[-1])
    return report
