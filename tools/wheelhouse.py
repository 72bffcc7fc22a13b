#!/usr/bin/env python3
"""Download every third-party wheel the installs need into .ci-cache/wheelhouse (git-ignored). Standard library only.

    python3 tools/wheelhouse.py          # download what the installs need (a no-op when up to date)
    python3 tools/wheelhouse.py --check  # only report; exit 1 if the wheelhouse is missing or stale

The packaging tests (tests/packaging) install the servers exactly as the READMEs say, with pipx, uvx and pip,
but offline: pip and uv look only here (PIP_NO_INDEX, UV_OFFLINE, find-links). So the wheelhouse holds the
runtime dependencies of every package in the repository, the build backend with its own dependencies, and
pip/setuptools/wheel for pipx's pip backend. tests/devenv/test_hatch.py builds the development environment
with `hatch run`, offline too, so the environment's tools are here as well, with `editables` (hatchling's
editable installs need it), and the Node-and-npm wheel tools/node_tools.py falls back to without a system npm. The
list is read from the pyproject.toml files, so adding a dependency there is
enough; a stamp file records the list (and the Python it was resolved for) so a change
downloads again.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling modules, also when loaded by path
import node_tools
import workspace

ROOT = workspace.ROOT
WHEELHOUSE = ROOT / ".ci-cache" / "wheelhouse"
STAMP = WHEELHOUSE / ".plainmcp-wheelhouse"
OURS = "plainmcp"  # the core and every plainmcp-<name> server come from the checkout or dist/, never from here
# pipx's pip backend installs pip into its shared venv; build front ends may want setuptools/wheel; hatchling
# builds editable installs with editables.
INSTALLERS = ["pip", "setuptools", "wheel", "editables"]


class WheelhouseError(RuntimeError):
    """The wheels could not be downloaded."""


def projects() -> list[Path]:
    """The pyproject.toml of every package: the workspace members."""
    return [member / "pyproject.toml" for member in workspace.load(ROOT).members]


def _name(spec: str) -> str:
    """The distribution name at the start of a requirement string (lower case)."""
    end = len(spec)
    for mark in "[<>=!~;@ ":
        index = spec.find(mark)
        if index != -1:
            end = min(end, index)
    return spec[:end].strip().lower().replace("_", "-")


def requirements() -> list[str]:
    """Every third-party requirement of every package (runtime, extras, build) and of the development environment,
    plus the installers."""
    found: set[str] = set(INSTALLERS) | set(workspace.load(ROOT).tools)
    # Node and npm as a wheel: where a machine has no npm, node_tools.py takes it (tests/devenv installs it offline).
    found.add(f"{node_tools.NPM_WHEEL}=={node_tools.NPM_WHEEL_VERSION}")
    for path in projects():
        config = tomllib.loads(path.read_text())
        project = config.get("project", {})
        found.update(config.get("build-system", {}).get("requires", []))
        found.update(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            found.update(extra)
        # The servers' dependencies are dynamic: hatch_build.py reads them from its hook table.
        hook = config.get("tool", {}).get("hatch", {}).get("metadata", {}).get("hooks", {}).get("custom", {})
        found.update(hook.get("dependencies", []))
    return sorted(spec for spec in found if not _name(spec).startswith(OURS))


def _fingerprint(specs: list[str]) -> str:
    digest = hashlib.sha256(f"{sys.version_info[:2]} {sys.platform}\n".encode())
    digest.update("\n".join(specs).encode())
    return digest.hexdigest()


def up_to_date() -> bool:
    try:
        return STAMP.read_text().strip() == _fingerprint(requirements())
    except OSError:
        return False


def install(python: str = sys.executable) -> Path:
    """Download the wheels for ``python`` (a no-op when the stamp matches) and return the wheelhouse."""
    specs = requirements()
    if up_to_date():
        return WHEELHOUSE
    WHEELHOUSE.mkdir(parents=True, exist_ok=True)
    STAMP.unlink(missing_ok=True)
    print(f"wheelhouse: downloading {len(specs)} requirements into {WHEELHOUSE.relative_to(ROOT)} ...", file=sys.stderr)
    command = [python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--only-binary=:all:"]
    result = subprocess.run([*command, "--dest", str(WHEELHOUSE), *specs], capture_output=True, text=True)
    if result.returncode != 0:
        raise WheelhouseError(f"pip download failed with exit code {result.returncode}:\n{result.stderr}")
    STAMP.write_text(_fingerprint(specs) + "\n")
    return WHEELHOUSE


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    if argv == ["--check"]:
        print(f"{WHEELHOUSE}: {'up to date' if up_to_date() else 'missing or stale'}")
        return 0 if up_to_date() else 1
    try:
        print(install())
    except WheelhouseError as error:
        print(f"wheelhouse: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
