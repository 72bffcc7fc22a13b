"""The official TypeScript SDK client (``@modelcontextprotocol/client``, v2) as a foreign client of the replicas.

``session.mjs`` drives one whole session and prints what it saw as one JSON line; :func:`run_session` runs it
with a pinned Node and a pinned SDK, installed (once) under ``.ci-cache/node/ts-client`` the way
``tools/node_tools.py`` installs the other Node tools: npm, an exact version, a stamp file naming it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = Path(__file__).with_name("session.mjs")
PREFIX = ROOT / ".ci-cache" / "node" / "ts-client"
#: v2 of the TypeScript SDK: the client package (v1's single ``@modelcontextprotocol/sdk`` 1.x speaks no
#: 2026-07-28), and the official tasks client that plugs into it (the SDK itself refuses ``resultType: "task"``).
PACKAGES = {"@modelcontextprotocol/client": "2.4.0", "@modelcontextprotocol/ext-tasks": "0.2.2"}
STAMP = ".plainmcp-installed"
NODE_MAJOR = 20  # the SDK's engines field: node >= 20


def _node() -> str:
    """The pinned Node of tools/node_tools.py when present (PLAINMCP_NODE_BIN or its prefix), else the machine's."""
    candidates = []
    if os.environ.get("PLAINMCP_NODE_BIN"):
        candidates.append(Path(os.environ["PLAINMCP_NODE_BIN"]) / "node")
    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import node_tools

        candidates.append(node_tools.paths()["node_bin"] / "node")
    finally:
        sys.path.pop(0)
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("no Node: run python3 tools/node_tools.py (or install nodejs >= 20)")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    if int(version.strip().lstrip("v").split(".")[0]) < NODE_MAJOR:
        raise RuntimeError(f"{found} is {version.strip()}; the TS SDK needs Node >= {NODE_MAJOR}")
    return found


def _npm(node: str) -> str:
    beside = Path(node).with_name("npm")
    found = str(beside) if beside.exists() else shutil.which("npm")
    if found is None:
        raise RuntimeError("no npm to install the TypeScript SDK with")
    return found


def _installed_version(package: str) -> str | None:
    manifest = PREFIX / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_installed() -> Path:
    """The prefix, installed (from scratch) unless its stamp names the pinned versions and they are there."""
    specs = [f"{name}@{version}" for name, version in PACKAGES.items()]
    stamp = PREFIX / STAMP
    if (
        stamp.exists()
        and stamp.read_text().split() == specs
        and all(_installed_version(name) == version for name, version in PACKAGES.items())
    ):
        return PREFIX
    node = _node()
    shutil.rmtree(PREFIX, ignore_errors=True)
    PREFIX.mkdir(parents=True)
    (PREFIX / "package.json").write_text('{"private": true}\n')
    env = {**os.environ, "PATH": f"{Path(node).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run(
        [_npm(node), "install", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact", *specs],
        cwd=PREFIX,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    stamp.write_text("\n".join(specs) + "\n")
    return PREFIX


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
