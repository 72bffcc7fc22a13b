"""Hatchling metadata hook: take the plainmcp core from this checkout when the server is built inside one.

The server's runtime dependencies live in ``[tool.hatch.metadata.hooks.custom] dependencies`` of its
pyproject.toml, with the core as an ordinary versioned requirement (``plainmcp~=0.1.0``): that is what a
release publishes. Built inside a clone of the repository (the core sits at ``../../packages/plainmcp``),
that one requirement becomes ``plainmcp @ file:///<absolute path>/packages/plainmcp``, so pip, pipx and uv
install the core from the same checkout instead of looking for it on an index. Setting the environment
variable ``PLAINMCP_RELEASE`` to a non-empty value (``python3 dev.py dist`` does) keeps the versioned
requirement; an sdist unpacked anywhere else has no sibling core and keeps it too.

Each server carries an identical copy of this file (tests/packaging checks that they are identical): an
sdist must build on its own, so the hook cannot live outside the server's directory.
"""

from __future__ import annotations

import os
from pathlib import Path

from hatchling.metadata.plugin.interface import MetadataHookInterface
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

CORE = "plainmcp"


class CheckoutCoreHook(MetadataHookInterface):
    """Sets ``project.dependencies`` (declared dynamic) from the hook's ``dependencies`` list."""

    def update(self, metadata: dict) -> None:
        declared = self.config.get("dependencies", [])
        if not isinstance(declared, list) or not all(isinstance(item, str) for item in declared):
            raise TypeError("[tool.hatch.metadata.hooks.custom] dependencies must be a list of strings")
        core = checkout_core(Path(self.root))
        metadata["dependencies"] = [pin_to(core, spec) for spec in declared] if core else list(declared)


def checkout_core(root: Path) -> Path | None:
    """The core's directory when building inside a checkout for local use, else None."""
    if os.environ.get("PLAINMCP_RELEASE"):
        return None
    core = root.resolve().parent.parent / "packages" / CORE
    return core if (core / "pyproject.toml").is_file() else None


def pin_to(core: Path, spec: str) -> str:
    """``spec`` itself, or for the core a direct reference to ``core`` (extras and markers kept)."""
    requirement = Requirement(spec)
    if requirement.name != CORE:
        return spec
    requirement.specifier = SpecifierSet()
    requirement.url = core.as_uri()
    return str(requirement)
