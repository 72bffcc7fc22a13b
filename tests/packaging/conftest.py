"""The release files, built once per test session for the release and bundle tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from .offline import _load_script, offline_env, wheelhouse

dist = _load_script("dist")


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The release files of every package, built offline as `python3 dev.py dist` builds them, and an offline
    user whose pip/uv find them (and the wheelhouse)."""
    scratch = tmp_path_factory.mktemp("release")
    env = offline_env(scratch, wheelhouse())
    out = scratch / "dist"
    dist.build(out, env=env)
    # Both directories, as a user would pass two --find-links (pip splits on spaces, uv on commas too).
    env["PIP_FIND_LINKS"] = f"{out} {env['PIP_FIND_LINKS']}"
    env["UV_FIND_LINKS"] = f"{out},{env['UV_FIND_LINKS']}"
    return out, env
