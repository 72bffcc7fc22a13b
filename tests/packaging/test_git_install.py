"""``pipx install "git+<url>#subdirectory=servers/<name>"``: how people install an unreleased Python tool,
against a local bare repository cloned from this checkout (``git+file://``), offline, with both pipx
backends; then ``pipx reinstall`` and ``pipx upgrade``, and the server starts each time.

The core is resolved by the mechanism every checkout build uses (each server's hatch_build.py): the
installer clones the whole repository and builds ``servers/<name>`` inside that clone, where the core sits
at ``../../packages/plainmcp``, so the server requires ``plainmcp @ file://<the clone>/packages/plainmcp``
and the installer builds the core from the same clone, in the same run: the same commit as the server,
never an index's (which does not have it) nor another commit's. ``reinstall`` and ``upgrade`` clone the
URL again, so the clone being gone afterwards (pip's is a temporary directory) costs nothing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .offline import ROOT, initialize, offline_env, run, wheelhouse

BACKENDS = ("pip", "uv")
APP = "plainmcp-sqlite"


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A bare clone of this checkout's HEAD (committed work only, as a user's clone of the repository has)."""
    path = tmp_path_factory.mktemp("remote") / "plainmcp.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(ROOT), str(path)], check=True, timeout=120)
    head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    return path, head.stdout.strip()


def _core_files(env: dict[str, str]) -> list[str]:
    python = Path(env["PIPX_HOME"]) / "venvs" / APP / "bin" / "python"
    code = "import importlib.metadata as m; print(json.dumps([str(f) for f in m.files('plainmcp')]))"
    return json.loads(run([str(python), "-c", "import json; " + code], env=env, cwd=ROOT).stdout)


def _committed_core_modules(commit: str, bare: Path) -> set[str]:
    listed = subprocess.run(
        ["git", "-C", str(bare), "ls-tree", "-r", "--name-only", commit, "packages/plainmcp/src/plainmcp/cli"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {line.removeprefix("packages/plainmcp/src/") for line in listed.stdout.splitlines() if line.endswith(".py")}


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipx_git_subdirectory_install_reinstall_and_upgrade(backend, bare, tmp_path) -> None:
    repository, commit = bare
    env = offline_env(tmp_path, wheelhouse())
    env["PIPX_DEFAULT_BACKEND"] = backend
    spec = f"git+{repository.as_uri()}#subdirectory=servers/sqlite"
    home = Path(env["HOME"])
    for command in (["pipx", "install", spec], ["pipx", "reinstall", APP], ["pipx", "upgrade", APP]):
        run(command, env=env, cwd=home, timeout=300)
        metadata = json.loads((Path(env["PIPX_HOME"]) / "venvs" / APP / "pipx_metadata.json").read_text())
        assert metadata["main_package"]["package_or_url"] == spec
        # The core came from the same commit: its cli modules are exactly that commit's.
        installed = {name for name in _core_files(env) if name.startswith("plainmcp/cli/") and name.endswith(".py")}
        assert installed == _committed_core_modules(commit, repository)
        result = initialize([str(Path(env["PIPX_BIN_DIR"]) / APP)], env=env, cwd=home)  # its sample database
        assert result["serverInfo"]["name"] == APP
    # A pipx install of one server brings no plainmcp command, and needs none to configure a client.
    printed = run([str(Path(env["PIPX_BIN_DIR"]) / APP), "config", "--client", "claude"], env=env, cwd=home)
    assert json.loads(printed.stdout)["mcpServers"]["sqlite"]["command"] == str(Path(env["PIPX_BIN_DIR"]) / APP)
