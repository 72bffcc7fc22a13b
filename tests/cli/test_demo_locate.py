"""``plainmcp demo`` runs the servers users installed with pipx (its own venv each), says which one each
scene runs, and does not pass over a server that is not installed: a note with the install line, exit 1
(0 with --skip-missing). ``plainmcp`` runs with a Python that has the core and no server."""

from __future__ import annotations

from pathlib import Path

import pytest

from .installs import ROOT, bare_env, core_only_python, pipx_install, run_cli


@pytest.fixture(scope="module")
def core_python(tmp_path_factory) -> Path:
    return core_only_python(tmp_path_factory.mktemp("core") / "venv")


def pipx_env(tmp_path: Path, *servers: str) -> dict[str, str]:
    for server in servers:
        pipx_install(tmp_path / "pipx", tmp_path / "pipx-bin", server)
    return bare_env(tmp_path, PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(tmp_path / "pipx-bin"))


def test_demo_runs_a_pipx_installed_server_and_says_which(core_python, tmp_path) -> None:
    ran = run_cli(core_python, "demo", "sqlite", env=pipx_env(tmp_path, "sqlite"), timeout=120)
    assert ran.code == 0, ran.out[-2000:] + ran.err[-2000:]
    assert f"  using plainmcp-sqlite from pipx: {tmp_path / 'pipx-bin' / 'plainmcp-sqlite'}" in ran.out
    assert "Jane Austen" in ran.out
    assert "notes example" not in ran.out  # only the scene asked for


def test_demo_weather_stand_in_runs_with_the_pipx_venv_python(core_python, tmp_path) -> None:
    # The stand-in is a module of the weather package, which only the pipx venv's Python can import.
    ran = run_cli(core_python, "demo", "weather", env=pipx_env(tmp_path, "weather"), timeout=120)
    assert ran.code == 0, ran.out[-2000:] + ran.err[-2000:]
    assert "using plainmcp-weather from pipx:" in ran.out
    assert '["Portland, Oregon", "Portland, Maine"]' in ran.out


def test_demo_missing_server_is_reported_with_its_install_line_and_exit_1(core_python, tmp_path) -> None:
    ran = run_cli(core_python, "demo", "notes", "sqlite", env=pipx_env(tmp_path), timeout=120)
    assert ran.code == 1
    assert "== sqlite server: not installed, skipped" in ran.out
    assert f'  install it with: pipx install "{ROOT / "servers" / "sqlite"}"' in ran.out
    assert "Not installed, so not shown: sqlite" in ran.err
    assert "add_note, search_notes" in ran.out  # the other scenes still play


def test_demo_skip_missing_accepts_a_missing_server(core_python, tmp_path) -> None:
    ran = run_cli(core_python, "demo", "--skip-missing", "sqlite", env=pipx_env(tmp_path), timeout=120)
    assert ran.code == 0, ran.err
    assert "== sqlite server: not installed, skipped" in ran.out


def test_demo_unknown_scene_is_a_usage_error(core_python, tmp_path) -> None:
    ran = run_cli(core_python, "demo", "nosuch", env=bare_env(tmp_path))
    assert ran.code == 2
    assert "unknown scene nosuch" in ran.err
