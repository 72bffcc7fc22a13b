"""Pinned npm packages for one test area, installed once under ``.ci-cache/node/<key>`` (git-ignored).

``tools/node_tools.py`` installs the command-line tools the whole suite drives; a test area that needs
libraries of its own (the TypeScript SDK client, the MCP Apps host bridge, an OAuth authorization server)
calls :func:`ensure_prefix` with exact versions, the same way: npm, exact versions, a stamp file naming them,
reinstalled from scratch when anything differs. Standard library only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".ci-cache" / "node"
STAMP = ".plainmcp-installed"
NODE_MAJOR = 20


def node() -> str:
    """The pinned Node of tools/node_tools.py when present (PLAINMCP_NODE_BIN or its prefix), else the
    machine's when it is at least Node 20."""
    candidates = []
    if os.environ.get("PLAINMCP_NODE_BIN"):
        candidates.append(Path(os.environ["PLAINMCP_NODE_BIN"]) / "node")
    import node_tools  # this directory is on sys.path whenever this module is imported

    candidates.append(node_tools.paths()["node_bin"] / "node")
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("no Node: run python3 tools/node_tools.py (or install nodejs >= 20)")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, check=True).stdout
    if int(version.strip().lstrip("v").split(".")[0]) < NODE_MAJOR:
        raise RuntimeError(f"{found} is {version.strip()}; Node >= {NODE_MAJOR} is needed")
    return found


def _npm(node_path: str) -> str:
    beside = Path(node_path).with_name("npm")
    found = str(beside) if beside.exists() else shutil.which("npm")
    if found is None:
        raise RuntimeError("no npm to install packages with")
    return found


def _installed_version(prefix: Path, package: str) -> str | None:
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        return str(json.loads(manifest.read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def ensure_prefix(key: str, packages: dict[str, str], *, scripts: bool = False) -> Path:
    """``.ci-cache/node/<key>`` with exactly ``packages`` (name -> version) installed; installed from scratch
    unless its stamp names these versions and they are there. ``scripts`` allows install scripts (esbuild's
    binary comes from one); off by default."""
    prefix = CACHE / key
    specs = [f"{name}@{version}" for name, version in packages.items()]
    stamp = prefix / STAMP
    if (
        stamp.exists()
        and stamp.read_text().split() == specs
        and all(_installed_version(prefix, name) == version for name, version in packages.items())
    ):
        return prefix
    node_path = node()
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.mkdir(parents=True)
    (prefix / "package.json").write_text('{"private": true}\n')
    env = {**os.environ, "PATH": f"{Path(node_path).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    flags = ["--no-audit", "--no-fund", "--save-exact", *([] if scripts else ["--ignore-scripts"])]
    subprocess.run(
        [_npm(node_path), "install", *flags, *specs], cwd=prefix, env=env, check=True, capture_output=True, timeout=300
    )
    stamp.write_text("\n".join(specs) + "\n")
    return prefix
