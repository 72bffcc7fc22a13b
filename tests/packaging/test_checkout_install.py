"""Issue 14, item 1: the READMEs' install lines from a checkout, run exactly as written, offline.

Each README's install block names the test that runs it (``<!-- docs: tested by: ... -->``); the lines are
read from the README itself, so the docs and the test cannot drift apart. pipx runs with both of its
backends (pip, and uv, which pipx picks by itself when uv is installed); the lines run from different
directories inside the clone, and ``pipx reinstall`` / ``reinstall-all`` / ``upgrade`` from outside it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ..docs.readme import blocks
from .offline import ROOT, SERVERS, initialize, offline_env, project_version, run, server_args, wheelhouse

BACKENDS = ("pip", "uv")
# "any working directory inside the clone": each server's line runs from a different one.
CWDS = {
    "everything": "tests",
    "filesystem": "servers",
    "prompts": "packages/plainmcp/src",
    "sqlite": "servers/sqlite",
    "weather": ".",
}


def readme_commands(readme: Path, test: str) -> list[str]:
    """The command lines of the blocks of ``readme`` marked as run by ``test`` (a function of this module)."""
    found = [
        command
        for block in blocks(readme)
        if block.kind == "tested by" and block.detail == f"tests/packaging/test_checkout_install.py::{test}"
        for command in block.commands()
    ]
    assert found, f"{readme.relative_to(ROOT)} has no block marked `tested by: ...::{test}`"
    return found


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """One offline user per pipx backend (a venv keeps the backend that made it), sharing the wheelhouse."""
    wheels = wheelhouse()
    envs = {}
    for backend in BACKENDS:
        env = offline_env(tmp_path_factory.mktemp(f"user-{backend}"), wheels)
        env["PIPX_DEFAULT_BACKEND"] = backend
        envs[backend] = env
    return envs


def _pipx_metadata(env: dict[str, str], app: str) -> dict:
    return json.loads((Path(env["PIPX_HOME"]) / "venvs" / app / "pipx_metadata.json").read_text())


def _core_source(env: dict[str, str], app: str) -> str:
    """Where the core in ``app``'s pipx venv was installed from (its PEP 610 direct_url.json)."""
    python = Path(env["PIPX_HOME"]) / "venvs" / app / "bin" / "python"
    code = "import importlib.metadata as m; print(m.distribution('plainmcp').read_text('direct_url.json'))"
    return json.loads(run([str(python), "-c", code], env=env, cwd=ROOT).stdout)["url"]


def _answers(name: str, env: dict[str, str], command: list[str], cwd: Path) -> None:
    home = Path(env["HOME"])
    result = initialize([*command, *server_args(name, home)], env=env, cwd=cwd)
    assert result["serverInfo"]["name"] == f"plainmcp-{name}"
    assert result["serverInfo"]["version"] == project_version(ROOT / "servers" / name)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", SERVERS)
