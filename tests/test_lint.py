"""The tree passes the linter configured in pyproject.toml (ruff): style drift fails the build."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing() -> None:
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff is not None, "ruff is a dev dependency: run python3 dev.py setup"
    result = subprocess.run(
        [ruff, "check", "--output-format", "concise", str(ROOT)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout[-4000:]


def test_ruff_format_changes_nothing() -> None:
    """The tree is laid out as `ruff format` lays it out (configured in pyproject.toml; Markdown left alone)."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert ruff is not None, "ruff is a dev dependency: run python3 dev.py setup"
    result = subprocess.run([ruff, "format", "--check", str(ROOT)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
