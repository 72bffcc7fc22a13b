"""Where a plainmcp server is installed: the places ``plainmcp config`` looks for the one it is named
(``plainmcp demo``, which names none, enumerates the same places: :mod:`.discover`).

A user installs each server on its own, usually with pipx, so the server is rarely in the Python that
runs ``plainmcp``. The places, in the order they are tried (the first one wins):

1. this environment: ``plainmcp-<name>`` beside the Python running ``plainmcp`` (a venv, the
   repository's ``.venv``), or the package importable by that Python, run as ``python -m`` (say, the
   checkout's ``servers/<name>/src`` on ``sys.path``). First because it matches the running core.
2. ``PATH``.
3. pipx: ``$PIPX_HOME/venvs/plainmcp-<name>/bin/plainmcp-<name>``; without ``PIPX_HOME``, each of
   pipx's default homes that exists (``~/.local/pipx``; ``~/.local/share/pipx`` for pipx 1.3-1.4;
   ``~/Library/Application Support/pipx`` on macOS). The command is pipx's link in ``$PIPX_BIN_DIR``
   (default ``~/.local/bin``) when it leads to that script, else the script itself.
4. uv tools: ``$UV_TOOL_DIR`` (default ``$XDG_DATA_HOME/uv/tools``, i.e. ``~/.local/share/uv/tools``)
   ``/plainmcp-<name>/bin/plainmcp-<name>``.

Nothing is imported or run to look: the places are files. When nothing is found, :class:`Missing`
names where it looked and the install lines that work from here (a checkout of the repository when
the core runs from one or the working directory is inside one; PyPI after the first release).
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

BIN = "Scripts" if os.name == "nt" else "bin"
#: Where pipx keeps its venvs when PIPX_HOME is not set: the current default first, then the ones
#: older pipx releases used (pipx keeps using an old home that exists).
PIPX_DEFAULT_HOMES = ("~/.local/pipx", "{data}/pipx", "~/Library/Application Support/pipx")


@dataclass(frozen=True)
class Found:
    """An installed server.

    Attributes:
        server: the short name (``<name>`` of ``plainmcp-<name>``).
        command: the command line that starts it, absolute (``/home/me/.local/bin/plainmcp-<name>``).
        python: an interpreter that can import the server's package (to play its demo scene), or
            None when it cannot be told.
        source: where it was found: ``this environment``, ``PATH``, ``pipx`` or ``uv tool``.
        looked: the places looked in, this one last.
    """

    server: str
    command: tuple[str, ...]
    python: str | None
    source: str
    looked: tuple[str, ...] = ()

    def describe(self) -> str:
        """One line: which server, from where, started how."""
        return f"plainmcp-{self.server} from {self.source}: {shlex.join(self.command)}"


@dataclass(frozen=True)
class Missing:
    """A server found nowhere: where we looked, and how to install it."""

    server: str
    looked: tuple[str, ...]
    checkout: Path | None

    def install_lines(self) -> list[str]:
        """Commands that install the server, the one that works today first."""
        lines = []
        if self.checkout is not None:
            lines.append(f'pipx install "{self.checkout / "servers" / self.server}"')
        lines.append(f"pipx install plainmcp-{self.server}   (from PyPI, once it is released there)")
        return lines

    def message(self) -> str:
        return (
            f"plainmcp-{self.server} is not installed (looked in: {'; '.join(self.looked)}); install it with: "
            + "   or: ".join(self.install_lines())
        )


def locate(server: str, env: Mapping[str, str] | None = None) -> Found | Missing:
    """Find the installed server ``server`` (``<name>`` or ``plainmcp-<name>``); ``env`` defaults to
    ``os.environ`` (PATH, PIPX_HOME, PIPX_BIN_DIR, UV_TOOL_DIR, HOME, XDG_DATA_HOME)."""
    env = os.environ if env is None else env
    name = server.removeprefix("plainmcp-")
    script = f"plainmcp-{name}"
    looked = []

    here = Path(sys.executable).parent
    looked.append(f"this environment ({here})")
    found = shutil.which(script, path=str(here))
    if found:
        return Found(name, (str(Path(found).absolute()),), sys.executable, "this environment", tuple(looked))
    module = f"plainmcp_{name.replace('-', '_')}"
    origin = _module_origin(module)
    if origin is not None:
        checkout = checkout_root()
        source = "this environment (python -m)"
        if checkout is not None and origin.is_relative_to(checkout / "servers" / name):
            source = f"the checkout at {checkout}, with this Python (python -m)"
        return Found(name, (sys.executable, "-m", module), sys.executable, source, tuple(looked))

    looked.append("PATH")
    found = shutil.which(script, path=env.get("PATH", os.defpath))
    if found:
        path = Path(found).absolute()
        return Found(name, (str(path),), interpreter_of(path), "PATH", tuple(looked))

    for home in pipx_homes(env):
        looked.append(f"pipx ({home})")
        venv = home / "venvs" / script
        target = venv / BIN / script
        if target.is_file():
            link = pipx_bin_dir(env) / script
            command = link if link.exists() and _same(link, target) else target
            return Found(name, (str(command),), _venv_python(venv), "pipx", tuple(looked))

    tools = uv_tool_dir(env)
    looked.append(f"uv tools ({tools})")
    venv = tools / script
    if (venv / BIN / script).is_file():
        return Found(name, (str(venv / BIN / script),), _venv_python(venv), "uv tool", tuple(looked))

    checkout = checkout_root()
    has_source = checkout is not None and (checkout / "servers" / name / "pyproject.toml").is_file()
    return Missing(name, tuple(looked), checkout if has_source else None)


def pipx_homes(env: Mapping[str, str]) -> list[Path]:
    """PIPX_HOME, or the default homes that exist."""
    if env.get("PIPX_HOME"):
        return [Path(env["PIPX_HOME"]).expanduser()]
    data = _data_home(env)
    homes = [Path(_expand(pattern.format(data=data), env)) for pattern in PIPX_DEFAULT_HOMES]
    return [home for home in homes if home.is_dir()]


def pipx_bin_dir(env: Mapping[str, str]) -> Path:
    return Path(_expand(env.get("PIPX_BIN_DIR") or "~/.local/bin", env))


def uv_tool_dir(env: Mapping[str, str]) -> Path:
    if env.get("UV_TOOL_DIR"):
        return Path(_expand(env["UV_TOOL_DIR"], env))
    return Path(_data_home(env)) / "uv" / "tools"


def interpreter_of(script: Path) -> str | None:
    """The Python a console script runs with, from its first lines, or None.

    pip writes ``#!/abs/python`` or, when that path is too long or has spaces, a ``#!/bin/sh``
    line followed by ``'''exec' "/abs/python" "$0" "$@"``.
    """
    try:
        with script.open("rb") as file:
            head = file.read(1024).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    if not head or not head[0].startswith("#!"):
        return None
    candidates = [head[0][2:].strip()]
    if len(head) > 1 and head[1].startswith("'''exec' "):
        try:
            candidates.insert(0, shlex.split(head[1].removeprefix("'''exec' "))[0])
        except (ValueError, IndexError):
            pass
    for candidate in candidates:
        if candidate and " " not in candidate and "python" in Path(candidate).name and Path(candidate).is_file():
            return candidate
    return None


