"""``plainmcp demo`` finds servers it has never heard of: any installed distribution that registers a
``plainmcp.scenes`` entry point, in uv's tools, pipx's venvs or on PATH, read from its dist-info as pip
wrote it; and plays the scene in that server's own Python. The server here, ``plainmcp-toy``, exists
only in the test's temporary directory (it serves the core's notes example), so nothing in the core
can know its name.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from .installs import CORE, ROOT, SITE, bare_env, console_script, core_only_python, dist_info, make_venv, run_cli

TOY_PYPROJECT = """\
[project]
name = "plainmcp-toy"
version = "0.3.0"

[project.scripts]
plainmcp-toy = "plainmcp_toy.__main__:main"

[project.entry-points."plainmcp.scenes"]
toy = "plainmcp_toy.scene:play"
broken = "plainmcp_toy.scene:play_broken"
"""

#: The core README's example scene (this test is its check), and one that breaks.
README_SCENE = re.search(
    r"docs: tested by: tests/cli/test_demo_discovery.py::test_demo_plays_the_scene_of_a_server"
    r"_the_core_never_heard_of -->\n```python\n(.*?)```",
    (ROOT / "packages" / "plainmcp" / "README.md").read_text(encoding="utf-8"),
    re.S,
)
TOY_SCENE = (
    (README_SCENE.group(1) if README_SCENE else "")
    + """

async def play_broken(stage: demo.Stage) -> None:
    async with stage.stdio("toy server, a scene that breaks", []) as client:
        await client.list_all_tools()
        raise RuntimeError("the toy scene broke")
