"""Shared test configuration: every async test runs on asyncio through anyio's pytest plugin."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FEATURE_SERVER = ROOT / "tests" / "fixtures" / "feature_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def feature_server_command() -> list[str]:
    """The command that runs the feature server over stdio (same interpreter as the tests)."""
    return [sys.executable, str(FEATURE_SERVER)]
