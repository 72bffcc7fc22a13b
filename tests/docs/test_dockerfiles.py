"""The servers' Dockerfiles: well-formed without an engine; built and answering `initialize` where one runs.

The image test needs a container engine that can run containers (podman or docker) and the base image (pulled
from a registry, or already present). Where either is missing the test is skipped and says exactly which.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

from .readme import ROOT
from .user_env import HandshakeError, stdio_handshake

SERVERS = sorted(path.parent.name for path in ROOT.glob("servers/*/pyproject.toml"))
KEYWORDS = {"ARG", "FROM", "WORKDIR", "COPY", "RUN", "USER", "ENV", "ENTRYPOINT", "CMD", "LABEL", "EXPOSE"}


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) of each instruction, continuation lines joined and comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in dockerfile.read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        keyword, _, rest = (pending + line).strip().partition(" ")
        found.append((keyword, rest.strip()))
        pending = ""
    assert not pending, f"{dockerfile}: a continuation line ends the file"
    return found


@pytest.mark.parametrize("name", SERVERS)
def test_dockerfile_is_multi_stage_non_root_and_runs_the_stdio_server(name: str) -> None:
    dockerfile = ROOT / "servers" / name / "Dockerfile"
    steps = instructions(dockerfile)
    unknown = [keyword for keyword, _ in steps if keyword not in KEYWORDS]
    assert not unknown, f"{dockerfile}: unknown instructions {unknown}"
    stages = [index for index, (keyword, _) in enumerate(steps) if keyword == "FROM"]
    assert len(stages) >= 2, f"{dockerfile}: not multi-stage"
    final = steps[stages[-1] :]
    users = [rest for keyword, rest in final if keyword == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), f"{dockerfile}: the final stage runs as root"
    (entrypoint,) = [json.loads(rest) for keyword, rest in final if keyword == "ENTRYPOINT"]
    scripts = tomllib.loads((ROOT / "servers" / name / "pyproject.toml").read_text())["project"]["scripts"]
    assert entrypoint == [f"plainmcp-{name}"] and entrypoint[0] in scripts, entrypoint
    assert not any("--transport" in rest for keyword, rest in final if keyword in ("CMD", "ENTRYPOINT")), (
        "the image's default is the stdio entry point"
    )


@pytest.mark.parametrize("name", SERVERS)
def test_dockerfile_copies_files_that_exist_in_the_build_context(name: str) -> None:
    """The build context is the repository root: every source a COPY names (not --from a stage) exists there, and
    the core is among them."""
    copies = [rest for keyword, rest in instructions(ROOT / "servers" / name / "Dockerfile") if keyword == "COPY"]
    sources = [part for rest in copies if "--from=" not in rest for part in rest.split()[:-1]]
    missing = [source for source in sources if not (ROOT / source).exists()]
    assert not missing, f"servers/{name}/Dockerfile copies what the context lacks: {missing}"
    assert "packages/plainmcp" in sources and f"servers/{name}" in sources
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    ignored = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert not any(source.startswith(pattern) for source in sources for pattern in ignored if "*" not in pattern)


def _engine() -> str:
    for engine in ("podman", "docker"):
        if shutil.which(engine) and subprocess.run([engine, "info"], capture_output=True, timeout=60).returncode == 0:
            return engine
    pytest.skip("no container engine answers `info` here (podman or docker)")


def _base_image(engine: str) -> str:
    """The Dockerfiles' base image, present or pulled; skips saying why when it cannot be had."""
    text = (ROOT / "servers" / "sqlite" / "Dockerfile").read_text()
    python = next(line.split("=", 1)[1] for line in text.splitlines() if line.startswith("ARG PYTHON="))
    image = f"docker.io/library/python:{python}-slim"
    if subprocess.run([engine, "image", "exists", image], capture_output=True).returncode != 0:
        pulled = subprocess.run([engine, "pull", image], capture_output=True, text=True, timeout=600)
        if pulled.returncode != 0:
            pytest.skip(f"{engine} cannot pull the base image {image}: {pulled.stderr.strip()[-300:]}")
    ran = subprocess.run([engine, "run", "--rm", image, "python", "-c", "0"], capture_output=True, text=True)
    if ran.returncode != 0:
        pytest.skip(f"{engine} cannot run containers here: {ran.stderr.strip()[-300:]}")
    return image


def test_sqlite_image_answers_initialize_on_stdin(tmp_path: Path) -> None:
    engine = _engine()
    _base_image(engine)
    tag = "localhost/plainmcp-docs-test/sqlite"
    built = subprocess.run(
        [engine, "build", "-f", "servers/sqlite/Dockerfile", "-t", tag, "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    try:
        answered = stdio_handshake([engine, "run", "-i", "--rm", tag], env=dict(os.environ), cwd=tmp_path, timeout=60)
    except HandshakeError as error:
        raise AssertionError(f"the image did not answer: {error}") from error
    finally:
        subprocess.run([engine, "rmi", "-f", tag], capture_output=True)
    assert answered["initialize"]["serverInfo"]["name"] == "plainmcp-sqlite"
    assert {tool["name"] for tool in answered["tools"]} >= {"query", "list_tables"}
