"""hatch_build.py, the metadata hook that takes the core from the checkout (or, for a release, by version)."""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from .offline import ROOT, SERVERS, project_version

CORE = ROOT / "packages" / "plainmcp"


def _hook_module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_hatch_build_{name}", ROOT / "servers" / name / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pyproject(name: str) -> dict:
    return tomllib.loads((ROOT / "servers" / name / "pyproject.toml").read_text())


def test_every_server_carries_the_same_hook() -> None:
    # Copied, not shared: each sdist must build on its own, outside the repository.
    copies = {name: (ROOT / "servers" / name / "hatch_build.py").read_bytes() for name in SERVERS}
    assert len(set(copies.values())) == 1, f"the copies differ: {sorted(copies)}"


@pytest.mark.parametrize("name", SERVERS)
def test_server_declares_its_dependencies_through_the_hook(name: str) -> None:
    config = _pyproject(name)
    # Dynamic, so that no front end (uv reads static metadata) takes the versioned core for the whole truth.
    assert "dependencies" not in config["project"]
    assert "dependencies" in config["project"]["dynamic"]
    declared = [Requirement(spec) for spec in config["tool"]["hatch"]["metadata"]["hooks"]["custom"]["dependencies"]]
    cores = [requirement for requirement in declared if requirement.name == "plainmcp"]
    assert len(cores) == 1 and cores[0].url is None
    # The released server must accept the core released with it.
    assert Version(project_version(CORE)) in cores[0].specifier
    assert "hatch_build.py" not in config.get("tool", {}).get("hatch", {}).get("build", {}).get("exclude", [])


def test_hook_points_the_core_at_the_checkout(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = _hook_module("sqlite")
    monkeypatch.delenv("PLAINMCP_RELEASE", raising=False)
    core = hook.checkout_core(ROOT / "servers" / "sqlite")
    assert core == CORE.resolve()
    pinned = Requirement(hook.pin_to(core, "plainmcp~=0.1.0"))
    assert (pinned.name, pinned.url, str(pinned.specifier)) == ("plainmcp", CORE.resolve().as_uri(), "")
    with_extras = Requirement(hook.pin_to(core, 'plainmcp[jwt]>=0.1; python_version >= "3.11"'))
    assert with_extras.url == CORE.resolve().as_uri() and with_extras.extras == {"jwt"}
    assert str(with_extras.marker) == 'python_version >= "3.11"'
    assert hook.pin_to(core, "watchfiles>=0.21") == "watchfiles>=0.21"
    assert hook.pin_to(core, "plainmcp-sqlite>=0.1") == "plainmcp-sqlite>=0.1"  # another project, same prefix


def test_hook_keeps_the_versioned_core_for_a_release_or_outside_a_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    hook = _hook_module("weather")
    monkeypatch.setenv("PLAINMCP_RELEASE", "1")
    assert hook.checkout_core(ROOT / "servers" / "weather") is None
    monkeypatch.delenv("PLAINMCP_RELEASE")
    unpacked = tmp_path / "plainmcp_weather-0.1.0"  # an sdist unpacked anywhere: no ../../packages/plainmcp
    unpacked.mkdir()
    assert hook.checkout_core(unpacked) is None


def test_hook_sets_the_dependencies_it_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    hook = _hook_module("prompts")
    monkeypatch.setenv("PLAINMCP_RELEASE", "1")
    metadata: dict = {}
    hook.CheckoutCoreHook(str(ROOT / "servers" / "prompts"), {"dependencies": ["plainmcp~=0.1.0", "a>=1"]}).update(
        metadata
    )
    assert metadata["dependencies"] == ["plainmcp~=0.1.0", "a>=1"]
    with pytest.raises(TypeError, match="list of strings"):
        hook.CheckoutCoreHook(str(ROOT), {"dependencies": "plainmcp"}).update({})
