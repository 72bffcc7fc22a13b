"""Every server follows the one template the root README's "Writing a server" sets out (see its checklist).

The shape is checked, not the content: the modules a reader expects, where the version comes from, how the
configuration is built and refused, what `build_server` takes, that handlers take a `Context`, that a server
imports only the core's public API, and that no function is longer than a screen.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.metadata
import inspect
import subprocess
import sys
import tomllib
import typing
from pathlib import Path

import plainmcp
import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVERS = sorted(path.parent.name for path in ROOT.glob("servers/*/pyproject.toml"))
#: The fewest arguments each server starts with (the filesystem needs a directory; it is filled in below).
MINIMAL_ARGS = {"filesystem": ["{tmp}"]}
#: A value each server's Config refuses, to see the refusal reported by argparse (one line, exit 2).
REFUSED = {
    "filesystem": ["--allow-delete", "{tmp}"],
    "prompts": ["--max-files", "0"],
    "sqlite": ["--timeout", "0"],
    "weather": ["--max-response-bytes", "10"],
}
MAX_FUNCTION_LINES = 80


def _package(name: str):
    return importlib.import_module(f"plainmcp_{name}")


def _sources(name: str) -> list[Path]:
    return sorted((ROOT / "servers" / name / "src" / f"plainmcp_{name}").rglob("*.py"))


@pytest.mark.parametrize("name", SERVERS)
def test_server_has_the_template_modules(name: str) -> None:
    package = ROOT / "servers" / name / "src" / f"plainmcp_{name}"
    missing = [
        module
        for module in ("__init__.py", "__main__.py", "config.py", "server.py")
        if not (package / module).is_file()
    ]
    assert not missing, f"plainmcp_{name} lacks {missing}"


@pytest.mark.parametrize("name", SERVERS)
def test_version_is_written_once_and_costs_nothing_to_read(name: str) -> None:
    # Written once, as a literal in __init__.py, which pyproject.toml reads ([tool.hatch.version]):
    # importlib.metadata would cost every start-up ~14 ms. What pip installed must say the same.
    directory = ROOT / "servers" / name
    project = tomllib.loads((directory / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["hatch"]["version"]["path"] == f"src/plainmcp_{name}/__init__.py"
    assert _package(name).__version__ == importlib.metadata.version(f"plainmcp-{name}")
    sources = "".join(path.read_text() for path in (directory / "src" / f"plainmcp_{name}").glob("*.py"))
    assert "importlib.metadata" not in sources


@pytest.mark.parametrize("name", SERVERS)
def test_config_is_a_frozen_dataclass_built_from_the_command_line(name: str, tmp_path: Path) -> None:
    config_module = importlib.import_module(f"plainmcp_{name}.config")
    config_class = config_module.Config
    assert dataclasses.is_dataclass(config_class) and config_class.__dataclass_params__.frozen
    assert callable(getattr(config_class, "add_arguments", None)), "Config.add_arguments(parser)"
    assert isinstance(inspect.getattr_static(config_class, "from_args"), classmethod), "Config.from_args(args)"
    parser = plainmcp.server_arguments(f"plainmcp-{name}", env_prefix=f"PLAINMCP_{name.upper()}")
    config_class.add_arguments(parser)
    args = parser.parse_args([arg.format(tmp=tmp_path) for arg in MINIMAL_ARGS.get(name, [])])
    assert isinstance(config_class.from_args(args), config_class)


@pytest.mark.parametrize("name", SERVERS)
def test_build_server_takes_config_and_deps(name: str, tmp_path: Path) -> None:
    build_server = _package(name).build_server
    parameters = list(inspect.signature(build_server).parameters.values())
    assert [parameter.name for parameter in parameters] == ["config", "deps"], "build_server(config, deps=None)"
    assert parameters[1].default is None


@pytest.mark.parametrize("name", SERVERS)
def test_tool_handlers_take_a_context(name: str, tmp_path: Path) -> None:
    config_class = importlib.import_module(f"plainmcp_{name}.config").Config
    parser = plainmcp.server_arguments(f"plainmcp-{name}", env_prefix=f"PLAINMCP_{name.upper()}")
    config_class.add_arguments(parser)
    config = config_class.from_args(parser.parse_args([a.format(tmp=tmp_path) for a in MINIMAL_ARGS.get(name, [])]))
    server = _package(name).build_server(config)
    assert server.version == _package(name).__version__
    untyped = []
    for tool in server.tools.values():
        hints = typing.get_type_hints(tool.handler)
        first = next(iter(inspect.signature(tool.handler).parameters))
        if hints.get(first) is not plainmcp.Context:
            untyped.append(tool.name)
    assert not untyped, f"handlers whose first parameter is not `ctx: Context`: {untyped}"


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refused_configuration_is_reported_by_the_parser(name: str, tmp_path: Path) -> None:
    argv = [arg.format(tmp=tmp_path) for arg in REFUSED[name]]
    result = subprocess.run(
        [sys.executable, "-m", f"plainmcp_{name}", *argv],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    assert result.returncode == 2, result.stderr
    assert f"plainmcp-{name}: error: " in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("name", SERVERS)
def test_server_imports_only_the_public_api_of_the_core(name: str) -> None:
    outside = []
    for path in _sources(name):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "plainmcp":
                if node.module != "plainmcp":
                    outside.append(f"{path.name}: from {node.module} import ...")
                outside += [f"{path.name}: {alias.name}" for alias in node.names if alias.name not in plainmcp.__all__]
            elif isinstance(node, ast.Import):
                outside += [
                    f"{path.name}: import {alias.name}" for alias in node.names if alias.name.startswith("plainmcp.")
                ]
    assert not outside, f"plainmcp_{name} uses names outside plainmcp.__all__: {outside}"


@pytest.mark.parametrize("name", SERVERS)
def test_no_attribute_is_stuck_onto_the_server(name: str) -> None:
    """Tests and embedders reach a server's parts through `deps`, not through attributes added to `Server`."""
    stuck = []
    for path in _sources(name):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(target.value, ast.Name)
                        and target.value.id == "server"
                    ):
                        stuck.append(f"{path.name}:{node.lineno} server.{target.attr}")
    assert not stuck, stuck


@pytest.mark.parametrize("name", SERVERS)
def test_no_function_is_longer_than_a_screen(name: str) -> None:
    long = []
    for path in _sources(name):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, long
