"""Issue 14, item 2: each server's server.json for the MCP Registry, its README marker, and one version everywhere."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import tomllib
from pathlib import Path

import jsonschema
import pytest

from .offline import ROOT, SERVERS, initialize, project_version, server_args
from .registry_schema import SERVER_JSON

OWNER = "io.github.plainmcp"  # the GitHub owner the registry namespace is verified against
VALIDATOR = jsonschema.Draft202012Validator(SERVER_JSON)
BIN = Path(sys.executable).parent


def _server_json(name: str) -> dict:
    return json.loads((ROOT / "servers" / name / "server.json").read_text())


def _project(name: str) -> dict:
    return tomllib.loads((ROOT / "servers" / name / "pyproject.toml").read_text())["project"]


@pytest.mark.parametrize("name", SERVERS)
def test_server_json_follows_the_registry_schema(name: str) -> None:
    document = _server_json(name)
    errors = [
        f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in VALIDATOR.iter_errors(document)
    ]
    assert not errors, errors
    assert document["name"] == f"{OWNER}/{name}"
    (package,) = document["packages"]
    assert (package["registryType"], package["identifier"]) == ("pypi", _project(name)["name"])
    assert package["transport"] == {"type": "stdio"}
    assert document["repository"]["subfolder"] == f"servers/{name}"


@pytest.mark.parametrize("name", SERVERS)
def test_readme_carries_the_mcp_name_marker(name: str) -> None:
    # The registry verifies a PyPI package by this line in its description, i.e. the README the wheel ships.
    assert _project(name)["readme"] == "README.md"
    readme = (ROOT / "servers" / name / "README.md").read_text()
    assert readme.count("mcp-name:") == 1
    assert f"<!-- mcp-name: {OWNER}/{name} -->\n" in readme


@pytest.mark.parametrize("name", SERVERS)
def test_one_version_in_pyproject_server_json_and_the_running_server(name: str, tmp_path: Path) -> None:
    version = project_version(ROOT / "servers" / name)
    document = _server_json(name)
    assert document["version"] == version
    assert document["packages"][0]["version"] == version
    command = str(BIN / f"plainmcp-{name}")
    answered = initialize([command, *server_args(name, tmp_path)], env=None, cwd=tmp_path)
    assert answered["serverInfo"]["version"] == version  # the version the code itself reports
    printed = subprocess.run([command, "--version"], capture_output=True, text=True, check=True).stdout
    assert printed.split() == [f"plainmcp-{name}", version]


@pytest.mark.parametrize("name", SERVERS)
def test_server_json_names_only_real_options(name: str) -> None:
    help_text = subprocess.run(
        [str(BIN / f"plainmcp-{name}"), "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "200", "PATH": str(BIN)},
    ).stdout
    (package,) = _server_json(name)["packages"]
    for argument in package.get("packageArguments", []):
        if argument["type"] == "named":
            assert f"{argument['name']} " in help_text, argument
    for variable in package.get("environmentVariables", []):
        assert variable["name"] in help_text, variable


@pytest.mark.parametrize(
    "breakage",
    [
        ("description", "x" * 101),
        ("name", "plainmcp-sqlite"),
        ("version", "^0.1.0"),
        ("packages/0/version", "latest"),
        ("packages/0/transport", None),
        ("packages/0/packageArguments", [{"type": "positional", "description": "no valueHint"}]),
    ],
)
def test_the_schema_rejects_what_the_registry_rejects(breakage: tuple[str, object]) -> None:
    path, value = breakage
    document = copy.deepcopy(_server_json("sqlite"))
    *parents, last = path.split("/")
    target = document
    for part in parents:
        target = target[int(part) if part.isdigit() else part]
    if value is None:
        del target[last]
    else:
        target[last] = value
    assert not VALIDATOR.is_valid(document)