def test_readme_pipx_line_installs_each_server(name: str, backend: str, users: dict[str, dict[str, str]]) -> None:
    env = users[backend]
    (line,) = readme_commands(ROOT / "servers" / name / "README.md", "test_readme_pipx_line_installs_each_server")
    assert line == f'pipx install "$(git rev-parse --show-toplevel)/servers/{name}"'
    run(["bash", "-c", line], env=env, cwd=ROOT / CWDS[name])

    app = f"plainmcp-{name}"
    metadata = _pipx_metadata(env, app)
    assert metadata["backend"] == backend
    # An absolute path, so that reinstall/upgrade work from any directory later.
    assert metadata["main_package"]["package_or_url"] == str(ROOT / "servers" / name)
    # The regression of issue 14: the core came from this checkout, not from an index that does not have it.
    assert _core_source(env, app) == (ROOT / "packages" / "plainmcp").as_uri()
    _answers(name, env, [str(Path(env["PIPX_BIN_DIR"]) / app)], cwd=Path(env["HOME"]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipx_reinstall_upgrade_and_reinstall_all_keep_a_checkout_server(
    backend: str, users: dict[str, dict[str, str]]
) -> None:
    # A pipx home of its own holding this one app: reinstall-all redoes every venv of a home, and pipx 1.18 does
    # that in parallel threads, where its uv backend's lookup of the uv binary can race CPython 3.11's lazy
    # sysconfig set-up (TypeError: "uv" + None, seen once in CI with the six venvs of the shared home) -- a bug of
    # pipx and uv, not of these packages, which this test is about.
    env = {**users[backend]}
    home = Path(env["HOME"]) / f"reinstall-{backend}"
    env.update(PIPX_HOME=str(home / "pipx"), PIPX_BIN_DIR=str(home / "bin"), PIPX_MAN_DIR=str(home / "man"))
    app = "plainmcp-sqlite"
    outside = Path(users[backend]["HOME"])  # not inside the clone: the recorded absolute path must carry it
    run(["pipx", "install", str(ROOT / "servers" / "sqlite")], env=env, cwd=outside)
    commands = [["pipx", "reinstall", app], ["pipx", "upgrade", app]]
    if backend == "uv":  # reinstall-all redoes every venv of the user: once is enough (the uv backend is quick)
        commands.append(["pipx", "reinstall-all"])
    for command in commands:
        run(command, env=env, cwd=outside)
        assert _pipx_metadata(env, app)["main_package"]["package_or_url"] == str(ROOT / "servers" / "sqlite")
        assert _core_source(env, app) == (ROOT / "packages" / "plainmcp").as_uri()
        _answers("sqlite", env, [str(Path(env["PIPX_BIN_DIR"]) / app)], cwd=outside)


@pytest.mark.parametrize("name", SERVERS)
def test_readme_uvx_line_runs_each_server(name: str, users: dict[str, dict[str, str]]) -> None:
    env = users["uv"]
    (line,) = readme_commands(ROOT / "servers" / name / "README.md", "test_readme_uvx_line_runs_each_server")
    assert line.startswith(f'uvx --from "$(git rev-parse --show-toplevel)/servers/{name}" plainmcp-{name}')
    server_args(name, Path(env["HOME"]))  # the directories the line names (~/notes) exist in this home
    result = initialize(["bash", "-c", line], env=env, cwd=ROOT / CWDS[name])
    assert result["serverInfo"]["name"] == f"plainmcp-{name}"
    assert result["serverInfo"]["version"] == project_version(ROOT / "servers" / name)


def test_readme_pipx_line_installs_the_core_command(users: dict[str, dict[str, str]]) -> None:
    env = users["pip"]
    (line,) = readme_commands(
        ROOT / "packages" / "plainmcp" / "README.md", "test_readme_pipx_line_installs_the_core_command"
    )
    assert line == 'pipx install "$(git rev-parse --show-toplevel)/packages/plainmcp"'
    run(["bash", "-c", line], env=env, cwd=ROOT / "servers")
    version = run([str(Path(env["PIPX_BIN_DIR"]) / "plainmcp"), "--version"], env=env, cwd=Path(env["HOME"]))
    assert version.stdout.split() == ["plainmcp", project_version(ROOT / "packages" / "plainmcp")]


def test_the_install_lines_leave_the_checkout_clean(users: dict[str, dict[str, str]]) -> None:
    """Building in place must not leave files in the clone (build/, *.egg-info, caches) for git to see."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--ignored", "--", "servers", "packages"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    strays = [
        line
        for line in status.splitlines()
        if line.startswith("!! ") and ("/build/" in line or line.rstrip("/").endswith(("build", ".egg-info")))
    ]
    assert not strays, strays


def test_uvx_runs_the_checkout_as_edited_not_a_stale_build(users: dict[str, dict[str, str]], tmp_path: Path) -> None:
    """uv reuses a build of a directory until a cache key changes: [tool.uv] cache-keys names the sources, so an
    edit of the server or of the core reaches the next `uvx --from` (by default only pyproject.toml counts)."""
    env = users["uv"]
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, capture_output=True)
    command = ["uvx", "--from", str(clone / "servers" / "sqlite"), "plainmcp-sqlite", "--version"]
    first = run(command, env=env, cwd=clone)
    assert first.stdout.split() == ["plainmcp-sqlite", project_version(clone / "servers" / "sqlite")]
    assert "edited core" not in first.stderr
    core = clone / "packages" / "plainmcp" / "src" / "plainmcp" / "__init__.py"
    core.write_text(core.read_text() + '\nimport sys\n\nsys.stderr.write("edited core\\n")\n')
    assert "edited core" in run(command, env=env, cwd=clone).stderr
