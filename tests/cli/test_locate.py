"""``plainmcp config`` and ``plainmcp demo`` find a server where users install it: pipx's venvs (with
or without PIPX_HOME), pipx's bin directory, uv's tools, PATH, this environment; and say which one.

``plainmcp`` runs here with a Python that has the core but no server (as ``pipx install`` of the core
gives), against real venvs laid out as pipx and uv lay them out, each with a runnable console script.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from plainmcp.cli.locate import interpreter_of

from .installs import ROOT, bare_env, built_core_python, core_only_python, pipx_install, run_cli, server_venv
from .support import plainmcp


@pytest.fixture(scope="module")
def core_python(tmp_path_factory) -> Path:
    return core_only_python(tmp_path_factory.mktemp("core") / "venv")


def test_core_only_python_has_no_server(core_python, tmp_path) -> None:
    # The premise of every test here: without the places below, nothing is found.
    ran = run_cli(core_python, "config", "sqlite", "--client", "claude", env=bare_env(tmp_path))
    assert ran.code == 1
    assert "plainmcp-sqlite is not installed" in ran.err


def test_locate_pipx_venv_named_by_pipx_bin_dir_link(core_python, tmp_path) -> None:
    script = pipx_install(tmp_path / "pipx", tmp_path / "pipx-bin", "sqlite")
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "pipx-bin"))
    ran = run_cli(core_python, "config", "sqlite", "--client", "cursor", env=env)
    assert ran.code == 0, ran.err
    command = ran.json()["mcpServers"]["sqlite"]["command"]
    assert command == str(tmp_path / "pipx-bin" / "plainmcp-sqlite")  # pipx's public link, not its venv
    assert Path(command).resolve() == script.resolve()
    assert f"plainmcp config: using plainmcp-sqlite from pipx: {command}" in ran.err


def test_locate_pipx_venv_without_a_link_names_the_venv_script(core_python, tmp_path) -> None:
    script = pipx_install(tmp_path / "pipx", None, "sqlite")
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "elsewhere"))
    ran = run_cli(core_python, "config", "sqlite", "--client", "claude", env=env)
    assert ran.code == 0, ran.err
    entry = ran.json()["mcpServers"]["sqlite"]
    assert entry["command"] == str(script)
    # The snippet's command is a working server: start it as the client would.
    inspected = run_cli(
        core_python, "inspect", "--json", "--", entry["command"], *entry["args"], env=bare_env(tmp_path)
    )
    assert inspected.code == 0, inspected.err
    assert inspected.json()["serverInfo"]["name"] == "plainmcp-sqlite"


@pytest.mark.parametrize("home", [".local/pipx", ".local/share/pipx"])
def test_locate_pipx_default_homes_without_pipx_home(core_python, tmp_path, home) -> None:
    script = pipx_install(tmp_path / "home" / home, tmp_path / "home" / ".local" / "bin", "prompts")
    ran = run_cli(core_python, "config", "plainmcp-prompts", "--client", "claude", env=bare_env(tmp_path))
    assert ran.code == 0, ran.err
    command = ran.json()["mcpServers"]["prompts"]["command"]
    assert command == str(tmp_path / "home" / ".local" / "bin" / "plainmcp-prompts")
    assert Path(command).resolve() == script.resolve()


def test_locate_uv_tool_dir(core_python, tmp_path) -> None:
    server_venv(tmp_path / "uv-tools" / "plainmcp-sqlite", "sqlite")
    env = bare_env(tmp_path, UV_TOOL_DIR=str(tmp_path / "uv-tools"))
    ran = run_cli(core_python, "config", "sqlite", "--client", "claude", env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["mcpServers"]["sqlite"]["command"] == str(
        tmp_path / "uv-tools" / "plainmcp-sqlite" / "bin" / "plainmcp-sqlite"
    )
    assert "from uv tool:" in ran.err


def test_locate_path_comes_before_pipx(core_python, tmp_path) -> None:
    server_venv(tmp_path / "somewhere", "sqlite")
    pipx_install(tmp_path / "pipx", None, "sqlite")
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"))
    env["PATH"] = str(tmp_path / "somewhere" / "bin") + os.pathsep + env["PATH"]
    ran = run_cli(core_python, "config", "sqlite", "--client", "claude", "--explain", env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["mcpServers"]["sqlite"]["command"] == str(tmp_path / "somewhere" / "bin" / "plainmcp-sqlite")
    assert "from PATH:" in ran.err
    assert "looked in: this environment" in ran.err


def test_locate_this_environment_comes_first() -> None:
    # The test venv has every server (dev.py installs them): the one matching the running core wins.
    ran = plainmcp("config", "sqlite", "--client", "claude", env={"PATH": "/nonexistent"})
    assert ran.code == 0, ran.err
    assert Path(ran.json()["mcpServers"]["sqlite"]["command"]).parent == Path(sys.executable).parent
    assert "using plainmcp-sqlite from this environment:" in ran.err


def test_locate_missing_server_gives_the_checkout_install_line(core_python, tmp_path) -> None:
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), UV_TOOL_DIR=str(tmp_path / "uv"))
    ran = run_cli(core_python, "config", "weather", "--client", "claude", env=env, cwd=tmp_path)
    assert ran.code == 1
    assert ran.out == ""
    assert f'pipx install "{ROOT / "servers" / "weather"}"' in ran.err  # works from any directory
    assert "pipx install plainmcp-weather   (from PyPI, once it is released there)" in ran.err
    for place in ("this environment", "PATH", f"pipx ({tmp_path / 'pipx'})", f"uv tools ({tmp_path / 'uv'})"):
        assert place in ran.err


def test_interpreter_of_reads_both_shebang_forms_pip_writes(tmp_path) -> None:
    plain = tmp_path / "plain"
    plain.write_text(f"#!{sys.executable}\nimport sys\n")
    # pip's form for an interpreter path too long for a #! line (or with spaces in it).
    long_form = tmp_path / "long"
    long_form.write_text(f"#!/bin/sh\n'''exec' \"{sys.executable}\" \"$0\" \"$@\"\n' '''\nimport sys\n")
    assert interpreter_of(plain) == sys.executable
    assert interpreter_of(long_form) == sys.executable
    shell = tmp_path / "shell"
    shell.write_text("#!/bin/sh\nexec true\n")
    assert interpreter_of(shell) is None
    assert interpreter_of(tmp_path / "absent") is None


def test_locate_checkout_source_importable_by_this_python(core_python, tmp_path) -> None:
    # A clone's server on PYTHONPATH (not installed): run with this Python, and the snippet keeps the path.
    source = ROOT / "servers" / "sqlite" / "src"
    env = bare_env(tmp_path, PYTHONPATH=str(source))
    ran = run_cli(core_python, "config", "sqlite", "--client", "claude", env=env, cwd=tmp_path)
    assert ran.code == 0, ran.err
    entry = ran.json()["mcpServers"]["sqlite"]
    assert (entry["command"], entry["args"]) == (str(core_python), ["-m", "plainmcp_sqlite"])
    assert entry["env"] == {"PYTHONPATH": str(source)}
    assert f"from the checkout at {ROOT}, with this Python (python -m)" in ran.err
    assert "warning" not in ran.err  # PYTHONPATH is ours, not a server option to check
    inspected = run_cli(
        core_python,
        "inspect",
        "--json",
        "--env",
        f"PYTHONPATH={source}",
        "--",
        entry["command"],
        *entry["args"],
        env=bare_env(tmp_path),
    )
    assert inspected.code == 0, inspected.err
    assert inspected.json()["serverInfo"]["name"] == "plainmcp-sqlite"


def test_locate_install_line_names_the_clone_the_core_was_installed_from(tmp_path) -> None:
    # The core installed (not run) from the clone, used outside the clone: pip's direct_url.json says where.
    python = built_core_python(tmp_path / "venv")
    env = bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"))
    ran = run_cli(python, "demo", "sqlite", env=env, cwd=tmp_path)
    assert ran.code == 1
    assert f'  install it with: pipx install "{ROOT / "servers" / "sqlite"}"' in ran.out
    # Without the record (a wheel from an index), only the PyPI line is left.
    next((tmp_path / "venv-core").glob("plainmcp-*.dist-info/direct_url.json")).unlink()
    ran = run_cli(python, "demo", "sqlite", env=env, cwd=tmp_path)
    assert ran.code == 1
    assert "install it with: pipx install plainmcp-sqlite   (from PyPI" in ran.out
    assert str(ROOT / "servers") not in ran.out
