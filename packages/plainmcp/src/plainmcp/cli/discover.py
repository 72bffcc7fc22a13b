"""Which servers with a demo scene are installed, found without knowing their names.

A server registers its scene under the ``plainmcp.scenes`` entry-point group (see
:mod:`plainmcp.demo`). Users install each server on its own, usually with pipx, so the scene is
rarely importable by the Python that runs ``plainmcp``. The places, in the order they are tried
(the first one to offer a scene name wins), are those of :mod:`.locate`:

1. this environment: the entry points this Python sees, when their package is importable here;
2. ``PATH``: each ``plainmcp-*`` script, read in the environment of the Python its first line names;
3. pipx: every venv under each of pipx's homes (the command is pipx's link when it leads there);
4. uv tools: every venv under uv's tool directory.

Outside this environment nothing is imported or run to look (but for a script on PATH whose Python
is not a venv's, which is asked for its ``sys.path``): the entry points are read from the venvs'
``*.dist-info/entry_points.txt``, as pip wrote them. The server's command is the distribution's
console script named like the distribution, else its first one.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path

from .locate import BIN, Found, interpreter_of, pipx_bin_dir, pipx_homes, uv_tool_dir
from .scene import GROUP

#: Seconds to wait for a Python outside any venv to say where it imports from.
SYS_PATH_TIMEOUT = 10


@dataclass(frozen=True)
class Installed:
    """A server with a scene, as found.

    Attributes:
        scene: the scene's (entry point's) name, which ``plainmcp demo NAME`` takes.
        dist: the server's distribution name.
        found: the command that starts the server, the Python that plays its scene, and where.
    """

    scene: str
    dist: str
    found: Found

    def using(self) -> str:
        """One line: which server, from where, started how."""
        return f"{self.dist} from {self.found.source}: {shlex.join(self.found.command)}"


def discover(env: Mapping[str, str] | None = None) -> tuple[list[Installed], tuple[str, ...]]:
    """The installed servers that offer a scene, one per scene name, sorted by it; and the places
    looked in. ``env`` (default ``os.environ``) gives PATH and pipx's and uv's places."""
    env = os.environ if env is None else env
    found: dict[str, Installed] = {}
    looked: list[str] = []

    def offer(candidates: Iterable[Installed]) -> None:
        for candidate in candidates:
            found.setdefault(candidate.scene, candidate)

    looked.append(f"this environment ({Path(sys.executable).parent})")
    offer(_this_environment())
    looked.append("PATH")
    offer(_on_path(env.get("PATH", os.defpath)))
    for home in pipx_homes(env):
        looked.append(f"pipx ({home})")
        offer(_in_venvs(home / "venvs", "pipx", pipx_bin_dir(env)))
    tools = uv_tool_dir(env)
    looked.append(f"uv tools ({tools})")
    offer(_in_venvs(tools, "uv tool", None))
    return sorted(found.values(), key=lambda installed: installed.scene), tuple(looked)


def _this_environment() -> Iterator[Installed]:
    here = Path(sys.executable).parent
    for entry in metadata.entry_points(group=GROUP):
        dist = entry.dist
        # A distribution's record can outlive its files (or name sources this Python cannot import).
        if dist is None or find_spec(entry.module.partition(".")[0]) is None:
            continue
        script = _server_script(dist)
        if script is None:
            continue
        name, module = script
        path = here / name
        command = (str(path),) if path.is_file() else (sys.executable, "-m", module)
        yield Installed(entry.name, dist.name, Found(entry.name, command, sys.executable, "this environment"))


def _on_path(path_variable: str) -> Iterator[Installed]:
    for directory in path_variable.split(os.pathsep):
        try:
            names = sorted(os.listdir(directory or "."))
        except OSError:
            continue
        for name in names:
            script = Path(directory or ".", name).absolute()
            if not name.startswith("plainmcp-") or not script.is_file() or not os.access(script, os.X_OK):
                continue
            python = interpreter_of(script)
            if python is None:
                continue
            for dist, scene in _scenes(_site_dirs(python)):
                if _normal(dist.name) == _normal(name.removesuffix(".exe")):
                    yield Installed(scene, dist.name, Found(scene, (str(script),), python, "PATH"))


def _in_venvs(root: Path, source: str, links: Path | None) -> Iterator[Installed]:
    """The scenes of every venv directly under ``root`` (pipx's ``venvs``, uv's tool directory)."""
    try:
        venvs = sorted(path for path in root.iterdir() if (path / "pyvenv.cfg").is_file())
    except OSError:
        return
    for venv in venvs:
        python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
        for dist, scene in _scenes(_venv_site_dirs(venv)):
            script = _server_script(dist)
            if script is None or not (venv / BIN / script[0]).is_file():
                continue
            target = venv / BIN / script[0]
            link = links / script[0] if links is not None else None
            command = link if link is not None and _same(link, target) else target
            yield Installed(
                scene, dist.name, Found(scene, (str(command),), str(python) if python.exists() else None, source)
            )


def _scenes(site_dirs: list[str]) -> Iterator[tuple[metadata.Distribution, str]]:
    """(distribution, scene name) for each scene registered in these site directories."""
    if not site_dirs:
        return
    for dist in metadata.distributions(path=site_dirs):
        for entry in dist.entry_points:
            if entry.group == GROUP:
                yield dist, entry.name


def _server_script(dist: metadata.Distribution) -> tuple[str, str] | None:
    """(script name, module to run with ``-m``) of the console script that starts the server."""
    scripts = [entry for entry in dist.entry_points if entry.group == "console_scripts"]
    if not scripts:
        return None
    chosen = next((entry for entry in scripts if _normal(entry.name) == _normal(dist.name)), scripts[0])
    return chosen.name, chosen.module.removesuffix(".__main__")


def _site_dirs(python: str) -> list[str]:
    """Where ``python`` imports distributions from: a venv's site-packages read from the disk, else
    what the interpreter says."""
    venv = Path(python).parent.parent  # not resolved: a venv's python is a link out of the venv
    if (venv / "pyvenv.cfg").is_file():
        return _venv_site_dirs(venv)
    try:
        ran = subprocess.run(
            [python, "-c", "import json, sys; print(json.dumps(sys.path))"],
            capture_output=True,
            text=True,
            timeout=SYS_PATH_TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        paths = json.loads(ran.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    return [path for path in paths if isinstance(path, str) and path]


def _venv_site_dirs(venv: Path) -> list[str]:
    return [
        str(path) for path in [*venv.glob("lib/python*/site-packages"), venv / "Lib" / "site-packages"] if path.is_dir()
    ]


def _normal(name: str) -> str:
    """A distribution or script name compared as packaging does (PEP 503: case, ``-``, ``_``, ``.``)."""
    return name.lower().replace("_", "-").replace(".", "-")


def _same(a: Path, b: Path) -> bool:
    try:
        return a.exists() and a.samefile(b)
    except OSError:
        return False
