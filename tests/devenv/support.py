"""Load the development scripts (dev.py and tools/*.py) as modules: they are scripts, not an installed package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def load(path: Path) -> ModuleType:
    """The module of the script at ``path`` (relative to the repository), loaded once per test session."""
    name = f"_plainmcp_devenv_{path.stem}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
