"""Issue 14, item 2: the release files. Built the way `python3 dev.py dist` builds them (tools/dist.py), offline,
into a temporary directory; then installed by name from those files only, as users will install from PyPI.
"""

from __future__ import annotations

import os
import sys
import tarfile
import venv
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from .offline import ROOT, SERVERS, _load_script, initialize, project_version, run, server_args, wheelhouse

dist = _load_script("dist")

PACKAGES = ["plainmcp", *(f"plainmcp-{name}" for name in SERVERS)]
DIRECTORIES = {
    "plainmcp": ROOT / "packages" / "plainmcp",
    "plainmcp-bridge": ROOT / "packages" / "plainmcp-bridge",
    **{f"plainmcp-{n}": ROOT / "servers" / n for n in SERVERS},
}


def _normal(name: str) -> str:
    return name.replace("-", "_")


def test_release_has_a_wheel_and_an_sdist_per_package_that_pass_twine_check(
    release: tuple[Path, dict[str, str]],
) -> None:
    out, env = release
    names = sorted(path.name for path in out.iterdir())
    versions = {package: project_version(directory) for package, directory in DIRECTORIES.items()}
    expected = sorted(
        [f"{_normal(p)}-{v}-py3-none-any.whl" for p, v in versions.items()]
        + [f"{_normal(p)}-{v}.tar.gz" for p, v in versions.items()]
    )
    assert names == expected
    # dist.build ran it already; run it again here so that this test states the requirement itself.
    run([sys.executable, "-m", "twine", "check", "--strict", *map(str, out.iterdir())], env=env, cwd=out)


def test_release_metadata_has_no_direct_reference_and_requires_the_core_by_version(
    release: tuple[Path, dict[str, str]],
) -> None:
    out, _ = release
    core_version = project_version(ROOT / "packages" / "plainmcp")
    for path in out.iterdir():
        requirements = [Requirement(spec) for spec in dist.metadata(path).get_all("Requires-Dist") or []]
        assert all(requirement.url is None for requirement in requirements), (path.name, requirements)
        if path.name.startswith("plainmcp_"):  # a server
            (core,) = [requirement for requirement in requirements if requirement.name == "plainmcp"]
            assert core_version in core.specifier, (path.name, core)


@pytest.mark.parametrize("name", SERVERS)
def test_sdist_builds_on_its_own_and_ships_the_registry_files(name: str, release: tuple[Path, dict[str, str]]) -> None:
    out, _ = release
    with tarfile.open(out / f"plainmcp_{name}-0.1.0.tar.gz") as archive:
        members = {member.name.split("/", 1)[1] for member in archive.getmembers() if "/" in member.name}
    assert {"hatch_build.py", "pyproject.toml", "README.md", "server.json", "PKG-INFO"} <= members
    # The PyPI description is the README, with the registry's ownership marker in it.
    wheel = out / f"plainmcp_{name}-0.1.0-py3-none-any.whl"
    assert f"<!-- mcp-name: io.github.plainmcp/{name} -->" in dist.metadata(wheel).get_payload()


def test_release_installs_by_name_offline_with_pip_into_a_fresh_venv(
    release: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    out, env = release
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(target)
    python = str(target / "bin" / "python")
    run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--no-index",
            "--find-links",
            str(out),
            "--find-links",
            os.environ.get("PLAINMCP_WHEELHOUSE", str(wheelhouse())),
            *PACKAGES[1:],
        ],
        env=env,
        cwd=tmp_path,
    )
    # Installed by name from the files: no PEP 610 direct_url.json (that would mean a path or URL install).
    code = (
        "import importlib.metadata as m, sys; "
        "sys.exit(any(m.distribution(n).read_text('direct_url.json') for n in sys.argv[1:]))"
    )
    run([python, "-c", code, *PACKAGES], env=env, cwd=tmp_path)
    for name in SERVERS:
        answered = initialize(
            [str(target / "bin" / f"plainmcp-{name}"), *server_args(name, tmp_path)], env=env, cwd=tmp_path
        )
        assert answered["serverInfo"]["name"] == f"plainmcp-{name}"
        assert answered["serverInfo"]["version"] == project_version(ROOT / "servers" / name)


def test_release_installs_by_name_offline_with_pipx(release: tuple[Path, dict[str, str]]) -> None:
    _, env = release
    env = {**env, "PIPX_DEFAULT_BACKEND": "pip"}
    home = Path(env["HOME"])
    run(["pipx", "install", "plainmcp-sqlite"], env=env, cwd=home)
    answered = initialize([str(Path(env["PIPX_BIN_DIR"]) / "plainmcp-sqlite")], env=env, cwd=home)
    assert answered["serverInfo"]["name"] == "plainmcp-sqlite"


@pytest.mark.parametrize("name", SERVERS)
def test_release_runs_by_name_with_uvx(name: str, release: tuple[Path, dict[str, str]]) -> None:
    """`uvx plainmcp-<name>`, the line for after the release, against the release files."""
    _, env = release
    home = Path(env["HOME"])
    answered = initialize(["uvx", f"plainmcp-{name}", *server_args(name, home)], env=env, cwd=home)
    assert answered["serverInfo"]["name"] == f"plainmcp-{name}"


def test_dist_refuses_a_tag_that_is_not_every_package_version() -> None:
    assert dist.mismatched_versions(project_version(ROOT / "packages" / "plainmcp")) == []
    assert "plainmcp-sqlite is " in " ".join(dist.mismatched_versions("99.0.0"))


def test_release_workflow_builds_with_the_dist_task_and_publishes_with_trusted_publishing() -> None:
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    assert workflow[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as True
    build, publish = workflow["jobs"]["build"], workflow["jobs"]["publish"]
    assert any(step.get("run", "").startswith("python3 dev.py dist --version") for step in build["steps"])
    assert publish["needs"] == "build"
    assert publish["permissions"] == {"id-token": "write"}
    assert publish["environment"]["name"] == "pypi"
    assert publish["steps"][-1]["uses"] == "pypa/gh-action-pypi-publish@release/v1"
    assert "with" not in publish["steps"][-1]  # no password: trusted publishing only
