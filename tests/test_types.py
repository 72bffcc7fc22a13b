"""The core, the bridge and the five servers type-check (mypy, configured in the root pyproject.toml), ship
``py.typed`` so their users' type checkers read those annotations, and silence mypy only with a reason."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
PACKAGES = sorted(path.parent for path in (ROOT / "packages").glob("*/pyproject.toml")) + sorted(
    path.parent for path in (ROOT / "servers").glob("*/pyproject.toml")
)
# A type: ignore names its error codes, then says why after a second "#" on the same line.
IGNORE = re.compile(r"#\s*type:\s*ignore\b(?P<codes>\[[^\]]*\])?(?P<rest>.*)$")


def import_dir(package: Path) -> Path:
    """The one import package below ``package``/src (plainmcp, plainmcp_<name>)."""
    (found,) = [path for path in (package / "src").iterdir() if (path / "__init__.py").is_file()]
    return found


def test_mypy_checks_every_package() -> None:
    """The configuration names all seven import packages, so none escapes the check below."""
    assert sorted(CONFIG["files"]) == sorted(str(import_dir(p).relative_to(ROOT)) for p in PACKAGES)


def test_mypy_finds_nothing() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (result.stdout + result.stderr)[-6000:]


def _ignores_without_reason(text: str) -> list[str]:
    bad = []
    for number, line in enumerate(text.splitlines(), 1):
        match = IGNORE.search(line)
        if match is None:
            continue
        reason = match["rest"].strip()
        if not match["codes"] or not reason.startswith("#") or not reason.lstrip("# ").strip():
            bad.append(f"{number}: {line.strip()}")
    return bad


def test_the_ignore_check_tells_bare_from_explained() -> None:
    assert _ignores_without_reason("x = f()  # type: ignore[arg-type]  # f is typed too narrowly upstream") == []
    assert _ignores_without_reason("x = f()  # type: ignore") != []
    assert _ignores_without_reason("x = f()  # type: ignore[arg-type]") != []
    assert _ignores_without_reason("x = f()  # type: ignore  # no code") != []
    assert _ignores_without_reason("x = f()  # type: ignore[misc]  #") != []


@pytest.mark.parametrize("package", PACKAGES, ids=lambda path: path.name)
def test_every_type_ignore_names_codes_and_a_reason(package: Path) -> None:
    bad = [
        f"{path.relative_to(ROOT)}:{problem}"
        for path in sorted((package / "src").rglob("*.py"))
        for problem in _ignores_without_reason(path.read_text())
    ]
    assert bad == [], "write # type: ignore[<code>]  # <why> (or fix the type):\n" + "\n".join(bad)


@pytest.mark.parametrize("package", PACKAGES, ids=lambda path: path.name)
def test_the_wheel_ships_py_typed(package: Path, tmp_path: Path) -> None:
    """PEP 561: without the marker, a user's type checker ignores the package's annotations."""
    name = import_dir(package).name
    assert (import_dir(package) / "py.typed").is_file()
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "--target", "wheel", "--directory", str(tmp_path)],
        cwd=package,
        check=True,
        capture_output=True,
        timeout=120,
    )
    (wheel,) = tmp_path.glob("*.whl")
    assert f"{name}/py.typed" in zipfile.ZipFile(wheel).namelist()
