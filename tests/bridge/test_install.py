"""The bridge README's install line, run as written from inside the clone, offline (like the servers' lines)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..docs.readme import blocks
from ..packaging.offline import ROOT, offline_env, project_version, run, wheelhouse

PACKAGE = ROOT / "packages" / "plainmcp-bridge"
TEST = "tests/bridge/test_install.py::test_readme_pipx_line_installs_the_bridge"


def test_readme_pipx_line_installs_the_bridge(tmp_path: Path) -> None:
    (line,) = [
        command
        for block in blocks(PACKAGE / "README.md")
        if block.kind == "tested by" and block.detail == TEST
        for command in block.commands()
    ]
    assert line == 'pipx install "$(git rev-parse --show-toplevel)/packages/plainmcp-bridge"'
    before = _status()
    env = offline_env(tmp_path, wheelhouse())
    env["PIPX_DEFAULT_BACKEND"] = "pip"
    run(["bash", "-c", line], env=env, cwd=ROOT / "tests")
    home = Path(env["PIPX_HOME"])
    version = run([str(Path(env["PIPX_BIN_DIR"]) / "plainmcp-bridge"), "--version"], env=env, cwd=tmp_path)
    assert version.stdout.split() == ["plainmcp-bridge", project_version(PACKAGE)]
    # The core came from this clone, not from an index.
    python = home / "venvs" / "plainmcp-bridge" / "bin" / "python"
    code = "import importlib.metadata as m; print(m.distribution('plainmcp').read_text('direct_url.json'))"
    direct = json.loads(run([str(python), "-c", code], env=env, cwd=ROOT).stdout)
    assert direct["url"] == (ROOT / "packages" / "plainmcp").as_uri()
    # Only what the bridge needs at run time: the official model clients are test tools, not dependencies.
    for name in ("ollama", "openai"):
        missing = subprocess.run([str(python), "-c", f"import {name}"], capture_output=True, env=env)
        assert missing.returncode != 0, name
    # Building from the checkout left nothing behind in it (no build/, no *.egg-info).
    assert _status() == before


def _status() -> list[str]:
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--", str(PACKAGE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return [line for line in status.splitlines() if "__pycache__" not in line]
