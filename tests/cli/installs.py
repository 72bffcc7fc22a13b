"""Real installations laid out as users have them, built offline from this checkout.

- :func:`core_only_python`: a venv whose Python has the plainmcp core and its dependencies but no
  server, like ``pipx install ./packages/plainmcp`` gives: ``plainmcp`` run with it must look for
  the servers elsewhere.
- :func:`pipx_install`: ``<home>/venvs/plainmcp-<name>/bin/plainmcp-<name>``, a console script as
  pip writes it (``#!<venv python>``) in a real venv that imports the server, plus pipx's symlink
  in the bin directory.

The venvs are real (``python -m venv`` without pip); instead of installing packages from an index
they import this checkout's sources and the test venv's site-packages through a ``.pth`` file. The
server's installation record is written as pip writes it: ``<dist>-<version>.dist-info`` in the venv's
site-packages with ``METADATA`` and ``entry_points.txt`` (its console scripts and its
``plainmcp.scenes`` entry point, read from the server's pyproject.toml), which is what ``plainmcp demo``
reads to find the server's scene.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
import tomllib
import venv
from pathlib import Path

from .support import Ran

ROOT = Path(__file__).resolve().parents[2]
#: The test venv's site-packages: the dependencies (anyio, httpx, watchfiles, ...). Only a site
#: directory's own .pth files are read, so the servers' editable .pth files there do not apply.
SITE = sysconfig.get_paths()["purelib"]
CORE = ROOT / "packages" / "plainmcp" / "src"


def make_venv(path: Path, import_dirs: list[Path | str]) -> Path:
    """A real venv at ``path`` whose Python imports from ``import_dirs``; returns that Python."""
    venv.EnvBuilder(symlinks=True, with_pip=False).create(path)
    site = next((path / "lib").glob("python*/site-packages"))
    (site / "plainmcp_tests.pth").write_text("".join(f"{d}\n" for d in import_dirs))
    return path / "bin" / "python"


def console_script(path: Path, python: Path, module: str) -> Path:
    """A console script as pip writes it, running ``module.__main__:main`` with ``python``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"#!{python}\nimport sys\nfrom {module}.__main__ import main\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n"
    )
    path.chmod(0o755)
    return path


def core_only_python(path: Path) -> Path:
    return make_venv(path, [SITE, CORE])


def built_core_python(path: Path) -> Path:
    """Like :func:`core_only_python`, but the core is built and installed from this checkout (not run
    from it), as ``pipx install <clone>/packages/plainmcp`` does: pip records the source directory in
    the installed ``direct_url.json``. Offline: the test venv's hatchling builds it."""
    target = path.parent / f"{path.name}-core"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--disable-pip-version-check",
            "--no-index",
            "--target",
            str(target),
            str(CORE.parent),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return make_venv(path, [target, SITE])


def server_venv(path: Path, name: str) -> Path:
    """A venv with one server (its Python): the server's console script in its bin, and its
    installation record in its site-packages."""
    python = make_venv(path, [SITE, CORE, ROOT / "servers" / name / "src"])
    console_script(path / "bin" / f"plainmcp-{name}", python, f"plainmcp_{name}")
    dist_info(next((path / "lib").glob("python*/site-packages")), ROOT / "servers" / name / "pyproject.toml")
    return python


def declared_version(package: Path) -> str:
    """The version ``package`` declares, as tools/workspace.py reads it (pyproject's, or its ``__version__``)."""
    spec = importlib.util.spec_from_file_location("_plainmcp_workspace", ROOT / "tools" / "workspace.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return str(module.declared_version(package))


def dist_info(site: Path, pyproject: Path) -> Path:
    """The ``*.dist-info`` directory pip writes for the project of ``pyproject``: its METADATA and its
    entry points (``[project.scripts]`` as ``console_scripts``, and every ``[project.entry-points]`` group)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    version = declared_version(pyproject.parent)
    groups = {"console_scripts": project.get("scripts", {}), **project.get("entry-points", {})}
    record = site / f"{project['name'].replace('-', '_')}-{version}.dist-info"
    record.mkdir()
    (record / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\n")
    (record / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in entries.items()) + "\n"
            for group, entries in groups.items()
            if entries
        )
    )
    (record / "INSTALLER").write_text("pip\n")
    return record


def pipx_install(home: Path, bin_dir: Path | None, name: str) -> Path:
    """Lay out ``pipx install plainmcp-<name>``: the venv under ``home``, the link in ``bin_dir``;
    returns the venv's script."""
    venv_dir = home / "venvs" / f"plainmcp-{name}"
    server_venv(venv_dir, name)
    script = venv_dir / "bin" / f"plainmcp-{name}"
    if bin_dir is not None:
        bin_dir.mkdir(parents=True, exist_ok=True)
        os.symlink(script, bin_dir / f"plainmcp-{name}")
    return script


def bare_env(tmp: Path, **extra: str) -> dict[str, str]:
    """An environment with nothing installed: PATH, HOME and the pipx/uv places all in ``tmp``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("PIPX_HOME", "PIPX_BIN_DIR", "UV_TOOL_DIR", "XDG_DATA_HOME", "VIRTUAL_ENV")
    }
    (tmp / "home").mkdir(exist_ok=True)
    (tmp / "empty-bin").mkdir(exist_ok=True)
    env.update(PATH=str(tmp / "empty-bin"), HOME=str(tmp / "home"))
    env.update(extra)
    return env


def run_cli(python: Path | str, *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 60) -> Ran:
    """``python -m plainmcp.cli ARGS`` with exactly ``env``; its exit code, stdout and stderr."""
    result = subprocess.run(
        [str(python), "-m", "plainmcp.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    return Ran(result.returncode, result.stdout, result.stderr)