"""
)


@pytest.fixture(scope="module")
def core_python(tmp_path_factory) -> Path:
    return core_only_python(tmp_path_factory.mktemp("core") / "venv")


@pytest.fixture(scope="module")
def toy_source(tmp_path_factory) -> Path:
    """The toy server's project: a pyproject.toml and its package (its server is the notes example, which
    takes no arguments: the ones a scene passes are dropped)."""
    project = tmp_path_factory.mktemp("toy")
    package = project / "src" / "plainmcp_toy"
    package.mkdir(parents=True)
    (project / "pyproject.toml").write_text(TOY_PYPROJECT)
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "import sys\nfrom plainmcp.examples.notes import main\n\n"
        "if __name__ == '__main__':\n    sys.argv[1:] = []\n    main()\n"
    )
    (package / "scene.py").write_text(TOY_SCENE)
    return project


def toy_venv(path: Path, toy_source: Path, core: bool = True) -> Path:
    """A venv with the toy server installed as pip would (script, dist-info), and the core unless not
    ``core``; returns its script."""
    python = make_venv(path, [SITE, *([CORE] if core else []), toy_source / "src"])
    script = console_script(path / "bin" / "plainmcp-toy", python, "plainmcp_toy")
    dist_info(next((path / "lib").glob("python*/site-packages")), toy_source / "pyproject.toml")
    return script


def test_demo_plays_the_scene_of_a_server_the_core_never_heard_of(core_python, toy_source, tmp_path) -> None:
    script = toy_venv(tmp_path / "uv-tools" / "plainmcp-toy", toy_source)
    ran = run_cli(core_python, "demo", "toy", env=bare_env(tmp_path, UV_TOOL_DIR=str(tmp_path / "uv-tools")))
    assert ran.code == 0, ran.out[-2000:] + ran.err[-2000:]
    assert README_SCENE is not None
    assert "== notes server, which the core never heard of" in ran.out
    assert f"  using plainmcp-toy from uv tool: {script}" in ran.out
    assert "-> plainmcp-notes-example 0.1.0, protocol" in ran.out  # the handshake, printed by the kit
    assert "tools/list                               -> add_note, search_notes" in ran.out
    # A JSON-RPC error is a step's answer too (its code depends on the era the kit negotiated).
    assert "resources/read note://nothing            -> error -" in ran.out
    assert "Resource not found: note://nothing" in ran.out


def test_demo_failing_scene_says_why_and_the_next_scene_still_plays(core_python, toy_source, tmp_path) -> None:
    toy_venv(tmp_path / "pipx" / "venvs" / "plainmcp-toy", toy_source)
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "pipx-bin"))
    ran = run_cli(core_python, "demo", "broken", "toy", env=env)
    assert ran.code == 1
    assert "  broken scene failed: the toy scene broke" in ran.out
    assert "Failed scenes: broken" in ran.err
    assert "add_note, search_notes" in ran.out  # the scene after it played
    assert ran.out.index("broken scene failed") < ran.out.index("== notes server, which")  # in the order asked


def test_demo_server_python_without_the_scene_runner_is_a_failed_scene(core_python, toy_source, tmp_path) -> None:
    # A server venv whose Python cannot run this core's scene runner (here: no core at all, say a broken venv).
    toy_venv(tmp_path / "uv-tools" / "plainmcp-toy", toy_source, core=False)
    ran = run_cli(core_python, "demo", "toy", env=bare_env(tmp_path, UV_TOOL_DIR=str(tmp_path / "uv-tools")))
    assert ran.code == 1
    assert "== toy server\n  using plainmcp-toy from uv tool:" in ran.out
    assert "  toy scene failed: " in ran.out
    assert "No module named 'plainmcp'" in ran.out  # the child's last stderr line says why
    assert "Failed scenes: toy" in ran.err


def test_demo_finds_a_scene_through_a_script_on_path_before_pipx(core_python, toy_source, tmp_path) -> None:
    toy_venv(tmp_path / "pipx" / "venvs" / "plainmcp-toy", toy_source)
    on_path = toy_venv(tmp_path / "elsewhere", toy_source)
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"))
    env["PATH"] = str(on_path.parent) + os.pathsep + env["PATH"]
    ran = run_cli(core_python, "demo", "toy", env=env)
    assert ran.code == 0, ran.out[-2000:] + ran.err[-2000:]
    assert f"  using plainmcp-toy from PATH: {on_path}" in ran.out


def test_demo_finds_a_scene_of_a_script_whose_python_is_no_venv(core_python, toy_source, tmp_path) -> None:
    # A plain `pip install --user`: the script's Python is the machine's, whose sys.path (asked of it)
    # holds the user site-packages with the toy's dist-info. The core's venv Python does not see it.
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    assert base.is_file() and not (base.parent.parent / "pyvenv.cfg").exists()
    user_site = (
        tmp_path / "userbase" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    )
    user_site.mkdir(parents=True)
    (user_site / "plainmcp_tests.pth").write_text(f"{SITE}\n{CORE}\n{toy_source / 'src'}\n")
    dist_info(user_site, toy_source / "pyproject.toml")
    script = console_script(tmp_path / "userbase" / "bin" / "plainmcp-toy", base, "plainmcp_toy")
    env = bare_env(tmp_path, PYTHONUSERBASE=str(tmp_path / "userbase"))
    env["PATH"] = str(script.parent) + os.pathsep + env["PATH"]
    ran = run_cli(core_python, "demo", "toy", env=env)
    assert ran.code == 0, ran.out[-2000:] + ran.err[-2000:]
    assert f"  using plainmcp-toy from PATH: {script}" in ran.out
    assert "add_note, search_notes" in ran.out


def test_demo_skips_a_server_that_registers_no_scene(core_python, toy_source, tmp_path) -> None:
    # The same server installed without its scene entry point: a plainmcp-* script alone is not a scene.
    script = toy_venv(tmp_path / "uv-tools" / "plainmcp-toy", toy_source)
    record = next(script.parent.parent.glob("lib/python*/site-packages/plainmcp_toy-*.dist-info"))
    (record / "entry_points.txt").write_text("[console_scripts]\nplainmcp-toy = plainmcp_toy.__main__:main\n")
    ran = run_cli(core_python, "demo", "--skip-missing", env=bare_env(tmp_path, UV_TOOL_DIR=str(tmp_path / "uv-tools")))
    assert ran.code == 0, ran.err
    assert "plainmcp-toy" not in ran.out


def test_demo_from_a_checkout_reports_each_of_its_servers_not_installed(core_python, tmp_path) -> None:
    # Run from the checkout, the demo expects every server of it that registers a scene: none is installed here.
    servers = sorted(
        name
        for pyproject in (ROOT / "servers").glob("*/pyproject.toml")
        for name in tomllib.loads(pyproject.read_text())["project"].get("entry-points", {}).get("plainmcp.scenes", {})
    )
    assert len(servers) >= 5
    ran = run_cli(core_python, "demo", env=bare_env(tmp_path))
    assert ran.code == 1
    for name in servers:
        assert f"== {name} server: not installed, skipped" in ran.out
    assert f"Not installed, so not shown: {', '.join(servers)}" in ran.err
    assert "add_note, search_notes" in ran.out  # the core's own scene plays regardless
    assert run_cli(core_python, "demo", "--skip-missing", env=bare_env(tmp_path)).code == 0


def test_scene_runner_without_that_scene_is_a_usage_error(core_python, tmp_path) -> None:
    command = [str(core_python), "-m", "plainmcp.cli.scene", "nosuch", "--using", "x", "--", "true"]
    ran = subprocess.run(command, capture_output=True, text=True, timeout=60, env=bare_env(tmp_path))
    assert ran.returncode == 2
    assert "no scene named 'nosuch'" in ran.stderr
    assert ran.stdout == ""
