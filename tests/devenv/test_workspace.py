"""Issue 16: one place defines the development environment, the root pyproject.toml's hatch environment.

dev.py (and the release and wheelhouse tasks) must install exactly what hatch would: the workspace members, the
environment's dependencies, with its env-vars. These tests read the table directly and compare; one runs dev.py on
a miniature repository to prove it follows the table rather than lists of its own.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from .support import ROOT, load

dev = load(Path("dev.py"))
workspace = load(Path("tools/workspace.py"))


def hatch_env(root: Path = ROOT) -> dict:
    return tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["envs"]["default"]


def editables(command: list[str]) -> set[Path]:
    return {Path(command[i + 1]) for i, arg in enumerate(command) if arg == "-e"}


def test_dev_py_installs_every_package_of_the_tree_as_the_hatch_workspace_members():
    tracked = subprocess.run(
        # tracked or new (not ignored): a package being added counts before its first commit
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*pyproject.toml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    packages = {(ROOT / path).parent for path in tracked if path != "pyproject.toml"}
    members = {
        path.parent for glob in hatch_env()["workspace"]["members"] for path in ROOT.glob(f"{glob}/pyproject.toml")
    }
    command, _ = dev.install_plan(workspace.load(ROOT), "python")
    assert editables(command) == members == packages


def test_dev_py_installs_the_hatch_dependencies_with_the_hatch_env_vars(monkeypatch):
    monkeypatch.delenv("PLAINMCP_RELEASE", raising=False)
    command, env = dev.install_plan(workspace.load(ROOT), "python")
    tools = [arg for arg in command[command.index("--disable-pip-version-check") + 1 :] if arg != "-e"]
    assert tools[: len(hatch_env()["dependencies"])] == hatch_env()["dependencies"]
    assert set(tools) - set(hatch_env()["dependencies"]) == {str(path) for path in editables(command)}
    expected = {name: str(value) for name, value in hatch_env()["env-vars"].items()}
    assert expected and {name: env.get(name) for name in expected} == expected


def _miniature(root: Path, members: list[str]) -> None:
    (root / "pyproject.toml").write_text(
        "[tool.hatch.envs.default]\ndependencies = ['pytest']\n"
        "[tool.hatch.envs.default.env-vars]\nMINIATURE = '1'\n"
        f"[tool.hatch.envs.default.workspace]\nmembers = {members!r}\n"
    )
    for package in ("packages/core", "servers/one", "servers/two"):
        (root / package).mkdir(parents=True)
        (root / package / "pyproject.toml").write_text(f"[project]\nname = '{Path(package).name}'\n")
    (root / "servers" / "notes").mkdir()  # a folder without a pyproject.toml is no member


def test_dev_py_follows_the_workspace_table_not_lists_of_its_own(tmp_path, monkeypatch):
    monkeypatch.delenv("PLAINMCP_RELEASE", raising=False)
    _miniature(tmp_path, ["packages/*", "servers/one"])
    command, env = dev.install_plan(workspace.load(tmp_path), "python")
    assert editables(command) == {tmp_path / "packages" / "core", tmp_path / "servers" / "one"}
    assert "pytest" in command and "mcp==2.3.0" not in command
    assert env["MINIATURE"] == "1" and "PLAINMCP_RELEASE" not in env


def test_a_member_glob_that_matches_no_package_is_an_error(tmp_path):
    _miniature(tmp_path, ["packages/*", "server/*"])
    with pytest.raises(workspace.WorkspaceError, match="'server/\\*' matches no directory"):
        workspace.load(tmp_path)


def test_release_files_and_wheelhouse_cover_the_workspace_members():
    members = list(workspace.load(ROOT).members)
    assert load(Path("tools/dist.py")).projects() == members
    assert load(Path("tools/wheelhouse.py")).projects() == [member / "pyproject.toml" for member in members]


def test_hatch_scripts_run_what_the_dev_py_commands_of_the_same_name_run():
    scripts = hatch_env()["scripts"]
    assert set(scripts) <= dev.COMMANDS | {"bench"}
    assert scripts["test"].startswith("python -m pytest")
    assert scripts["demo"].startswith("plainmcp demo")
    program = scripts["bench"].split()[1]
    assert dev._bench_script("bench") == ROOT / program


def test_root_pyproject_holds_tooling_only():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert set(config) == {"project", "tool"}  # no [build-system]: nothing here is built or published
    assert set(config["project"]) <= {"name", "version", "requires-python", "description"}
    assert set(config["tool"]["hatch"]) == {"envs"}  # no build or metadata tables: the root is no package
    assert hatch_env()["skip-install"] is True
