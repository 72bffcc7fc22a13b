"""The development environment, as the root pyproject.toml's hatch environment defines it. Standard library only.

The root pyproject.toml is the one place that says what a development environment holds:

    [tool.hatch.envs.default]              dependencies: the test and build tools
    [tool.hatch.envs.default.env-vars]     variables set while installing and running in the environment
    [tool.hatch.envs.default.workspace]    members: globs of the package directories, installed editable

hatch reads these tables itself; dev.py, dist.py and wheelhouse.py read them through this module, so the set of
packages and the tools cannot drift from what hatch would install (tests/devenv checks it).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class WorkspaceError(RuntimeError):
    """The root pyproject.toml lacks a table dev.py needs, or a member glob matches no package."""


@dataclass(frozen=True)
class Workspace:
    """What the default hatch environment of ``root`` holds.

    Attributes:
        root: the repository.
        members: the package directories (each with a pyproject.toml), sorted: the member globs resolved.
        tools: the requirement strings of ``dependencies``, in their order.
        env_vars: ``env-vars``, as strings.
    """

    root: Path
    members: tuple[Path, ...]
    tools: tuple[str, ...]
    env_vars: dict[str, str]


def load(root: Path = ROOT) -> Workspace:
    """Read ``root/pyproject.toml``. Raises WorkspaceError when a table is missing or a glob matches nothing."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    try:
        env = config["tool"]["hatch"]["envs"]["default"]
        globs = env["workspace"]["members"]
    except KeyError as error:
        raise WorkspaceError(f"{root / 'pyproject.toml'}: no [tool.hatch.envs.default.workspace] members") from error
    return Workspace(
        root=root,
        members=resolve(root, globs),
        tools=tuple(env.get("dependencies", [])),
        env_vars={name: str(value) for name, value in env.get("env-vars", {}).items()},
    )


def resolve(root: Path, globs: list[str]) -> tuple[Path, ...]:
    """The directories below ``root`` that match one of ``globs`` and hold a pyproject.toml, sorted.

    As hatch does, a member is a directory: a glob matching a directory without a pyproject.toml contributes
    nothing. A glob that yields no package at all is a mistake in the table (a typo, a moved folder), so it is an
    error rather than a silently smaller environment.
    """
    found: set[Path] = set()
    for pattern in globs:
        matched = {path.parent for path in root.glob(f"{pattern}/pyproject.toml")}
        if not matched:
            raise WorkspaceError(f"workspace member {pattern!r} matches no directory with a pyproject.toml")
        found |= matched
    return tuple(sorted(found))


def project_name(package: Path) -> str:
    """The distribution name in the pyproject.toml of ``package``."""
    return str(tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"])


def declared_version(package: Path) -> str:
    """The version a package declares: ``project.version`` of its pyproject.toml, or, when the version is
    dynamic, the ``__version__ = "..."`` literal of the file ``[tool.hatch.version] path`` names (how the
    servers declare theirs: their code reads it at no cost, and hatchling reads it from there)."""
    pyproject = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    if "version" in project:
        return str(project["version"])
    path = pyproject["tool"]["hatch"]["version"]["path"]
    source = (package / path).read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"$', source, re.MULTILINE)
    if found is None:
        raise WorkspaceError(f'{package / path} declares no __version__ = "..."')
    return found.group(1)