def checkout_root() -> Path | None:
    """The repository checkout the core runs from, else the one it was installed from (pip, pipx and uv
    record a local source in ``direct_url.json``, PEP 610), else the one the working directory is in,
    else None."""
    places = [Path(__file__).resolve().parents[5]]
    source = _installed_from()
    if source is not None:
        places.append(source.parent.parent)  # <root>/packages/plainmcp
    try:
        cwd = Path.cwd().resolve()
        places += [cwd, *cwd.parents]
    except OSError:  # the working directory was removed
        pass
    for place in places:
        if (place / "packages" / "plainmcp" / "pyproject.toml").is_file() and (place / "servers").is_dir():
            return place
    return None


def _installed_from() -> Path | None:
    """The local directory the core was installed from, or None (an index, a wheel, no record)."""
    import json
    from importlib import metadata
    from urllib.parse import unquote, urlsplit

    try:
        record = json.loads(metadata.distribution("plainmcp").read_text("direct_url.json") or "null")
    except (metadata.PackageNotFoundError, ValueError):
        return None
    if not isinstance(record, dict) or "dir_info" not in record or not str(record.get("url", "")).startswith("file:"):
        return None
    return Path(unquote(urlsplit(record["url"]).path))


def _module_origin(module: str) -> Path | None:
    """Where ``module`` would be imported from by this Python (nothing is imported), or None."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return Path(spec.origin).resolve() if spec.origin else Path(sys.executable)


def _venv_python(venv: Path) -> str | None:
    python = venv / BIN / ("python.exe" if os.name == "nt" else "python")
    return str(python) if python.exists() else None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def _data_home(env: Mapping[str, str]) -> str:
    return env.get("XDG_DATA_HOME") or _expand("~/.local/share", env)


def _expand(path: str, env: Mapping[str, str]) -> str:
    """``~`` from ``env``'s HOME (so a caller's environment decides), else the user's home."""
    if path == "~" or path.startswith("~/"):
        return (env.get("HOME") or os.path.expanduser("~")) + path[1:]
    return path
